"""cocotb tests of the PCORE array (run through tests/test_pcore_array.py or
``tsoc bench pcore``).

The configuration comes from ``TSOC_PCORE_CONFIG`` (JSON of SoCConfig
fields); every kernel result is compared bit-exact with the numpy reference
and the whole private image with the instruction-set simulator.
"""

import json
import os

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

import cocotb

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.pcore_isa import ISA_VERSION
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.pcore import workloads
from tensorsoc.verification.pcore.iss import PcoreISS
from tensorsoc.verification.pcore.bfm import PcoreArrayBFM


def _config():
    return SoCConfig(**json.loads(os.environ.get("TSOC_PCORE_CONFIG", "{}")))


async def _setup(dut):
    bfm = PcoreArrayBFM(dut, _config())
    await bfm.start()
    return bfm


async def run_workload(bfm, wl, process, np_=0, nt=0, via_mcore=False):
    """Load, run and read back one workload; returns a dict of results.
    ``via_mcore``: the program over the Wishbone slave and the kernel started
    with the FUNC and START CSRs, as the MCORE does; else through the
    TensorEngine's ports."""
    prog = wl.assemble()
    if via_mcore:
        await bfm.wb_load_program(prog.words)
    else:
        await bfm.te_load_program(prog.words)
    await bfm.write_private(process, wl.private)
    await bfm.write_shared(process, wl.shared)
    func = isa.function_word(wl.entry, np_, nt)
    if via_mcore:
        await bfm.csr_write("func", func)
        await bfm.csr_write("start", process)
        while (await bfm.csr_read("status")) != 0:
            pass
    else:
        await bfm.te_start(func, process)
        await bfm.wait_idle()
    counters = await bfm.counters()
    hw = await bfm.read_private(process)

    iss = PcoreISS(wl.config, prog.words)
    iss.private[process] = wl.private
    iss.shared[process] = wl.shared
    stats = iss.run(func, process)
    return dict(hw=hw, iss=iss.private[process], counters=counters, stats=stats)


def _compare(wl, r, check_reference=True):
    errors = []
    if check_reference:
        errors += wl.mismatches(r["hw"])
    bad = np.argwhere(r["hw"] != r["iss"])
    if len(bad):
        p, t, i = bad[0]
        errors.append(f"{wl.name}: {len(bad)} private word(s) differ from the ISS; first pcore {p} "
                      f"thread {t} element {i}: hw {r['hw'][p, t, i]}, iss {r['iss'][p, t, i]}")
    s, c = r["stats"], r["counters"]
    for k in ("cycles", "vops", "macs"):
        if getattr(s, k) != c[k]:
            errors.append(f"{wl.name}: hardware {k.upper()}={c[k]}, ISS predicts {getattr(s, k)}")
    return errors


