"""A simulation-only SPI/QPI host master: the fast host path.

The pin-level host (sw/host/cocotb_transport.py) wakes Python at every SCLK
edge.  This master puts the same waveform on the host port's pins from the
system clock, a *chunk* of up to ``CHUNK_BYTES`` bytes at a time, so the
testbench (sw/host/cocotb_fast_transport.py) is woken once per chunk.  It
sits between the simulation top's ``host_spi`` pins and the SoC's host port:
with ``en`` low the pins drive the port as before (pin-level tests, the C++
harness); with ``en`` high the master does and the ``host_spi`` inputs are
ignored.  It exists only in the simulation SoC (soc/builder.py).

A chunk is a run of SCLK clocks in three phases, in this order:

* ``out_clocks``: the host drives data from ``wdata``, least significant
  bits first (one bit a clock on MOSI in SPI, a nibble on Q[3:0] in QPI;
  the transport reorders the bits of each byte for the MSB-first option);
* ``rel_clocks``: the host drives no data (SPI: MOSI low; QPI: Q released,
  pulled up), the device's lines are not sampled (dummy clocks);
* ``in_clocks``: the host drives no data and reads the device's line(s).

At the end of every clock's high phase (where the pin-level host samples)
the master records, for a monitor as much as for the host, what was on the
wire: ``hdata`` the host's data (MOSI in SPI, Q[3:0] in QPI), ``rdata`` the
device's (MISO, or Q[3:0]; pull-ups where it does not drive), ``dmap``
whether the device drove (MISO; any Q line in QPI), each shifted in from
the top, so a chunk's clocks end up in the most significant bits.

``begin`` lowers CS_N before the chunk (after Tcsi since CS_N last rose,
then Tcse), ``end`` raises it after the chunk (after Tcsd).  A chunk starts
when ``go`` toggles and has ended when ``done`` equals ``go`` again.  Each
chunk also reports ``undriven`` (sampled clocks in which the device did not
drive the line(s) read in the in phase) and ``fault``: bit 0, the device
drove a line it must not (QPI: Q while the host drove it, or the grounded
MISO at any time; SPI: any Q pin); bit 1, the device drove a pin while CS_N
was high, checked before the chunk's CS_N falls.

Timing is in system clocks: ``half`` per SCLK phase (high and low), and
``tcse``, ``tcsd``, ``tcsi``.  ``qpi`` also sets the strap: in QPI the
master ties MISO low for the whole session, as the datasheet wires it; in
SPI MISO is pulled up where the device does not drive it.  The master is
never reset (its own clock domain on the system clock): like a real host it
goes on clocking through a reset of the SoC; ``sclk`` shows its SCLK.
"""

from migen import C, Cat, ClockDomain, ClockDomainsRenamer, ClockSignal, If, Mux, Signal
from migen.genlib.fsm import FSM, NextState, NextValue

from litex.gen import LiteXModule

from tensorsoc.cores.host_spi.pins import PIN_INPUTS, PIN_OUTPUTS, pins_record

CHUNK_BYTES = 256
CLOCK_FIELD = 16         # bits of the clock counts (CHUNK_BYTES * 8 clocks fit)
TIME_FIELD = 16          # bits of the timing fields


def fast_io():
    """The simulation top's ports of the master (soc/platforms/sim.py)."""
    from litex.build.generic_platform import Pins, Subsignal
    fields = [("en", 1), ("go", 1), ("done", 1), ("begin", 1), ("end", 1), ("qpi", 1),
              ("out_clocks", CLOCK_FIELD), ("rel_clocks", CLOCK_FIELD), ("in_clocks", CLOCK_FIELD),
              ("half", 8), ("tcse", TIME_FIELD), ("tcsd", TIME_FIELD), ("tcsi", TIME_FIELD),
              ("wdata", 8 * CHUNK_BYTES), ("rdata", 8 * CHUNK_BYTES), ("hdata", 8 * CHUNK_BYTES),
              ("dmap", 8 * CHUNK_BYTES), ("sclk", 1),
              ("undriven", CLOCK_FIELD), ("fault", 2)]
    return ("host_fast", 0, *[Subsignal(name, Pins(width)) for name, width in fields])


