"""cores/wishbone_cdc.py: a Wishbone master in one clock domain, a slave in
another, at unrelated clock ratios (Migen simulation).

* random traffic (single reads and writes, incrementing read and write bursts,
  idle gaps, addresses crowded into a few words so writes land in the words
  read ahead) against a slave with random wait states: every read returns what
  a reference memory updated in program order holds, and the slave checks the
  Wishbone burst rules (a beat offered with cti 0b010 is followed at once by
  the next word);
* LiteX's own burst-capable ``wishbone.SRAM`` behind the crossing: the data,
  and a long read burst streams at about one word per clock (the read-ahead
  works), where single reads each pay the round trip.
"""

import os
import random

import pytest
from migen import ClockDomain, Module
from migen.sim import passive, run_simulation
from litex.gen import ClockDomainsRenamer
from litex.soc.interconnect import wishbone

from tensorsoc.cores.wishbone_cdc import CTI_CLASSIC, CTI_END, CTI_INCR, WishboneCDC

# (up, down) clock periods: unrelated ratios both ways, and equal clocks.
# `make test` runs three with 50 bursts each (with 100: 63, 34 and 33 s of
# one core, and 39 s without read-ahead); `make regress` (TSOC_CDC_LONG=1)
# all five with 400.
LONG = os.environ.get("TSOC_CDC_LONG") == "1"
RATIOS = [(20, 14), (14, 20), (20, 20), (6, 22), (22, 6)] if LONG else [(20, 14), (6, 22), (22, 6)]
BURSTS = 400 if LONG else 50
WORDS = 64


def _bus():
    return wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)


class _DUT(Module):
    def __init__(self, sram=False, **kw):
        self.clock_domains.cd_up = ClockDomain()
        self.clock_domains.cd_down = ClockDomain()
        self.up, self.down = _bus(), _bus()
        self.submodules.cdc = WishboneCDC(self.up, self.down, "up", "down", **kw)
        if sram:
            self.submodules.sram = ClockDomainsRenamer("down")(wishbone.SRAM(WORDS * 4, bus=self.down))


def _transactions(rng, n):
    """Random bursts: (we, first word, beats).  One in four is a read burst,
    a write just past its end (into the words read ahead, or not), and a read
    burst that continues the first."""
    out = []
    while len(out) < n:
        beats = rng.choice([1, 1, 2, 3, 4, 8, 16, 24])
        adr = rng.randrange(WORDS - beats + 1)
        if rng.random() < 0.25 and adr + beats + 8 < WORDS:
            out += [(False, adr, beats), (True, adr + beats + rng.randrange(8), rng.choice([1, 2])),
                    (False, adr + beats, rng.choice([1, 4, 8]))]
        else:
            out.append((rng.random() < 0.4, adr, beats))
    return out


def _master(up, txs, ref, rng, reads, stats=None, gaps=(0, 0, 0, 1, 3)):
    """Runs ``txs`` on ``up`` like the TensorEngine's burst master: cti 0b010
    on every beat but the last of a burst (0b111; 0 for one beat), random idle
    clocks between bursts."""
    clocks = 0
    for we, adr, beats in txs:
        for _ in range(rng.choice(gaps)):
            yield
            clocks += 1
        for i in range(beats):
            a = adr + i
            data = rng.getrandbits(32)
            sel = rng.choice([0xf, 0xf, 0xf, 0x1, 0x6, 0x8])
            cti = CTI_INCR if i < beats - 1 else (CTI_END if beats > 1 else CTI_CLASSIC)
            yield up.cyc.eq(1)
            yield up.stb.eq(1)
            yield up.we.eq(we)
            yield up.adr.eq(a)
            yield up.dat_w.eq(data)
            yield up.sel.eq(sel)
            yield up.cti.eq(cti)
            yield
            clocks += 1
            waited = 0
            while not (yield up.ack):
                assert not (yield up.err), f"bus error at word {a}"
                # a crossing that loses a beat fails here instead of hanging
                assert waited < 2000, f"no acknowledge for word {a} after {waited} clocks"
                yield
                clocks += 1
                waited += 1
            if we:
                mask = sum(0xff << (8 * b) for b in range(4) if sel >> b & 1)
                ref[a] = (ref.get(a, 0) & ~mask) | (data & mask)
            else:
                got = yield up.dat_r
                assert got == ref.get(a, 0), f"read word {a}: {got:#x}, expected {ref.get(a, 0):#x}"
                reads.append(a)
        yield up.cyc.eq(0)
        yield up.stb.eq(0)
    if stats is not None:
        stats["clocks"] = clocks


