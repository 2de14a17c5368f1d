"""cocotb: transfers broadcast over the PCORE dimension
(``PCORE(NP)[*].var[...] <= ...``, a destination level in ``bcast_mask``
stepping by one PCORE) at the default geometry (4 PCOREs), on the PCORE
memory model of the bench top (verification/te/top.py).

Each destination word goes to every broadcast PCORE in one command of the
``te`` write channel (``te.wr_bcast``), so N elements to 4 PCOREs take about
N / VW clocks from the scratch-pad or PCORE memory (N / 2 from DDR), not 4
times that.  Every transfer is checked against the reference executor
(memories and error flags); the cases cover private and shared
destinations, 2 and 4 copies, a broadcast level in the middle of the
levels, a checked broadcast level leaving some copies out of bound, copies
beyond the last PCORE (RANGE), an address wrapping modulo 2**32, 8-bit
conversions and PAD, and broadcasts that keep the element path.  Run by
tests/test_te_engine.py."""

import random

import cocotb
from cocotb.triggers import RisingEdge, FallingEdge
from cocotb.utils import get_sim_time

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.te.bfm import TEBench
from tensorsoc.verification.te.test_engine import _config, _machine, _randomise, _check, DDR_BYTES
from tensorsoc.verification.te.stimulus import pcore_stride

SP = {n: v[0] for n, v in isa.SPACES.items()}
DT = {n: v[0] for n, v in isa.DTYPES.items()}
FILL = 12          # pipeline fill and drain of a vector transfer, clocks


def _row(space, dtype, base, n, check=0, start=0):
    es = isa.element_bytes(space, dtype)
    return isa.Side(space=space, dtype=dtype, base=base, check_mask=check,
                    levels=[isa.Level(count=n, step=es, start=start, bound=n)])


def _bcast(config, space, dtype, base, inner, copies, at=None, start=0, stride=1, bound=None, check=0):
    """``inner``: [(count, step)] of the non-broadcast levels, innermost
    first; the broadcast level (``copies`` PCOREs from the one at ``base``)
    goes at position ``at`` (default: outermost)."""
    levels = [isa.Level(count=c, step=s, bound=c) for c, s in inner]
    at = len(levels) if at is None else at
    levels.insert(at, isa.Level(count=copies, step=pcore_stride(config, space), start=start, stride=stride,
                                bound=copies if bound is None else bound))
    return isa.Side(space=space, dtype=dtype, base=base, check_mask=check, bcast_mask=1 << at, levels=levels)