class SimHostMaster(LiteXModule):
    """``pins``: the top's ``host_spi`` record; ``ctl``: its ``host_fast``
    record.  ``pads`` is what the host port connects to (the datasheet's
    pins, cores/host_spi/pins.py)."""

    def __init__(self, pins, ctl):
        self.pads = pads = pins_record()
        W = 8 * CHUNK_BYTES

        clk = Signal()
        cs_n = Signal(reset=1)
        dq = Signal(4, reset=0b1111)     # the host's data: MOSI = dq[0] (SPI), Q0..Q3 (QPI)
        driving = Signal()           # the host drives data (out phase)
        reading = Signal()           # the clock is sampled (in phase)
        miso = Signal()              # MISO as the device sees it
        self.comb += [
            # QPI: MISO tied to ground for the whole session (the strap); SPI:
            # MISO pulled up, the device's level while it drives.
            miso.eq(Mux(ctl.qpi, 0, Mux(pads.miso_oe, pads.miso_o, 1))),
            If(ctl.en,
                pads.clk.eq(clk), pads.cs_n.eq(cs_n), pads.miso_i.eq(miso),
                pads.mosi.eq(Mux(cs_n | ctl.qpi, 1, dq[0])),
                pads.q_i.eq(Mux(cs_n | ~ctl.qpi, 0b1111, dq)),
            ).Else(*[getattr(pads, n).eq(getattr(pins, n)) for n in PIN_INPUTS]),
            *[getattr(pins, n).eq(getattr(pads, n)) for n in PIN_OUTPUTS],
        ]

        wsr = Signal(W)
        rsr = Signal(W)
        hsr = Signal(W)
        dsr = Signal(W)
        out_left = Signal(CLOCK_FIELD)
        rel_left = Signal(CLOCK_FIELD)
        in_left = Signal(CLOCK_FIELD)
        wait = Signal(TIME_FIELD)
        since_cs = Signal(TIME_FIELD)     # clocks since CS_N rose (saturating)
        undriven = Signal(CLOCK_FIELD)
        fault = Signal(2)
        done = Signal()
        self.comb += [ctl.rdata.eq(rsr), ctl.hdata.eq(hsr), ctl.dmap.eq(dsr), ctl.undriven.eq(undriven),
                      ctl.fault.eq(fault), ctl.done.eq(done), ctl.sclk.eq(clk)]
        self.sync += If(~cs_n, since_cs.eq(0)).Elif(since_cs != 2**TIME_FIELD - 1, since_cs.eq(since_cs + 1))

        # The device's lines as the host sees them (pull-ups where undriven),
        # and the checks of the pin-level host.
        seen = Signal(4)
        sample = Signal(4)
        missing = Signal()
        driven = Signal()
        clash = Signal()
        any_oe = Signal()
        host_data = Signal(4)
        self.comb += [
            seen.eq((pads.q_o & pads.q_oe) | (0b1111 & ~pads.q_oe)),
            sample.eq(Mux(ctl.qpi, seen, miso)),
            missing.eq(Mux(ctl.qpi, pads.q_oe != 0b1111, ~pads.miso_oe)),
            driven.eq(Mux(ctl.qpi, pads.q_oe != 0, pads.miso_oe)),
            # QPI: the device drives Q while the host does, or drives the
            # grounded MISO at all; SPI: the device drives the unused Q pins.
            clash.eq(Mux(ctl.qpi, (driving & (pads.q_oe != 0)) | pads.miso_oe, pads.q_oe != 0)),
            any_oe.eq((pads.q_oe != 0) | pads.miso_oe),
            host_data.eq(Mux(ctl.qpi, pads.q_i, pads.mosi)),
        ]

        fsm = self.fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(ctl.en & (ctl.go != done),
                NextValue(wsr, ctl.wdata),
                NextValue(out_left, ctl.out_clocks),
                NextValue(rel_left, ctl.rel_clocks),
                NextValue(in_left, ctl.in_clocks),
                NextValue(undriven, 0),
                NextValue(fault, 0),
                If(ctl.begin, NextState("CS_IDLE")).Else(NextState("NEXT")),
            ),
        )
        fsm.act("CS_IDLE",     # Tcsi since CS_N rose, then CS_N low for Tcse
            If(since_cs >= ctl.tcsi,
                If(any_oe, NextValue(fault, fault | 0b10)),
                NextValue(cs_n, 0),
                NextValue(wait, ctl.tcse),
                NextState("CS_SETUP"),
            ),
        )
        fsm.act("CS_SETUP",
            If(wait <= 1, NextState("NEXT")).Else(NextValue(wait, wait - 1)),
        )
        # One SCLK clock of 2 x ``half`` system clocks: data and SCLK high
        # together (NEXT), ``half`` clocks high, sample and SCLK low at the
        # end of the high phase, ``half`` clocks low (NEXT is the last).
        fsm.act("NEXT",
            NextValue(wait, ctl.half),
            If(out_left != 0,
                NextValue(dq, Mux(ctl.qpi, wsr[0:4], Cat(wsr[0], C(0b111, 3)))),
                NextValue(driving, 1),
                NextValue(reading, 0),
                NextValue(wsr, Mux(ctl.qpi, wsr >> 4, wsr >> 1)),
                NextValue(out_left, out_left - 1),
                NextValue(clk, 1),
                NextState("HIGH"),
            ).Elif((rel_left != 0) | (in_left != 0),
                NextValue(dq, Mux(ctl.qpi, 0b1111, 0b1110)),
                NextValue(driving, 0),
                NextValue(reading, rel_left == 0),
                If(rel_left != 0, NextValue(rel_left, rel_left - 1)),
                NextValue(clk, 1),
                NextState("HIGH"),
            ).Elif(ctl.end,
                NextValue(wait, ctl.tcsd),
                NextState("CS_HOLD"),
            ).Else(
                NextValue(done, ctl.go),
                NextState("IDLE"),
            ),
        )
        fsm.act("HIGH",
            If(wait <= 1,
                If(clash, NextValue(fault, fault | 0b01)),
                NextValue(rsr, Mux(ctl.qpi, Cat(rsr[4:], sample), Cat(rsr[1:], sample[0]))),
                NextValue(hsr, Mux(ctl.qpi, Cat(hsr[4:], host_data), Cat(hsr[1:], host_data[0]))),
                NextValue(dsr, Cat(dsr[1:], driven)),
                If(reading,
                    NextValue(in_left, in_left - 1),
                    If(missing, NextValue(undriven, undriven + 1)),
                ),
                NextValue(clk, 0),
                NextValue(wait, ctl.half - 1),
                If(ctl.half <= 1, NextState("NEXT")).Else(NextState("LOW")),
            ).Else(NextValue(wait, wait - 1)),
        )
        fsm.act("LOW",
            If(wait <= 1, NextState("NEXT")).Else(NextValue(wait, wait - 1)),
        )
        fsm.act("CS_HOLD",
            If(wait <= 1,
                NextValue(cs_n, 1),
                NextValue(done, ctl.go),
                NextState("IDLE"),
            ).Else(NextValue(wait, wait - 1)),
        )


def add_sim_host_master(soc, pins, ctl, name="sim_host"):
    """Add the master to ``soc`` (a ``TensorSoC``) through its ``add_core``
    as submodule ``name``, in a never-reset clock domain ``sim_host`` on the
    system clock; returns it (its ``pads`` go to the host port)."""
    soc.cd_sim_host = ClockDomain("sim_host", reset_less=True)
    soc.comb += soc.cd_sim_host.clk.eq(ClockSignal("sys"))
    return soc.add_core(name, ClockDomainsRenamer("sim_host")(SimHostMaster(pins, ctl)))
