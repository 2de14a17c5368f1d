"""The TensorEngine fetch's Wishbone bursts (cores/tensor_engine/fetch.py),
in Migen's simulator against a slave that acknowledges at random and a
queue that drains at random: every word read once and in order, into the
queue only when it has room, and the burst's promises kept (a beat with cti
0b010 is followed by the next beat in the clock after its acknowledge; the
fetch's last beat carries 0b111).  A fetch that promised a beat it does not
offer would leave a bursting slave waiting."""

import pytest
from migen import Cat, If, Module, Signal, run_simulation

from tensorsoc.cores.tensor_engine.fetch import TARGET_IMEM, TARGET_QUEUE, TEFetchCore
from tensorsoc.cores.tensor_engine.vector import CTI_END, CTI_INCREMENTING

QUEUE_DEPTH = 12


class _Bench(Module):
    """The fetch with a slave (ack at random, data = the word address) and
    a queue of QUEUE_DEPTH words (drained at random), random bits from an
    LFSR."""

    def __init__(self, seed):
        self.submodules.dut = dut = TEFetchCore(imem_words=64, max_burst=8, min_space=4)
        lfsr = Signal(16, reset=seed)
        self.level = level = Signal(max=2 * QUEUE_DEPTH)
        self.drain = drain = Signal()
        self.sync += lfsr.eq(Cat(lfsr[1:], lfsr[0] ^ lfsr[2] ^ lfsr[3] ^ lfsr[5]))
        self.comb += [
            dut.bus.ack.eq(dut.bus.cyc & (lfsr[0] | lfsr[1])),
            dut.bus.dat_r.eq(dut.bus.adr),
            dut.q_space.eq(QUEUE_DEPTH - level),
            drain.eq((level != 0) & lfsr[4] & (lfsr[6] | lfsr[7])),
        ]
        self.sync += level.eq(level + dut.q_we - drain)


def _fetch(lengths, target, seed):
    tb = _Bench(seed)
    dut = tb.dut
    problems = []

    def bench():
        for n, length in enumerate(lengths):
            base = 0x1000 * (n + 1)
            yield dut.address.eq(base)
            yield dut.length.eq(length)
            yield dut.target.eq(target)
            yield dut.start.eq(1)
            yield
            yield dut.start.eq(0)
            yield
            expect = [base // 4 + k for k in range(length)]
            words, imem = [], {}
            promised = False
            last_cti = None
            for _ in range(40 * length + 40):
                cyc, ack, cti = (yield dut.bus.cyc), (yield dut.bus.ack), (yield dut.bus.cti)
                if promised and not cyc:
                    problems.append(f"length {length}: a beat promised with cti 0b010 was not offered")
                promised = bool(ack) and cti == CTI_INCREMENTING
                if ack:
                    last_cti = cti
                if (yield dut.q_we):
                    if (yield tb.level) >= QUEUE_DEPTH:
                        problems.append(f"length {length}: a word written into a full queue")
                    words.append((yield dut.q_data))
                if (yield dut.imem_we):
                    imem[(yield dut.imem_adr)] = yield dut.imem_dat_w
                if not (yield dut.busy) and not promised:
                    break
                yield
            if target == TARGET_IMEM:
                words = [imem.get(k) for k in range(len(imem))]
            if words != expect:
                problems.append(f"length {length}: words {words} instead of {expect}")
            if length and last_cti != CTI_END:
                problems.append(f"length {length}: the last beat's cti is {last_cti}, not 0b111")

    run_simulation(tb, bench())
    return problems


@pytest.mark.parametrize("target", [TARGET_QUEUE, TARGET_IMEM])
def test_fetch_bursts_keep_their_promises(target):
    lengths = [1, 2, 3, 0, 1, 8, 9, 17, 2, 30, 5, 64, 1]
    assert _fetch(lengths, target, seed=0x1ACE + target) == []
