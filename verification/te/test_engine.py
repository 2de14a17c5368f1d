"""cocotb tests of the stand-alone TensorEngine against the reference executor
(verification/golden/tensor_exec.py).  Run by tests/test_te_engine.py."""

import copy
import json
import os
import random

import cocotb
import numpy as np

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw import te_trace
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.golden.tensor_exec import Machine
from tensorsoc.verification.te.bfm import TEBench, expected_snapshot, diff_snapshots
from tensorsoc.verification.te.stimulus import Geometry, random_batch, spu_load, pcore_stride
DDR_BYTES = int(os.environ.get("TSOC_TE_DDR_BYTES", "4096"))


def _config():
    return SoCConfig().with_overrides(**json.loads(os.environ["TSOC_TE_CONFIG"]))


def _machine(config):
    return Machine.for_soc(config, ddr_bytes=DDR_BYTES)


def _randomise(machine, rng):
    g = np.random.default_rng(rng.getrandbits(32))
    machine.ddr[:] = g.integers(0, 256, machine.ddr.size)
    machine.scratch[:] = g.integers(0, 256, machine.scratch.size)
    machine.private[:] = g.integers(-32768, 32768, machine.private.shape)
    machine.shared[:] = g.integers(-32768, 32768, machine.shared.shape)
    machine.spu[:] = g.integers(-32768, 32768, machine.spu.size)


def _side(space, dtype, base, count, step=None, levels=None):
    es = isa.element_bytes(isa.SPACES[space][0], isa.DTYPES[dtype][0])
    lv = levels or [isa.Level(count=count, step=es if step is None else step, bound=count)]
    return isa.Side(space=isa.SPACES[space][0], dtype=isa.DTYPES[dtype][0], base=base, check_mask=1, levels=lv)


async def _setup(dut):
    config = _config()
    bench = TEBench(dut, config, DDR_BYTES)
    await bench.start()
    machine = _machine(config)
    return config, bench, machine


async def _check(bench, machine, what):
    got = bench.snapshot()
    d = diff_snapshots(got, expected_snapshot(machine))
    if d and os.environ.get("TSOC_TE_DUMP"):       # debugging: both images as .npz
        np.savez(os.environ["TSOC_TE_DUMP"], **{"got_" + k: v for k, v in got.items()},
                 **{"exp_" + k: v for k, v in expected_snapshot(machine).items()}, ddr_before=bench.ddr_before)
    assert not d, f"{what}: memory differs from the reference executor:\n{d}"
    errors = await bench.errors()
    assert errors == machine.errors, f"{what}: error flags {errors:#x}, executor {machine.errors:#x}"
    machine.errors = 0
    cbs = await bench.callbacks()
    exp = [tag for tag, _ in machine.callbacks]
    assert cbs == exp, f"{what}: callbacks {cbs}, executor {exp}"
    machine.callbacks.clear()
    exe = [(p, isa.build_kernel_func(a, n, t)) for p, a, n, t in machine.exe_calls]
    assert bench.starts == exe, f"{what}: kernel starts {bench.starts}, executor {exe}"
    bench.starts.clear()
    machine.exe_calls.clear()


def _cover(bins, instrs, config):
    """Tally what the random instructions exercised (asserted at the end)."""
    from tensorsoc.verification.golden.tensor_exec import side_elements
    for t in instrs:
        if not isinstance(t, isa.Transfer):
            bins.add(type(t).__name__)
            continue
        for role, side in (("src", t.src), ("dst", t.dst)):
            bins.add(f"{role} {isa.SPACE_NAMES[side.space]} {isa.DTYPE_NAMES[side.dtype]}")
            _, oob, _ = side_elements(side, config.te_ovl_bits)
            if oob.any():
                bins.add(f"{role} out of bound")
            if side.ovl_mask and oob.any():
                bins.add(f"{role} overlap")
            if isa.offset_bits(side) > config.te_ovl_bits:
                bins.add(f"{role} overlap wrapped")
            if any(lv.step == 0 for lv in side.levels):
                bins.add("step 0")
            if any(lv.step < 0 for lv in side.levels):
                bins.add("negative step")
            if side.nlevels > 1 and ((side.check_mask ^ ((1 << side.nlevels) - 1)) & ((1 << side.nlevels) - 1)):
                bins.add("unchecked level")
        if t.dst.bcast_mask:
            bins.add("broadcast")
            if t.dst.space in (isa.space("PCORE_PRIVATE"), isa.space("PCORE_SHARED")) and any(
                    t.dst.bcast_mask >> l & 1 and lv.step == pcore_stride(config, t.dst.space)
                    for l, lv in enumerate(t.dst.levels)):
                bins.add("broadcast over PCOREs")
        if t.proc_en:
            bins.add(f"PROC({t.proc})")
        if t.count_error():
            bins.add("count mismatch")


