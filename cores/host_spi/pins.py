"""The host port's pins as the datasheet names them, and the data lines the
PHY shifts.

The datasheet (``/work/shared/seeds/inference_engine_datasheet.rst``, "Pin
functions") gives SPI and QPI pins of their own: CS_N and CLK always, MOSI
and MISO for SPI only, Q0..Q3 for QPI only.  "If you want to use it with the
QPI interface, then you should tie the MISO pin to ground": MISO is the mode
strap, read at reset, and in QPI it stays tied low for the whole session, so
the device must never drive it there.

At the SoC's boundary (the simulation top, a board's pins) the port has
those pins, each bidirectional one split into input / output / output
enable:

=========  =======================================  =====================
Pin        signals                                  use
=========  =======================================  =====================
CS_N       ``cs_n`` (in)                            always
CLK        ``clk`` (in)                             always
MOSI       ``mosi`` (in)                            SPI: host data
MISO       ``miso_i`` (in), ``miso_o``, ``miso_oe``  strap at reset; SPI: device data
Q0..Q3     ``q_i[4]`` (in), ``q_o[4]``, ``q_oe[4]``  QPI: data, both directions
=========  =======================================  =====================

Inside, the PHY shifts four *data lines* ``dq_i`` / ``dq_o`` / ``dq_oe``:
host data on line 0 (SPI) or lines 3..0 (QPI), device data on line 1 (SPI)
or lines 3..0 (QPI).  :func:`connect_lines` maps one onto the other for the
mode strapped at reset: in SPI the Q pins are never driven, in QPI MISO is
never driven.
"""

from migen import C, Cat, Mux, Record

HOST_PINS = [("clk", 1), ("cs_n", 1), ("mosi", 1), ("miso_i", 1), ("miso_o", 1), ("miso_oe", 1),
             ("q_i", 4), ("q_o", 4), ("q_oe", 4)]
PIN_INPUTS = ("clk", "cs_n", "mosi", "miso_i", "q_i")
PIN_OUTPUTS = ("miso_o", "miso_oe", "q_o", "q_oe")

DATA_LINES = [("clk", 1), ("cs_n", 1), ("dq_i", 4), ("dq_o", 4), ("dq_oe", 4)]


def pins_record(name=None):
    return Record(HOST_PINS, name=name)


def sim_io():
    """The simulation top's ``host_spi`` ports (soc/platforms/sim.py)."""
    from litex.build.generic_platform import Pins, Subsignal
    return ("host_spi", 0, *[Subsignal(n, Pins(w)) for n, w in HOST_PINS])


def connect_lines(pins, qpi):
    """Statements tying the datasheet ``pins`` to a new data-lines record for
    the mode ``qpi`` (static after reset); returns (record, statements)."""
    lines = Record(DATA_LINES)
    stmts = [
        lines.clk.eq(pins.clk),
        lines.cs_n.eq(pins.cs_n),
        # SPI: MOSI on line 0; lines 3..1 idle high (unused by the PHY).
        lines.dq_i.eq(Mux(qpi, pins.q_i, Cat(pins.mosi, C(0b111, 3)))),
        pins.miso_o.eq(lines.dq_o[1]),
        pins.miso_oe.eq(lines.dq_oe[1] & ~qpi),
        pins.q_o.eq(lines.dq_o),
        pins.q_oe.eq(Mux(qpi, lines.dq_oe, 0)),
    ]
    return lines, stmts
