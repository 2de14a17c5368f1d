"""cocotb: the instruction fetch (cores/tensor_engine/fetch.py) on the
TensorEngine + real PCORE array top.  Each accelerator layer program of a
model runs twice: fed by the bench one word per clock (as `tsoc bench
layers`), then with its kernel code and its instruction words read from
the bench DDR by the fetch's DMA (kernel into the PCORE instruction memory,
program into the queue, sharing DDR with the engine's own master), its
result cleared in between.  Both runs must equal the golden model bit for
bit; the clocks of both are reported.

Environment: TSOC_LAYER_MODEL (YAML file), TSOC_LAYER_JSON (results file)."""

import json
import os

import numpy as np

import cocotb
from cocotb.triggers import RisingEdge

from tensorsoc.sw import te_trace
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.model import accel, layout as L
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.golden import cnn
from tensorsoc.verification.te.bfm import TEBench, _bytes_to_words, _words_to_bytes, load_kernel
from tensorsoc.verification.te.test_engine import _config, DDR_BYTES
from tensorsoc.verification.te.test_layers import (_run_until_callback, operand_values, operands_ddr, place,
                                         until_callback)

TARGET_QUEUE, TARGET_IMEM = 0, 1


async def fetch(dut, byte_addr, n, target):
    """Start a fetch of ``n`` words at ``byte_addr``."""
    dut.fetch_address.value = byte_addr
    dut.fetch_length.value = n
    dut.fetch_target.value = target
    dut.fetch_start.value = 1
    await RisingEdge(dut.sys_clk)
    dut.fetch_start.value = 0


async def wait_fetch(dut, timeout=100_000):
    n = 0
    await RisingEdge(dut.sys_clk)
    while int(dut.fetch_busy.value):
        await RisingEdge(dut.sys_clk)
        n += 1
        assert n < timeout, "fetch still busy"
    return n


async def _fetched_until_callback(bench, addr, n, tag, timeout=5_000_000):
    """Fetch the program (``n`` words at ``addr``) into the queue; the clocks
    from the start to the CALLBACK ``tag``."""
    def fetched_all():
        assert not int(bench.dut.fetch_busy.value), "CALLBACK before the program's last word was fetched"

    return await until_callback(bench, lambda: fetch(bench.dut, addr, n, TARGET_QUEUE), tag, timeout, fetched_all)


@cocotb.test()
async def fetched_layer_programs(dut):
    config = _config()
    model = load_model(os.environ["TSOC_LAYER_MODEL"], config)
    golden = cnn.run(model)
    offsets, table, data = place(model)
    # Each kernel at address 0: the fetch writes the instruction memory
    # from word 0 (the SoC loads resident kernels with the model instead).
    progs = accel.plan(model, config, lambda t: offsets[t], tanh_table_addr=table, data=data, resident=False)
    blob = data.bytes()
    vals = operand_values(model, golden)
    # The programs (kernel code, then the instruction words) after the arranged constants.
    compute = [op for op in model.ops if op.kind != "stream"]
    pos = -(-(data.base + len(blob)) // 64) * 64
    placed = {}
    for (index, prog), op in zip(sorted(progs.items()), compute):
        if isinstance(prog, str):
            continue
        instrs = [isa.Log(on=1)] + prog.instrs[:-1] + [isa.Log(on=0), prog.instrs[-1]]
        words = [w for i in instrs for w in isa.encode(i)]
        placed[index] = (pos, list(prog.code), pos + 4 * len(prog.code), words)
        pos += 4 * (len(prog.code) + len(words))
    assert pos <= DDR_BYTES, f"the model and its programs need {pos} bytes of DDR, the bench has {DDR_BYTES}"

    bench = TEBench(dut, config, DDR_BYTES)
    dut.imem_we.value = 0
    dut.fetch_start.value = 0
    await bench.start()
    ddr = operands_ddr(model, vals, offsets, table, data)
    for code_addr, code, te_addr, words in placed.values():
        ddr[code_addr:code_addr + 4 * len(code)] = np.asarray(code, dtype="<u4").view(np.uint8)
        ddr[te_addr:te_addr + 4 * len(words)] = np.asarray(words, dtype="<u4").view(np.uint8)
    bench.write_words("te_ddr", _bytes_to_words(ddr[:pos]))
    mem = dut.te_ddr

    def result(op):
        got = np.frombuffer(bytes(_words_to_bytes(bench.read_words("te_ddr", pos // 4))), dtype="<i2")
        o = offsets[op.res] // 2
        return got[o:o + op.res.elements]

    results = []
    for (index, prog), op in zip(sorted(progs.items()), compute):
        if index not in placed:
            continue
        code_addr, code, te_addr, words = placed[index]
        want = L.to_memory(vals[op.res], op.res.layout).astype(np.int16)
        row = {"layer": op.layer, "kind": op.kind, "te_words": len(words), "code_words": len(code)}
        # 1. Fed by the bench, a word per clock (the engine-only time).
        await load_kernel(dut, code)
        row["clocks_pushed"] = await _run_until_callback(bench, words, op.layer)
        row["errors_pushed"] = await bench.errors()
        row["trace_pushed"] = len(te_trace.decode(await bench.trace_words()))
        row["bit_exact_pushed"] = bool(np.array_equal(result(op), want))
        # 2. Result cleared, the kernel code and the program fetched by DMA.
        o = offsets[op.res]
        for w in range(o // 4, -(-(o + 2 * op.res.elements) // 4)):
            mem[w].value = 0
        for i in range(len(code)):      # a stale kernel would not go unnoticed
            dut.imem_we.value = 1
            dut.imem_adr.value = i
            dut.imem_dat_w.value = 0
            await RisingEdge(dut.sys_clk)
        dut.imem_we.value = 0
        await fetch(dut, code_addr, len(code), TARGET_IMEM)
        row["clocks_kernel_fetch"] = await wait_fetch(dut) + 1
        row["clocks_fetched"] = await _fetched_until_callback(bench, te_addr, len(words), op.layer)
        row["errors_fetched"] = await bench.errors()
        row["trace_fetched"] = len(te_trace.decode(await bench.trace_words()))
        row["bit_exact_fetched"] = bool(np.array_equal(result(op), want))
        results.append(row)
        dut._log.info(f"layer {op.layer} {op.kind}: {len(words)} words, pushed {row['clocks_pushed']} clocks, "
                      f"fetched {row['clocks_fetched']} clocks (kernel {len(code)} words in "
                      f"{row['clocks_kernel_fetch']}), bit-exact {row['bit_exact_pushed']}/{row['bit_exact_fetched']}")
    with open(os.environ["TSOC_LAYER_JSON"], "w") as f:
        json.dump({"model": os.environ["TSOC_LAYER_MODEL"], "layers": results}, f, indent=1)
    bad = [r["layer"] for r in results if r["errors_pushed"] or r["errors_fetched"] or not r["bit_exact_pushed"]
           or not r["bit_exact_fetched"] or r["trace_pushed"] != r["trace_fetched"]]
    assert results and not bad, f"layers {bad}: differ from the golden model or the engine flagged an error"