REQUIRED_BINS = ([f"{r} {s} {d}" for r in ("src", "dst") for s in ("DDR", "SCRATCH", "PCORE_PRIVATE", "PCORE_SHARED")
                  for d in ("UINT8", "INT8", "INT16")]
                 + ["src out of bound", "dst out of bound", "src overlap", "dst overlap", "step 0", "negative step",
                    "unchecked level", "broadcast", "broadcast over PCOREs", "count mismatch", "Exe", "Callback", "Log"]
                 + [f"PROC({n})" for n in range(isa.SPU_PROGRAMS)])


@cocotb.test()
async def random_instructions(dut):
    """Constrained-random instruction batches, compared after every batch."""
    config, bench, machine = await _setup(dut)
    seed = int(os.environ.get("TSOC_TE_SEED", "1"))
    total = int(os.environ.get("TSOC_TE_RANDOM", "1500"))
    batch = 10
    rng = random.Random(seed)
    geo = Geometry(config, DDR_BYTES)
    _randomise(machine, rng)
    bench.load(machine)
    # SPU programs from random tables in DDR, then mixed batches.
    loads = [spu_load(rng, geo, p, 2 * isa.SPU_LOOKUP_SIZE * p) for p in range(isa.SPU_PROGRAMS)]
    words = [w for t in loads for w in isa.encode(t)]
    machine.run(loads)
    await bench.run(words)
    await _check(bench, machine, "SPU loads")
    tag = 1
    done = 0
    clocks = 0
    bins = set()
    while done < total:
        instrs, tag = random_batch(rng, geo, batch, True, tag)
        _cover(bins, instrs, config)
        words = [w for i in instrs for w in isa.encode(i)]
        machine.run(instrs)
        clocks += await bench.run(words)
        try:
            await _check(bench, machine, f"batch at instruction {done} (seed {seed})")
        except AssertionError:
            for i in instrs:
                dut._log.error(repr(i))
            raise
        done += batch
    dut._log.info(f"{done} random instructions match the executor ({clocks} clocks); transfers per path: "
                  f"{bench.paths}")
    if not config.te_vector_path:
        # SoCConfig.te_vector_path = 0: the same results, every transfer on the element path
        assert bench.paths["vector"] == 0 and bench.paths["element"] > 0, bench.paths
    elif total >= 500:
        assert bench.paths["vector"] >= total // 10 and bench.paths["element"] >= total // 10, bench.paths
        assert bench.paths["broadcast"] >= total // 150, bench.paths
    # an engine with narrow overlap offsets (SoCConfig.te_ovl_bits) sees them wrap
    missing = [b for b in REQUIRED_BINS + (["src overlap wrapped"] if config.te_ovl_bits < 32 else []) if b not in bins]
    assert not missing or total < 500, f"random stimulus never exercised: {missing}"


def _deep(n, role="dst"):
    """A transfer whose ``role`` side ("dst" or "src") has ``n`` levels of 2
    (the outermost checked, half of it out of bound: skipped writes, or PAD
    reads), the other side one level of 2**n elements; the destination is
    INT16 in the scratch-pad, the source INT8 in DDR."""
    def side(r):
        space, dtype, base, es = ("SCRATCH", "INT16", 256, 2) if r == "dst" else ("DDR", "INT8", 40, 1)
        if r != role:
            return isa.Side(space=isa.space(space), dtype=isa.dtype(dtype), base=base,
                            levels=[isa.Level(count=1 << n, step=es, bound=1 << n)])
        levels = [isa.Level(count=2, step=es << k, bound=2) for k in range(n - 1)]
        levels.append(isa.Level(count=2, step=es << (n - 1), start=1, stride=1, bound=2))
        return isa.Side(space=isa.space(space), dtype=isa.dtype(dtype), base=base, check_mask=1 << (n - 1),
                        levels=levels)
    return isa.Transfer(dst=side("dst"), src=side("src"), pad=0x1234 if role == "src" else 0)


