"""``HostSPIPins``: the board's SPI/QPI host pins as the host port core
(cores/host_spi) sees them.

The board has the datasheet's pins: CS_N and CLK (inputs), MOSI (input,
SPI), MISO (bidirectional: the QPI strap, read at reset, then the SPI data
output) and Q0..Q3 (bidirectional, QPI).  The core takes each bidirectional
pin split into input / output / output enable (cores/host_spi/pins.py, the
simulation drives those directly); here each gets one tristate buffer.

CS_N clocks the PHY's transaction counter (eight flip-flops, the
``hspi_cs`` domain).  Not on a clock-capable pin (on the ULX3S it is GN0,
beside SCLK's GP0), it has no dedicated path to a global buffer, so
nextpnr's automatic promotion routed it from the pad into the buffer
through the fabric, and that arc failed to route at some placements
("Failed to route arc ... host_spi_cs_n ... G_CLKI_TDCC4").  The
``noglobal`` attribute keeps it on ordinary routing.  The fabric
clock reaches its flip-flops with skew (1.32 ns in one i5 build), so the
counter is a ripple counter whose flip-flops each feed only themselves
(cores/host_spi/phy.py): no hold check in those domains can fail.  A
build fails on any hold violation nextpnr lists (soc/bitstream.py).
"""

from migen import Record, TSTriple

from litex.gen import LiteXModule

from tensorsoc.cores.host_spi.pins import HOST_PINS

Q_LINES = 4


class HostSPIPins(LiteXModule):
    def __init__(self, pads):
        self.pads = Record(HOST_PINS)
        # No camera or sensor on the boards: the sensor stream never has data.
        self.sensor_pads = Record([("valid", 1), ("ready", 1), ("data", 8)])

        # # #

        pads.cs_n.attr.add(("noglobal", 1))
        self.comb += [
            self.pads.clk.eq(pads.clk),
            self.pads.cs_n.eq(pads.cs_n),
            self.pads.mosi.eq(pads.mosi),
            self.sensor_pads.valid.eq(0),
        ]
        miso = TSTriple()
        self.specials += miso.get_tristate(pads.miso)
        self.comb += [miso.o.eq(self.pads.miso_o), miso.oe.eq(self.pads.miso_oe), self.pads.miso_i.eq(miso.i)]
        for i in range(Q_LINES):
            t = TSTriple()
            self.specials += t.get_tristate(pads.q[i])
            self.comb += [
                t.o.eq(self.pads.q_o[i]),
                t.oe.eq(self.pads.q_oe[i]),
                self.pads.q_i[i].eq(t.i),
            ]
