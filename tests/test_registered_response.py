"""soc/tensorsoc.py's RegisteredResponse: main RAM on the shared bus answers
from flip-flops.  Behind it, a slave that acknowledges in the clock it is
asked (as LiteDRAM's Wishbone bridge does) serves each access exactly once,
the master sees the answer a clock later, and the read data are the
slave's."""

from migen import Array, Module, Signal, If, run_simulation
from litex.soc.interconnect import wishbone

from tensorsoc.soc.tensorsoc import RegisteredResponse


class CombinationalSlave(Module):
    """Acknowledges in the clock CYC and STB are up; counts the accesses it
    serves (``served``) and the clocks it acknowledges (``acks``)."""

    def __init__(self, words=16):
        self.bus = bus = wishbone.Interface()
        self.served = Signal(16)
        mem = Array(Signal(32, name=f"word{i}") for i in range(words))
        access = Signal()
        self.comb += [
            access.eq(bus.cyc & bus.stb),
            bus.ack.eq(access),
            bus.dat_r.eq(mem[bus.adr[:4]]),
        ]
        self.sync += If(access, self.served.eq(self.served + 1),
                        If(bus.we, mem[bus.adr[:4]].eq(bus.dat_w)))


class Bench(Module):
    def __init__(self):
        self.master = wishbone.Interface()
        self.submodules.reg = RegisteredResponse(self.master)
        self.submodules.slave = CombinationalSlave()
        self.comb += self.reg.bus.connect(self.slave.bus)


def test_each_access_served_once_and_answered_a_clock_later():
    dut = Bench()
    ops = [(True, a, 0x1000 + 7 * a) for a in range(6)] + [(False, a, None) for a in (3, 0, 5)]
    seen = {"reads": [], "clocks": []}

    def master():
        # CYC and STB stay up from one access to the next (the VexRiscv's
        # buses may do so): only the gap after each answer keeps the slave
        # from serving an access twice.
        yield dut.master.cyc.eq(1)
        yield dut.master.stb.eq(1)
        for we, adr, dat in ops:
            yield dut.master.we.eq(int(we))
            yield dut.master.adr.eq(adr)
            yield dut.master.dat_w.eq(dat or 0)
            yield
            clocks = 1
            while not (yield dut.master.ack):
                yield
                clocks += 1
            seen["clocks"].append(clocks)
            if not we:
                seen["reads"].append((yield dut.master.dat_r))
        yield dut.master.cyc.eq(0)
        yield dut.master.stb.eq(0)
        for _ in range(3):
            yield
        seen["served"] = (yield dut.slave.served)

    run_simulation(dut, master())
    assert seen["served"] == len(ops), seen
    assert seen["reads"] == [0x1000 + 7 * 3, 0x1000, 0x1000 + 7 * 5]
    # the slave answers in the clock it is asked; the master a clock later
    assert seen["clocks"] == [2] * len(ops), seen["clocks"]