@cocotb.test()
async def decode_errors(dut):
    """Malformed instructions set DECODE and are skipped by their length; the
    instruction after each one still executes exactly as the executor says."""
    config, bench, machine = await _setup(dut)
    rng = random.Random(5)
    _randomise(machine, rng)
    bench.load(machine)
    good = isa.Transfer(
        dst=isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT16"), base=64,
                     levels=[isa.Level(count=8, step=2, bound=8)]),
        src=isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=100,
                     levels=[isa.Level(count=8, step=1, bound=8)]))
    gw = isa.encode(good)
    bad_space = list(gw)
    bad_space[2] = (bad_space[2] & ~7) | 6                       # dst space 6
    bad_dtype = list(gw)
    bad_dtype[2] |= 3 << 3                                       # dst dtype 3
    src = 2 + isa.side_words(good.dst)                           # the source side's first word
    src_spu = list(gw)
    src_spu[src] = (src_spu[src] & ~7) | isa.space("SPU")        # SPU as a source
    zero_count = list(gw)
    zero_count[2 + isa.SIDE_SHORT_HEADER_WORDS] = 0              # dst level 0 count 0 (no overlap words)
    long_len = list(gw) + [0]
    long_len[0] = (long_len[0] & ~(0xFF << 8)) | (len(long_len) << 8)   # length 1 word too long
    bad_levels = list(gw)
    bad_levels[2] = (bad_levels[2] & ~(0xF << 8)) | (9 << 8)     # 9 levels
    cases = {"unknown opcode": [0x0000_030F, 1, 2], "EXE length 3": [0x0000_0302, 0, 0],
             "CALLBACK length 2": [0x0000_0203, 7], "LOG length 2": [0x0000_0204, 0],
             "dst space 6": bad_space, "dtype 3": bad_dtype, "SPU source": src_spu, "count 0": zero_count,
             "length too long": long_len, "9 levels": bad_levels}
    if config.te_levels < isa.MAX_LEVELS:
        # encodable, but more levels than this engine has (SoCConfig.te_levels)
        cases[f"{config.te_levels + 1} levels"] = isa.encode(_deep(config.te_levels + 1, "src"))
    if config.dst_levels < isa.MAX_LEVELS:
        # ... or than its destination side has (SoCConfig.te_dst_levels)
        cases[f"destination of {config.dst_levels + 1} levels"] = isa.encode(_deep(config.dst_levels + 1))
    if not config.te_dst_overlap:
        # an overlap group in a destination, where the engine has none (SoCConfig.te_dst_overlap=0)
        ovl = copy.deepcopy(good)
        ovl.dst.levels = [isa.Level(count=4, step=2, bound=4), isa.Level(count=2, step=8, bound=2)]
        ovl.dst.ovl_mask, ovl.dst.ovl_limit = 3, 6
        cases["destination overlap"] = isa.encode(ovl)
    for name, words in cases.items():
        await bench.run(words + gw)
        machine.run([good])
        machine.errors |= 1 << isa.ERRORS["DECODE"][0]
        await _check(bench, machine, name)
    # As many levels as the engine has, on each side: executes.
    for what, deep in ((f"source of {config.te_levels} levels", _deep(config.te_levels, "src")),
                       (f"destination of {config.dst_levels} levels", _deep(config.dst_levels))):
        machine.run([deep])
        assert machine.errors == 0, what
        await bench.run(isa.encode(deep))
        await _check(bench, machine, what)
    # A transfer whose element counts differ: COUNT, nothing written.
    cnt = isa.Transfer(dst=good.dst, src=isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=300,
                                                    levels=[isa.Level(count=9, step=1, bound=9)]))
    machine.run([cnt])
    assert machine.errors == 1 << isa.ERRORS["COUNT"][0]
    await bench.run(isa.encode(cnt))
    await _check(bench, machine, "count mismatch")
    # Element counts of 2**32 or more are COUNT too (isa.ELEMENT_COUNT_LIMIT:
    # the decoder multiplies in 32 bits), equal or not, and whichever way
    # the 32-bit product overflows: both halves above 16 bits, a carry out
    # of the sum, or equal to the other side modulo 2**32.
    def lv(*counts):
        return [isa.Level(count=c, step=1) for c in counts]
    big = {"2**16 x 2**16 on both sides": (lv(1 << 16, 1 << 16), lv(1 << 16, 1 << 16)),
           "3 x 0x60000000 on both sides": (lv(3, 0x6000_0000), lv(0x6000_0000, 3)),
           "2 x 0x80000001 against 2": (lv(2, 0x8000_0001), lv(2))}
    for name, (dl, sl) in big.items():
        t = isa.Transfer(dst=isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0, levels=dl),
                         src=isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=0, levels=sl))
        assert t.count_error()
        machine.errors = 0
        machine.run([t])
        assert machine.errors == 1 << isa.ERRORS["COUNT"][0], name
        await bench.run(isa.encode(t))
        await _check(bench, machine, name)