@cocotb.test()
async def test_mcore_control(dut):
    """The MCORE's side: the CSRs (constants, FUNC/START/STATUS, counters),
    instruction memory write and read-back over Wishbone, a kernel started by
    START, and a START written while busy: queued (STATUS.pending), then taken."""
    bfm = await _setup(dut)
    c = bfm.config
    info = await bfm.csr_read("info")
    assert info == c.np | (c.nt << 8) | (c.vw << 16) | (ISA_VERSION << 24), hex(info)
    assert await bfm.csr_read("meminfo") == c.pcore_private_words | (c.pcore_shared_words << 16)
    assert await bfm.csr_read("imeminfo") == bfm.imem_words
    assert await bfm.csr_read("status") == 0
    rng = np.random.default_rng(7)
    words = [int(x) for x in rng.integers(0, 1 << 32, size=16, dtype=np.uint64)]
    await bfm.wb_load_program(words, base=100)
    back = [await bfm.wb_access(100 + i) for i in range(16)]
    assert back == words
    await bfm.csr_write("func", 0x0201_0064)
    assert await bfm.csr_read("func") == 0x0201_0064
    wl = workloads.eltwise_add(c, rng=np.random.default_rng(8), N=32)
    r = await run_workload(bfm, wl, process=1, via_mcore=True)
    errors = _compare(wl, r)
    assert not errors, "\n".join(errors)

    # Queued start: the same kernel on both process spaces, the second START
    # written while the first kernel runs.
    wl0 = workloads.eltwise_add(c, rng=np.random.default_rng(9), N=32)
    wl1 = workloads.eltwise_add(c, rng=np.random.default_rng(10), N=32)
    for p, w in ((0, wl0), (1, wl1)):
        await bfm.write_private(p, w.private)
        await bfm.write_shared(p, w.shared)
    await bfm.csr_write("func", isa.function_word(wl0.entry))
    await bfm.csr_write("start", 1)
    assert await bfm.csr_read("status") in (0b100, 0b010), "START not taken"
    await bfm.csr_write("start", 0)
    status = await bfm.csr_read("status")
    assert status == 0b110, f"STATUS {status:#05b}: want busy on process 1 and a start pending"
    seen = set()
    while status:
        seen.add(status)
        status = await bfm.csr_read("status")
    assert 0b001 in seen, f"the queued kernel never ran on process 0 (STATUS seen: {sorted(seen)})"
    for p, w in ((0, wl0), (1, wl1)):
        errors += w.mismatches(await bfm.read_private(p))
    assert not errors, "\n".join(errors)


@cocotb.test()
async def test_kernels(dut):
    """Every CNN kernel, data laid out as the TensorEngine lays it out."""
    bfm = await _setup(dut)
    errors = []
    for n, wl in enumerate(workloads.standard(bfm.config)):
        r = await run_workload(bfm, wl, process=n % 2)
        e = _compare(wl, r)
        dut._log.info("%s %s: %d cycles, %s", wl.name, wl.defines, r["counters"]["cycles"],
                      "ok" if not e else "MISMATCH")
        errors += e
    assert not errors, "\n".join(errors)


