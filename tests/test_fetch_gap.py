"""soc/tensorsoc.py's FetchGap on LiteX's shared-bus arbiter: a master that
keeps CYC up from one cycle to the next (the VexRiscv minimal's instruction
fetches) holds the bus without it, and lets another master in with it."""

from migen import Module, passive, run_simulation
from litex.soc.interconnect import wishbone

from tensorsoc.soc.tensorsoc import FetchGap


class Bench(Module):
    def __init__(self, gap):
        self.fetch = wishbone.Interface()
        self.dma = wishbone.Interface()
        first = self.fetch
        if gap:
            self.submodules.gap = FetchGap(self.fetch)
            first = self.gap.bus
        self.submodules.ram = wishbone.SRAM(64, init=list(range(100, 116)))
        self.submodules.arbiter = wishbone.Arbiter([first, self.dma], self.ram.bus)


def run(gap, cycles=60):
    """The DMA master asks for one word at clock 3 and gives up at clock
    ``cycles``; the run ends ``cycles`` clocks after that.  Returns the
    clock of the DMA's acknowledge (None: never), the word it read, and the
    fetches acknowledged in the whole run."""
    dut = Bench(gap)
    result = {"dma": None, "data": None, "fetches": 0}

    @passive
    def fetcher():
        # CYC and STB stay up; the address moves on after each acknowledge.
        adr = 0
        yield dut.fetch.cyc.eq(1)
        yield dut.fetch.stb.eq(1)
        while True:
            yield dut.fetch.adr.eq(adr)
            yield
            if (yield dut.fetch.ack):
                result["fetches"] += 1
                adr = (adr + 1) % 8

    def dma():
        for _ in range(3):
            yield
        yield dut.dma.adr.eq(12)
        yield dut.dma.cyc.eq(1)
        yield dut.dma.stb.eq(1)
        for cycle in range(3, cycles):
            yield
            if (yield dut.dma.ack):
                result["dma"], result["data"] = cycle, (yield dut.dma.dat_r)
                break
        yield dut.dma.cyc.eq(0)
        yield dut.dma.stb.eq(0)
        for _ in range(cycles):
            yield

    run_simulation(dut, [fetcher(), dma()])
    return result


def test_without_the_gap_the_fetches_hold_the_bus():
    """The failure FetchGap is for: LiteX's round robin moves on only when
    its master lets go, so the other master waits for ever."""
    result = run(gap=False)
    assert result["dma"] is None and result["fetches"] > 20


def test_the_gap_lets_the_other_master_in():
    """With the gap the other master is served within a few clocks, reads
    the right word, and the fetches go on after it."""
    result = run(gap=True)
    assert result["dma"] is not None and result["dma"] <= 8, result
    assert result["data"] == 112
    # and the fetches go on: 22 in the run's 68 clocks (a gap after each)
    assert result["fetches"] >= 15
