"""HeadFIFO (cores/tensor_engine/fifo.py) against Migen's SyncFIFO with
first-word fall-through: the same random writes and reads, clock by clock,
must give the same readable, writable, level and head word, and every word
out in order.  Migen's simulator runs both side by side."""

import random

import pytest
from migen import Module
from migen.genlib.fifo import SyncFIFO
from migen.sim import run_simulation

from tensorsoc.cores.tensor_engine.fifo import HeadFIFO


class _Pair(Module):
    def __init__(self, width, depth):
        self.submodules.ref = SyncFIFO(width, depth)
        self.submodules.dut = HeadFIFO(width, depth)


@pytest.mark.parametrize("depth,p_write,p_read", [(4, 0.5, 0.5), (4, 0.8, 0.3), (4, 0.3, 0.9),
                                                  (128, 0.7, 0.4), (2, 0.6, 0.6)])
def test_head_fifo_matches_syncfifo_clock_by_clock(depth, p_write, p_read):
    pair = _Pair(16, depth)
    rng = random.Random(depth * 1000 + int(p_write * 10) * 10 + int(p_read * 10))
    seen = {"out": [], "in": [], "full": 0, "both": 0}

    def bench():
        ref, dut = pair.ref, pair.dut
        for n in range(3000):
            we = rng.random() < p_write
            re = rng.random() < p_read
            din = rng.randrange(1 << 16)
            for f in (ref, dut):
                yield f.we.eq(we)
                yield f.din.eq(din)
                yield f.re.eq(re)       # both ignore a read while nothing is readable
            yield                       # the values above are on the signals in this clock
            readable = yield ref.readable
            writable = yield ref.writable
            assert (yield dut.readable) == readable, f"clock {n}: readable"
            assert (yield dut.writable) == writable, f"clock {n}: writable"
            assert (yield dut.level) == (yield ref.level), f"clock {n}: level"
            if readable:
                assert (yield dut.dout) == (yield ref.dout), f"clock {n}: head word"
            # what the clock edge at the end of this clock does
            if re and readable:
                seen["out"].append((yield dut.dout))
            if we and writable:
                seen["in"].append(din)
            seen["full"] += not writable
            seen["both"] += bool(re and readable and we and writable)

    run_simulation(pair, bench())
    assert seen["out"] == seen["in"][:len(seen["out"])]
    assert len(seen["out"]) > 500
    # the traffic reached the corners: a write and a read in the same
    # clock, and a full FIFO where the writes outpace the reads
    assert seen["both"] > 50
    if p_write >= p_read:
        assert seen["full"] > 10
