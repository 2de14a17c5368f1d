"""cocotb: a model's accelerator layer programs (sw/model/accel.py) on the
TensorEngine + the real PCORE array, without the MCORE.

For each compute op with a program: its operands (the golden model's values)
go into the bench DDR by the back door, the kernel code into the PCORE
instruction memory, the TensorEngine words into the queue (one per clock, as
fast as the queue takes them), and the clocks until the op's CALLBACK are
counted.  The result must equal the golden model bit for bit and the engine
must report no error.  The activity trace of each layer (LOG_ON around the
program) is kept, so the engine-side cost of every transfer and kernel is
visible.  This separates the accelerator's own cycles from the firmware's
(`make sim` measures both together through RTimings).

Environment: TSOC_LAYER_MODEL (YAML file), TSOC_LAYER_JSON (results file).
Run by `tsoc bench layers` (verification/te/layers.py)."""

import json
import os

import numpy as np

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from tensorsoc.sw import te_trace
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.model import accel, layout as L, roofline
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.golden import cnn
from tensorsoc.verification.te.bfm import TEBench, _bytes_to_words, _words_to_bytes, load_kernel
from tensorsoc.verification.te.test_engine import _config, DDR_BYTES


def place(model):
    """Byte offsets of every tensor in the bench DDR (64-byte aligned), of the
    tanh table after them and of the programs' arranged constants (a DataBlob
    filled by accel.plan) after the table."""
    offsets, pos = {}, 64
    for t in model.tensors:
        offsets[t] = pos
        pos += -(-t.nbytes // 64) * 64
    return offsets, pos, accel.DataBlob(pos + 2 * isa.SPU_LOOKUP_SIZE)


def operand_values(model, golden):
    """Every tensor's value the programs read or must produce: the golden
    model's fixed-point values, and the raw constants it does not compute."""
    vals = dict(golden.fixed)
    for t in model.tensors:
        if t.raw is not None and t not in vals:
            vals[t] = t.raw
    return vals


def operands_ddr(model, vals, offsets, table, data):
    """The bench DDR image (DDR_BYTES) of :func:`place`: every tensor with a
    value at its offset, the tanh table, the programs' arranged constants."""
    ddr = np.zeros(DDR_BYTES, dtype=np.uint8)

    def put(offset, values):
        b = np.asarray(values, dtype="<i2").view(np.uint8)
        ddr[offset:offset + b.size] = b

    for t in model.tensors:
        if t in vals:
            put(offsets[t], L.to_memory(vals[t], t.layout))
    put(table, cnn.tanh_table(model.frac_bits))
    blob = data.bytes()
    ddr[data.base:data.base + len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    return ddr


async def until_callback(bench, send, tag, timeout=5_000_000, at_callback=None):
    """``await send()`` (what gives the engine its program); the clocks from
    then to the CALLBACK ``tag``.  ``at_callback()``: checks made when it
    arrives, before it is popped."""
    d = bench.dut
    t0 = get_sim_time("ns")
    await send()
    n = 0
    while not int(d.cb_valid.value):
        await RisingEdge(bench.clk)
        n += 1
        assert n < timeout, f"no CALLBACK {tag} after {timeout} clocks"
    clocks = int((get_sim_time("ns") - t0) // 10)
    got = int(d.cb_tag.value) & 0x7FFFFFFF
    if at_callback is not None:
        at_callback()
    d.cb_pop.value = 1
    await RisingEdge(bench.clk)
    d.cb_pop.value = 0
    await bench.wait_idle()
    assert got == tag, f"CALLBACK {got}, expected {tag}"
    return clocks


async def _run_until_callback(bench, words, tag, timeout=5_000_000):
    """Push ``words``; the clocks from the first push to the CALLBACK ``tag``."""
    return await until_callback(bench, lambda: bench.push(words), tag, timeout)


@cocotb.test()
async def layer_programs(dut):
    config = _config()
    model = load_model(os.environ["TSOC_LAYER_MODEL"], config)
    golden = cnn.run(model)
    offsets, table, data = place(model)
    progs = accel.plan(model, config, lambda t: offsets[t], tanh_table_addr=table, data=data)
    blob = data.bytes()
    assert data.base + len(blob) <= DDR_BYTES, \
        f"the model needs {data.base + len(blob)} bytes of DDR, the bench has {DDR_BYTES}"
    vals = operand_values(model, golden)

    bench = TEBench(dut, config, DDR_BYTES)
    dut.imem_we.value = 0
    await bench.start()
    bench.write_words("te_ddr", _bytes_to_words(operands_ddr(model, vals, offsets, table, data)))

    results = []
    compute = [op for op in model.ops if op.kind != "stream"]
    for (index, prog), op in zip(sorted(progs.items()), compute):
        row = {"layer": op.layer, "kind": op.kind, "op": op.type_name, "result": op.res.name,
               "engine": "software" if isinstance(prog, str) else "accel"}
        if isinstance(prog, str):
            row["software"] = prog
            row["roofline"] = roofline.layer(op, config).as_dict()
            results.append(row)
            continue
        await load_kernel(dut, prog.code, prog.origin)
        instrs = [isa.Log(on=1)] + prog.instrs[:-1] + [isa.Log(on=0), prog.instrs[-1]]
        words = [w for i in instrs for w in isa.encode(i)]
        clocks = await _run_until_callback(bench, words, op.layer)
        errors = await bench.errors()
        records = te_trace.decode(await bench.trace_words())
        got = np.frombuffer(bytes(_words_to_bytes(bench.read_words("te_ddr", DDR_BYTES // 4))), dtype="<i2")
        o = offsets[op.res] // 2
        got = got[o:o + op.res.elements]
        want = L.to_memory(vals[op.res], op.res.layout).astype(np.int16)
        peak = config.np * config.vw
        row.update(clocks=clocks, macs=prog.macs, passes=prog.passes, te_words=len(words),
                   macs_per_clock=prog.macs / clocks, of_peak=prog.macs / clocks / peak,
                   errors=errors, bit_exact=bool(np.array_equal(got, want)),
                   transfers=sum(r.name == "XFER_START" for r in records),
                   vector_transfers=sum(r.name == "XFER_START" and r.vector for r in records),
                   trace=te_trace.text(records),
                   roofline=roofline.layer(op, config, cycles=clocks, program=prog).as_dict())
        results.append(row)
        dut._log.info(f"layer {op.layer} {op.kind}: {clocks} clocks, {row['macs_per_clock']:.2f} MACs/clock "
                      f"({100 * row['of_peak']:.1f}% of {peak}), {row['transfers']} transfers "
                      f"({row['vector_transfers']} vector), bit-exact {row['bit_exact']}")
    with open(os.environ["TSOC_LAYER_JSON"], "w") as f:
        json.dump({"model": os.environ["TSOC_LAYER_MODEL"], "np": config.np, "nt": config.nt, "vw": config.vw,
                   "layers": results}, f, indent=1)
    bad = [r["layer"] for r in results if "clocks" in r and (r["errors"] or not r["bit_exact"])]
    assert not bad, f"layers {bad}: result differs from the golden model or the engine flagged an error"