def cases(config):
    """(label, transfer, path, clock limit or None, RANGE expected)."""
    vw, np_ = config.vw, config.np
    assert np_ == 4, "the broadcast test wants the default geometry (4 PCOREs)"
    sw, pw = config.pcore_shared_words, config.pcore_private_words
    n = min(1024, sw // 2)
    words = n // vw
    i16, u8, i8 = DT["INT16"], DT["UINT8"], DT["INT8"]
    shr, prv, scr, ddr = SP["PCORE_SHARED"], SP["PCORE_PRIVATE"], SP["SCRATCH"], SP["DDR"]
    out = [
        ("shared[*] <= SCRATCH INT16, 4 PCOREs",
         isa.Transfer(dst=_bcast(config, shr, i16, 0, [(n, 1)], np_), src=_row(scr, i16, 0, n)),
         "vector", words + FILL, False),
        ("shared[*] <= DDR INT16, 4 PCOREs",
         isa.Transfer(dst=_bcast(config, shr, i16, 8, [(n, 1)], np_), src=_row(ddr, i16, 64, n, check=1)),
         "vector", n // 2 * 34 // 32 + FILL, False),
        ("private[*] <= private INT16, 4 PCOREs (threads 4.. <= PCORE 0 threads 0..)",
         isa.Transfer(dst=_bcast(config, prv, i16, 4 * pw, [(n, 1)], np_), src=_row(prv, i16, 0, n)),
         "vector", words + FILL, False),
        ("shared[*] <= SCRATCH, coef[G][K][VW] layout, 2 PCOREs, process 1",
         isa.Transfer(dst=_bcast(config, shr, i16, 64, [(vw, 1), (36, vw), (3, 36 * vw)], 2),
                      src=isa.Side(space=scr, dtype=i16, base=256, levels=[
                          isa.Level(count=vw, step=2, bound=vw), isa.Level(count=36, step=3 * 2 * vw, bound=36),
                          isa.Level(count=3, step=2 * vw, bound=3)]), process=1),
         "vector", 3 * 36 + FILL, False),
        ("shared[*] <= SCRATCH, broadcast level in the middle",
         isa.Transfer(dst=_bcast(config, shr, i16, 32, [(vw, 1), (16, vw)], np_, at=1),
                      src=_row(scr, i16, 512, 16 * vw)),
         "vector", 16 + FILL, False),
        ("shared[*] <= SCRATCH UINT8 -> INT8, checked broadcast level: copies 1 and 2 only",
         isa.Transfer(dst=_bcast(config, shr, i8, 16, [(n, 1)], np_, start=-1, bound=2, check=0b10),
                      src=_row(scr, u8, 3, n)),
         "vector", 2 * words + FILL, False),     # unaligned 8-bit rows: 2 source chunks per word
        ("private[*] <= DDR INT8, copies from PCORE 2: 4 and 5 leave the memory (RANGE)",
         isa.Transfer(dst=_bcast(config, prv, i16, 2 * config.nt * pw + 3 * pw + 5, [(200, 1)], np_),
                      src=_row(ddr, i8, 1001, 200)),
         "vector", None, True),
        ("shared[*] from 2**32 - one PCORE: copy 0 out of bound, copies 1-3 wrap to PCOREs 0-2",
         isa.Transfer(dst=_bcast(config, shr, i16, (1 << 32) - sw + 8, [(n, 1)], np_, start=-1, bound=3,
                                 check=0b10),
                      src=_row(scr, i16, 0, n)),
         "vector", words + FILL, False),
        ("shared[*] <= SCRATCH, rows partly out of bound (PAD) and skipped rows",
         isa.Transfer(dst=isa.Side(space=shr, dtype=i16, base=0, check_mask=0b100, bcast_mask=0b10, levels=[
                          isa.Level(count=vw, step=1, bound=vw),
                          isa.Level(count=np_, step=sw, bound=np_),
                          isa.Level(count=8, step=vw, start=-2, bound=5)]),
                      src=isa.Side(space=scr, dtype=i16, base=0, check_mask=0b10, levels=[
                          isa.Level(count=vw, step=2, bound=vw),
                          isa.Level(count=8, step=2 * vw, start=-1, bound=8)]), pad=0x1234),
         "vector", None, False),
        ("shared[*] with a broadcast step of 0: element path",
         isa.Transfer(dst=isa.Side(space=shr, dtype=i16, base=40, bcast_mask=0b10, levels=[
                          isa.Level(count=16, step=1, bound=16), isa.Level(count=2, step=0, bound=2)]),
                      src=_row(scr, i16, 100, 16)),
         "element", None, False),
        ("shared[*] with 5 copies (more than NP): element path",
         isa.Transfer(dst=_bcast(config, shr, i16, 0, [(16, 1)], 5), src=_row(scr, i16, 100, 16)),
         "element", None, True),
    ]
    return out


def single(t):
    """``t`` without its broadcast level: the same walk into copy 0's PCORE only."""
    d = t.dst
    at = d.bcast_mask.bit_length() - 1

    def drop(mask):
        return (mask & ((1 << at) - 1)) | ((mask >> (at + 1)) << at)
    dst = isa.Side(space=d.space, dtype=d.dtype, base=d.base, check_mask=drop(d.check_mask),
                   ovl_mask=drop(d.ovl_mask), ovl_start=d.ovl_start, ovl_limit=d.ovl_limit,
                   levels=[lv for l, lv in enumerate(d.levels) if l != at])
    return isa.Transfer(dst=dst, src=t.src, process=t.process, pad=t.pad)


async def _timed(dut, tb, machine, t, label):
    """Run ``t``, check it against the executor; (path, broadcast mode, clocks)."""
    machine.run([t])
    seen = {}

    async def timer():
        await RisingEdge(dut.xfer_active)
        t0 = get_sim_time("ns")
        await RisingEdge(dut.sys_clk)
        seen["path"] = "vector" if int(dut.xfer_vector.value) else "element"
        seen["bcast"] = int(dut.xfer_bcast.value)
        await FallingEdge(dut.xfer_active)
        seen["clocks"] = int((get_sim_time("ns") - t0) // 10)
    task = cocotb.start_soon(timer())
    await tb.run(isa.encode(t))
    await task
    await _check(tb, machine, label)
    return seen["path"], seen["bcast"], seen["clocks"]


@cocotb.test()
async def broadcast_to_pcores(dut):
    config = _config()
    tb = TEBench(dut, config, DDR_BYTES)
    await tb.start()
    machine = _machine(config)
    _randomise(machine, random.Random(21))
    tb.load(machine)
    rng_bit = 1 << isa.ERRORS["RANGE"][0]
    for label, t, path, limit, range_error in cases(config):
        probe = _machine(config)
        probe.run([t])
        assert bool(probe.errors & rng_bit) == range_error, f"{label}: the case does not do what it says"
        got_path, bcast, clocks = await _timed(dut, tb, machine, t, label)
        copies = max(lv.count for l, lv in enumerate(t.dst.levels) if t.dst.bcast_mask >> l & 1)
        msg = f"{label}: {t.src.element_count()} elements x {copies} copies in {clocks} clocks, {got_path} path"
        assert (got_path, bcast) == (path, int(path == "vector")), f"{msg}, expected {path}"
        if path == "vector":
            # the same walk into one PCORE: the broadcast costs no more
            one_path, _, one = await _timed(dut, tb, machine, single(t), label + " (one PCORE)")
            msg += f"; into one PCORE {one} clocks ({one_path} path)"
            assert one_path == "vector" and clocks <= one + 2, msg
        dut._log.info(msg)
        if limit is not None:
            assert clocks <= limit, f"{msg}: at most {limit} expected"