@cocotb.test()
async def far_indices(dut):
    """Checked levels whose indices leave -2**32 .. 2**32-1 (huge strides,
    both signs): the generator keeps indices in 34 bits with a sticky
    out-of-bound bit (cores/tensor_engine/agen.py), so an index that would
    wrap back into 0 .. bound-1 in 34 bits must stay out of bound.  Reads
    give PAD, writes are skipped, on the element and the vector path,
    exactly as the executor says."""
    config, bench, machine = await _setup(dut)
    rng = random.Random(7)
    _randomise(machine, rng)
    bench.load(machine)
    DDR, SCR = isa.space("DDR"), isa.space("SCRATCH")
    U8, I8 = isa.dtype("UINT8"), isa.dtype("INT8")
    top = (1 << 32) - 1
    cases = {
        # index i * (2**31 - 1): far from i = 3; 34-bit wrap puts i = 9 at 2**31 - 9, in bound
        "read, positive stride, one level": isa.Transfer(
            dst=isa.Side(space=SCR, dtype=I8, base=0, levels=[isa.Level(count=10, step=1)]),
            src=isa.Side(space=DDR, dtype=U8, base=100, check_mask=1,
                         levels=[isa.Level(count=10, step=1, start=0, stride=(1 << 31) - 1, bound=top)]), pad=-5),
        # the same on level 1 under a contiguous row (the vector path's chunks)
        "read, positive stride, rows": isa.Transfer(
            dst=isa.Side(space=SCR, dtype=I8, base=256, levels=[isa.Level(count=40, step=1)]),
            src=isa.Side(space=DDR, dtype=U8, base=200, check_mask=2,
                         levels=[isa.Level(count=4, step=1), isa.Level(count=10, step=4, start=0,
                                                                         stride=(1 << 31) - 1, bound=top)]), pad=3),
        # index 2**31 - 1 - i * 2**31 on level 1: in bound at i = 0, far from i = 3;
        # the 34-bit wrap puts i = 8 at 2**31 - 1
        "read, negative stride, rows": isa.Transfer(
            dst=isa.Side(space=SCR, dtype=I8, base=512, levels=[isa.Level(count=36, step=1)]),
            src=isa.Side(space=DDR, dtype=U8, base=300, check_mask=2,
                         levels=[isa.Level(count=4, step=1), isa.Level(count=9, step=4, start=(1 << 31) - 1,
                                                                         stride=-(1 << 31), bound=top)]), pad=9),
        # index 2**31 - 1 - i * 2**31: in bound at i = 0, far from i = 3; the wrap puts i = 8 at 2**31 - 1
        "write, negative stride": isa.Transfer(
            dst=isa.Side(space=DDR, dtype=U8, base=1000, check_mask=1,
                         levels=[isa.Level(count=9, step=1, start=(1 << 31) - 1, stride=-(1 << 31), bound=top)]),
            src=isa.Side(space=SCR, dtype=I8, base=0, levels=[isa.Level(count=9, step=1)])),
        # a destination row per level-1 index, far from the third row on
        "write, rows": isa.Transfer(
            dst=isa.Side(space=DDR, dtype=U8, base=1100, check_mask=2,
                         levels=[isa.Level(count=8, step=1), isa.Level(count=10, step=8, start=5,
                                                                         stride=(1 << 31) - 1, bound=top)]),
            src=isa.Side(space=SCR, dtype=I8, base=256, levels=[isa.Level(count=80, step=1)])),
    }
    from tensorsoc.verification.golden.tensor_exec import side_elements
    for name, t in cases.items():
        side = t.src if name.startswith("read") else t.dst
        _, oob, _ = side_elements(side)
        assert oob.any() and not oob.all(), f"{name}: the case must mix in- and out-of-bound elements"
        machine.run([t])
        await bench.run(isa.encode(t))
        await _check(bench, machine, name)


