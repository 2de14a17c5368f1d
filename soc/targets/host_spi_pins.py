"""``HostSPIPins``: the board's SPI/QPI host pins as the host port core
(cores/host_spi) sees them.

The core takes ``clk``, ``cs_n`` and each data line split into ``dq_i`` /
``dq_o`` / ``dq_oe`` (the simulation drives those directly); on a board the
four data lines are bidirectional pins, one tristate buffer each.  MISO
(IO1) is an output in SPI mode and, tied low by the host at reset, selects
QPI: the core reads it through ``dq_i[1]`` before enabling its driver.
"""

from migen import Record, TSTriple

from litex.gen import LiteXModule

DATA_LINES = 4


class HostSPIPins(LiteXModule):
    def __init__(self, pads):
        self.pads = Record([("clk", 1), ("cs_n", 1), ("dq_i", DATA_LINES), ("dq_o", DATA_LINES),
                            ("dq_oe", DATA_LINES)])
        # No camera or sensor on the boards: the sensor stream never has data.
        self.sensor_pads = Record([("valid", 1), ("ready", 1), ("data", 8)])

        # # #

        self.comb += [
            self.pads.clk.eq(pads.clk),
            self.pads.cs_n.eq(pads.cs_n),
            self.sensor_pads.valid.eq(0),
        ]
        for i in range(DATA_LINES):
            t = TSTriple()
            self.specials += t.get_tristate(pads.dq[i])
            self.comb += [
                t.o.eq(self.pads.dq_o[i]),
                t.oe.eq(self.pads.dq_oe[i]),
                self.pads.dq_i[i].eq(t.i),
            ]