@cocotb.test()
async def test_lockstep_limits(dut):
    """EXE_LOCKSTEP(func, np, nt): inactive PCOREs and threads keep their data,
    fewer threads than the pipeline depth run with bubbles."""
    bfm = await _setup(dut)
    c = bfm.config
    errors = []
    for np_, nt in ((max(1, c.np // 2), 3), (1, 1), (c.np, max(1, c.nt - 1))):
        wl = workloads.fit(lambda **k: workloads.convolution(c, rng=np.random.default_rng(20 + nt), **k),
                           6, 6, BIAS=1, BN=1, RELU=0)
        r = await run_workload(bfm, wl, process=1, np_=np_, nt=nt)
        errors += _compare(wl, r, check_reference=False)
        # the active part matches the reference, the rest is the input unchanged
        exp = wl.expected["out"]
        v = wl.var("out")
        got = r["hw"][:, :, v.addr:v.addr + v.size]
        if not np.array_equal(got[:np_, :nt], exp[:np_, :nt]):
            errors.append(f"np={np_} nt={nt}: active outputs differ from the reference")
        untouched = np.ones(got.shape[:2], bool)
        untouched[:np_, :nt] = False
        if not np.array_equal(got[untouched], wl.private[:, :, v.addr:v.addr + v.size][untouched]):
            errors.append(f"np={np_} nt={nt}: an inactive PCORE or thread was written")
    assert not errors, "\n".join(errors)


@cocotb.test()
async def test_process_spaces(dut):
    """While a kernel runs on one process space the TensorEngine moves data in
    the other (masked writes, some broadcast to several PCOREs, and reads in
    the same clocks, read-back) and is held off the busy one on both
    channels."""
    bfm = await _setup(dut)
    c = bfm.config
    d = dut
    wl = workloads.fit(lambda **k: workloads.convolution(c, rng=np.random.default_rng(30), **k), 6, 6)
    prog = wl.assemble()
    await bfm.te_load_program(prog.words)
    await bfm.write_private(0, wl.private)
    await bfm.write_shared(0, wl.shared)
    # Known contents in process 1, then masked scattered writes during the kernel.
    rng = np.random.default_rng(31)
    priv1 = rng.integers(-32768, 32768, size=(c.np, c.nt, c.pcore_private_words), dtype=np.int64)
    shr1 = rng.integers(-32768, 32768, size=(c.np, c.pcore_shared_words), dtype=np.int64)
    await bfm.write_private(1, priv1)
    await bfm.write_shared(1, shr1)
    await bfm.te_start(isa.function_word(wl.entry), 0)
    # The busy process space refuses commands on both channels (a refused
    # write to its shared memory would corrupt the kernel's operands).
    for ch in ("rd", "wr"):
        getattr(d, f"te_{ch}_valid").value = 1
        getattr(d, f"te_{ch}_process").value = 0
        getattr(d, f"te_{ch}_shared").value = 1
        getattr(d, f"te_{ch}_addr").value = 0
    d.te_wdata.value = (1 << (16 * c.vw)) - 1
    d.te_wmask.value = (1 << c.vw) - 1
    await ReadOnly()
    assert int(d.busy.value) == 1 and int(d.te_rd_ready.value) == 0 and int(d.te_wr_ready.value) == 0
    await RisingEdge(bfm.clk)
    d.te_rd_valid.value = 0
    d.te_wr_valid.value = 0
    # Writes to the lower half of every memory of process 1, reads of the
    # upper half in the same clocks.
    cmds = []
    expected = []
    vw = c.vw
    for _ in range(300):
        shared = int(rng.integers(0, 2))
        p, t = int(rng.integers(0, c.np)), int(rng.integers(0, c.nt))
        words = (c.pcore_shared_words if shared else c.pcore_private_words) // vw
        a = int(rng.integers(0, words // 2))
        lanes = rng.integers(-32768, 32768, size=vw, dtype=np.int64)
        mask = int(rng.integers(0, 1 << vw))
        # a third of the writes broadcast to several PCOREs (te.wr_bcast; wr_pcore ignored)
        bcast = int(rng.integers(1, 1 << c.np)) if rng.random() < 1 / 3 else 0
        cmds.append((1, 1, shared, p, t, a, lanes, mask, bcast))
        for q in ([q for q in range(c.np) if bcast >> q & 1] if bcast else [p]):
            target = shr1[q, a * vw:(a + 1) * vw] if shared else priv1[q, t, a * vw:(a + 1) * vw]
            for i in range(vw):
                if mask >> i & 1:
                    target[i] = lanes[i]
        shared = int(rng.integers(0, 2))
        p, t = int(rng.integers(0, c.np)), int(rng.integers(0, c.nt))
        words = (c.pcore_shared_words if shared else c.pcore_private_words) // vw
        a = int(rng.integers(words // 2, words))
        cmds.append((0, 1, shared, p, t, a, None, 0))
        expected.append(list(shr1[p, a * vw:(a + 1) * vw] if shared else priv1[p, t, a * vw:(a + 1) * vw]))
    reads, clocks = await bfm.te_transfer(cmds)
    await ReadOnly()
    still_busy = int(d.busy.value)
    await RisingEdge(bfm.clk)
    assert clocks <= len(cmds) // 2 + 4, f"{len(cmds) // 2} writes and reads took {clocks} clocks"
    assert reads == expected, "reads during the writes differ from the memory contents"
    assert still_busy, "the kernel finished before the overlapped transfer: test proves nothing"
    await bfm.wait_idle()
    assert np.array_equal(await bfm.read_private(1), priv1)
    assert np.array_equal(await bfm.read_shared(1), shr1)
    errors = wl.mismatches(await bfm.read_private(0))
    assert not errors, "\n".join(errors)


@cocotb.test(skip="TSOC_PCORE_BENCH_JSON" not in os.environ)
async def bench(dut):
    """Cycle counts of the bench workloads (written to TSOC_PCORE_BENCH_JSON)."""
    bfm = await _setup(dut)
    rows = []
    errors = []
    for wl in workloads.bench_set(bfm.config):
        r = await run_workload(bfm, wl, process=0)
        errors += _compare(wl, r)
        rows.append(dict(name=wl.name, defines=wl.defines, useful_macs=wl.useful_macs,
                         vector_outputs=wl.vector_outputs, **r["counters"]))
    with open(os.environ["TSOC_PCORE_BENCH_JSON"], "w") as f:
        json.dump(dict(config=bfm.config.as_dict(), rows=rows, errors=errors), f, indent=1)
    assert not errors, "\n".join(errors)


@cocotb.test()
async def test_random_programs(dut):
    """Random instruction sequences: hardware and ISS stay identical (private
    memory, registers, accumulators, flags and counters) across many kernels."""
    from tensorsoc.verification.pcore.random_programs import draw
    bfm = await _setup(dut)
    c = bfm.config
    rng = np.random.default_rng(int(os.environ.get("TSOC_PCORE_SEED", "99")))
    count = int(os.environ.get("TSOC_PCORE_RANDOM_PROGRAMS", "24"))
    iss = PcoreISS(c)
    for proc in (0, 1):
        iss.private[proc] = rng.integers(-32768, 32768, size=iss.private[proc].shape, dtype=np.int64)
        iss.shared[proc] = rng.integers(-32768, 32768, size=iss.shared[proc].shape, dtype=np.int64)
        await bfm.write_private(proc, iss.private[proc])
        await bfm.write_shared(proc, iss.shared[proc])
    # Registers, accumulators and flags persist across kernels (and tests):
    # clear them on both sides first.
    zero = isa.Operand()
    clear = [isa.encode_vector("mov", isa.Operand(isa.K_REG, r), zero) for r in range(isa.NUM_VREGS)]
    clear += [isa.encode_vector("accset", a=zero), isa.encode_vector("cmpgt", a=zero, b=zero),
              isa.encode_scalar("halt")]
    await bfm.te_load_program(clear)
    await bfm.te_start(isa.function_word(0), 0)
    await bfm.wait_idle()
    iss.load(clear)
    iss.run(isa.function_word(0), 0)
    errors = []
    for n in range(count):
        proc = n % 2
        np_ = int(rng.integers(1, c.np + 1)) if n % 3 == 2 else 0
        nt = int(rng.integers(1, c.nt + 1)) if n % 3 == 2 else 0
        # every third program: accumulator chains with 1 or 2 threads (the bypass, the stalls)
        chains = n % 3 == 1
        if chains:
            nt = int(rng.integers(1, min(c.nt, isa.CHAIN_MAX_NT) + 1))
        words, func = draw(rng, c, iss, proc, np_=np_, nt=nt, chains=chains)
        iss.load(words)
        stats = iss.run(func, proc)
        await bfm.te_load_program(words)
        await bfm.te_start(func, proc)
        await bfm.wait_idle()
        counters = await bfm.counters()
        hw = await bfm.read_private(proc)
        bad = np.argwhere(hw != iss.private[proc])
        if len(bad):
            p, t, i = bad[0]
            errors.append(f"program {n} (np={np_} nt={nt}): {len(bad)} words differ; first pcore {p} thread {t} "
                          f"element {i}: hw {hw[p, t, i]}, iss {iss.private[proc][p, t, i]}\n"
                          + "\n".join(f"  {k:3d} {isa.disassemble(w)}" for k, w in enumerate(words)))
            iss.private[proc] = hw     # resynchronise to keep looking
        for k in ("cycles", "vops", "macs"):
            if getattr(stats, k) != counters[k]:
                errors.append(f"program {n}: hardware {k}={counters[k]}, ISS {getattr(stats, k)}")
    assert not errors, "\n".join(errors[:5])