@cocotb.test()
async def overlap_offsets(dut):
    """The overlap offset modulo 2**te_ovl_bits (SoCConfig.te_ovl_bits,
    isa.wrap_offset): offsets that cross +-2**(bits-1) wrap, a start beyond
    the width is taken modulo it, and a limit of 2**(bits-1) or more lets
    every non-negative offset through (cores/tensor_engine/agen.py,
    clamped_limit: a limit truncated to the width would not).  Reads give
    PAD, writes are skipped, exactly as the executor says.  The wrapping
    cases need a width under 32 bits (an ovl_start field reaches 2**31);
    at 48 the limits alone."""
    config, bench, machine = await _setup(dut)
    rng = random.Random(11)
    _randomise(machine, rng)
    bench.load(machine)
    bits = config.te_ovl_bits
    half = 1 << (bits - 1)
    DDR, SCR = isa.space("DDR"), isa.space("SCRATCH")
    U8, I8 = isa.dtype("UINT8"), isa.dtype("INT8")

    def read(base, start, limit, levels, mask=1):
        return isa.Transfer(dst=isa.Side(space=SCR, dtype=I8, base=base, levels=[isa.Level(count=32, step=1)]),
                            src=isa.Side(space=DDR, dtype=U8, base=base + 40, ovl_mask=mask, ovl_start=start,
                                         ovl_limit=limit, levels=levels), pad=5)

    row = [isa.Level(count=32, step=1)]
    grid = [isa.Level(count=8, step=1), isa.Level(count=4, step=-(half >> 1))]
    cases = {"read, a limit above the offsets": read(0, -4, 0xFFFFFFFF, row)}
    if bits < 32:
        cases.update({
            "read, offsets across +2**(bits-1)": read(64, half - 8, 0xFFFFFFFF, row),
            "read, a start beyond the width": read(128, (1 << bits) - 4, 20, row),
            "read, a limit of 2**bits + 3": read(192, -4, (1 << bits) + 3, row),
            "read, a limit of 2**(bits-1)": read(256, half - 20, half, row),
            "read, a negative outer step across -2**(bits-1)": read(320, -half + 10, 0xFFFFFFFF, grid, 3),
        })
        if config.te_dst_overlap:
            cases["write, offsets across +2**(bits-1)"] = isa.Transfer(
                dst=isa.Side(space=DDR, dtype=U8, base=1500, ovl_mask=1, ovl_start=half - 8, ovl_limit=half,
                             levels=[isa.Level(count=32, step=1)]),
                src=isa.Side(space=SCR, dtype=I8, base=0, levels=[isa.Level(count=32, step=1)]))
    from tensorsoc.verification.golden.tensor_exec import side_elements
    for name, t in cases.items():
        side = t.src if name.startswith("read") else t.dst
        _, oob, _ = side_elements(side, bits)
        assert oob.any() and not oob.all(), f"{name}: the case must mix in- and out-of-bound elements"
        machine.run([t])
        await bench.run(isa.encode(t))
        await _check(bench, machine, name)
    assert machine.errors == 0, machine.errors


@cocotb.test()
async def trace_buffer_depth(dut):
    """LOG_ON .. LOG_OFF around two transfers.  With a trace buffer
    (te_trace_depth > 0) its records come out, LOG_ON first and LOG_OFF
    last; without one (te_trace_depth = 0) trace_level and trace_word stay 0.
    Either way the transfers give the executor's results."""
    config, bench, machine = await _setup(dut)
    _randomise(machine, random.Random(5))
    bench.load(machine)
    n = 2 * config.vw
    prog = [isa.Log(on=1),
            isa.Transfer(dst=_side("SCRATCH", "INT16", 0, n), src=_side("DDR", "INT16", 0, n)),
            isa.Transfer(dst=_side("DDR", "INT16", 512, n), src=_side("SCRATCH", "INT16", 0, n)),
            isa.Log(on=0)]
    machine.run(prog)
    await bench.run([w for i in prog for w in isa.encode(i)])
    await _check(bench, machine, "LOG_ON program")
    machine.trace.clear()
    level = int(dut.trace_level.value)
    words = await bench.trace_words()
    if config.te_trace_depth:
        names = [r.name for r in te_trace.decode(words)]
        assert level == len(names) and names[0] == "LOG_ON" and names[-1] == "LOG_OFF" \
            and names.count("XFER_START") == 2, (level, names)
    else:
        assert level == 0 and words == [], f"te_trace_depth=0, yet {level} records, words {words}"