@passive
def _slave(down, mem, rng, log):
    """A slave with random wait states that checks the burst rules."""
    incr_from = None           # the word after which a burst continues
    while True:
        if (yield down.cyc) and (yield down.stb):
            adr, we, cti = (yield down.adr), (yield down.we), (yield down.cti)
            assert adr < WORDS, f"access to word {adr}, past the {WORDS}-word block"
            dat_w, sel = (yield down.dat_w), (yield down.sel)
            if incr_from is not None:
                assert adr == incr_from + 1, f"burst continued at word {adr}, not {incr_from + 1}"
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                yield
                assert (yield down.cyc) and (yield down.cti) == cti and (yield down.adr) == adr, \
                    "a beat changed before its acknowledge"
            if we:
                mask = sum(0xff << (8 * b) for b in range(4) if sel >> b & 1)
                mem[adr] = (mem.get(adr, 0) & ~mask) | (dat_w & mask)
            else:
                yield down.dat_r.eq(mem.get(adr, 0))
            log.append((adr, we, cti))
            yield down.ack.eq(1)
            yield                      # the acknowledge is seen in this clock
            yield down.ack.eq(0)
            yield
            incr_from = adr if cti == CTI_INCR else None
        else:
            assert incr_from is None, "cyc dropped inside a burst"
            yield


@passive
def _watch(dut, flags, log):
    """The response FIFO never overflows, and the write fence never counts a
    write the slave has not acknowledged."""
    while True:
        if (yield dut.cdc.overflow):
            flags.append("overflow")
        landed = yield dut.cdc.wr_landed
        done = sum(1 for _, we, _ in log if we)
        if (done - landed) % 64 >= 32:
            flags.append(f"fence: {landed} writes landed (mod 64) but the slave took {done}")
        yield


@pytest.mark.parametrize("periods,bursts", [(r, True) for r in RATIOS] + [((14, 20), False)],
                         ids=lambda p: f"up{p[0]}-down{p[1]}" if isinstance(p, tuple) else
                         ("read-ahead" if p else "no-read-ahead"))
def test_random_traffic(periods, bursts):
    rng = random.Random(periods[0] * 100 + periods[1])
    dut = _DUT(block_words=WORDS, bursts=bursts)      # (reads ahead stop at the top word)
    ref, mem, reads, log, flags, fence = {}, {}, [], [], [], []
    txs = _transactions(rng, BURSTS)
    def gen():
        yield from _master(dut.up, txs, ref, rng, reads)
        quiet = waited = 0
        while quiet < 20:              # the posted writes drain
            quiet = quiet + 1 if (yield dut.cdc.down_idle) else 0
            assert waited < 5000, "the posted writes never drained"
            waited += 1
            yield
        fence.extend([(yield dut.cdc.wr_issued), (yield dut.cdc.wr_landed)])

    run_simulation(dut, {"up": [gen()],
                         "down": [_slave(dut.down, mem, random.Random(7), log), _watch(dut, flags, log)]},
                   clocks={"up": periods[0], "down": periods[1]})
    assert not flags
    n_writes = sum(beats for we, _, beats in txs if we)
    assert fence == [n_writes % 64] * 2
    # every write reached the slave, in order: its memory is the reference
    assert {a: v for a, v in mem.items() if v} == {a: v for a, v in ref.items() if v}
    n_reads = sum(beats for we, _, beats in txs if not we)
    assert len(reads) == n_reads
    # the slave saw bursts (re-formed from the FIFO) and more reads than the
    # master asked for only where it read ahead
    assert any(cti == CTI_INCR for _, _, cti in log)
    assert sum(1 for _, we, _ in log if not we) >= n_reads
    if not bursts:
        assert sum(1 for _, we, _ in log if not we) == n_reads, "read ahead with bursts=False"


def _burst_clocks(periods, beats, cti_incr, read_ahead=16):
    dut = _DUT(sram=True, read_ahead=read_ahead)
    ref = {}
    # fill the SRAM through the crossing, then read it back
    fill = [(True, 0, WORDS)]
    stats = {}
    reads = []

    def gen():
        yield from _master(dut.up, fill, ref, random.Random(2), [])
        for _ in range(50):
            yield
        if cti_incr:
            txs = [(False, 0, beats)]
        else:
            txs = [(False, a, 1) for a in range(beats)]
        yield from _master(dut.up, txs, ref, random.Random(3), reads, stats, gaps=(0,))

    run_simulation(dut, {"up": [gen()]}, clocks={"up": periods[0], "down": periods[1]})
    assert len(reads) == beats
    return stats["clocks"]


@pytest.mark.parametrize("periods", [(20, 20), (20, 14), (14, 20)], ids=lambda p: f"up{p[0]}-down{p[1]}")
def test_read_burst_streams(periods):
    """A 48-word read burst through the crossing into LiteX's SRAM: at one
    word per clock of the slower side plus one round trip; single reads pay
    the round trip each."""
    beats = 48
    burst = _burst_clocks(periods, beats, True)
    single = _burst_clocks(periods, beats, False)
    slower = max(periods) / periods[0]           # up clocks per clock of the slower side
    print(f"periods {periods}: burst {burst} up clocks for {beats} words, single reads {single}")
    # re-formed bursts (at most 64 beats), each with a clock to decide and a
    # clock with cyc low, and the FIFOs' latency
    assert burst <= 1.3 * beats * slower + 16
    assert single >= 4 * burst / 2
