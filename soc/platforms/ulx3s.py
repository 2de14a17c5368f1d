"""ULX3S (Radiona) with an ECP5 in the CABGA381 package: litex-boards'
platform (``litex_boards.platforms.radiona_ulx3s``, revision 2.0: the
boards v2.0 to v3.0.x) with tensorsoc's SPI/QPI host port added as an
extension.

From litex-boards, used as they are: the 25 MHz oscillator ``clk25`` (G2),
the UART ``serial`` of the FT231X USB bridge, the SDR SDRAM ``sdram`` and
its clock ``sdram_clock``; and the reset button ``rst`` (R1, the FIRE1
button: high while pressed), to which this module adds the FPGA's pull-down.
Added here: ``host_spi``.  tests/test_platforms.py checks the pins against
a table.
"""

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex_boards.platforms import radiona_ulx3s

# SPI/QPI host port (the inference-engine protocol, SPI mode 1: CPOL 0,
# CPHA 1), the datasheet's pins on the J1 header's first four GP/GN pairs
# (litex-boards' "gpio" 0..3, whose p/n are GPn/GNn):
#   SCLK = GP0, CS_N = GN0, MOSI = GP1, MISO = GN1 (pulled up: SPI;
#   tied to ground by the host: QPI), Q0 = GP2, Q1 = GN2, Q2 = GP3,
#   Q3 = GN3.
# cores/host_spi drives them through soc/targets/host_spi_pins.py.
HOST_SPI = [
    ("host_spi", 0,
        Subsignal("clk",  Pins("B11")),
        Subsignal("cs_n", Pins("C11"), Misc("PULLMODE=UP")),
        Subsignal("mosi", Pins("A10")),
        Subsignal("miso", Pins("A11"), Misc("PULLMODE=UP")),
        Subsignal("q",    Pins("A9 B10 B9 C10"), Misc("PULLMODE=UP")),
        IOStandard("LVCMOS33"),
    ),
]


class ULX3SPlatform(radiona_ulx3s.Platform):
    """ULX3S; ``device`` is the ECP5 fitted (LFE5U-12F, -25F, -45F or -85F)."""

    # The reset button (soc/targets/crg.py): R1 is FIRE1, pulled down and
    # high while pressed (emard/ulx3s doc/constraints/ulx3s_v20.lpf).  The
    # power button BTN_PWRn (D6) is the active-low one; tensorsoc does not
    # use it.
    reset_name = "rst"
    reset_active_low = False

    def __init__(self, device="LFE5U-85F"):
        if device not in ("LFE5U-12F", "LFE5U-25F", "LFE5U-45F", "LFE5U-85F"):
            raise ValueError(f"ULX3S device {device!r}: expected LFE5U-12F, -25F, -45F or -85F")
        radiona_ulx3s.Platform.__init__(self, device=device, revision="2.0", toolchain="trellis")
        # litex-boards' reset resource with the pull-down the board's
        # reference constraints give FIRE1, so a released button reads 0
        # whatever the tools' default; prepended, it is the one requested.
        rst = next(r for r in self.constraint_manager.available if r[:2] == ("rst", 0))
        self.add_extension([rst + (Misc("PULLMODE=DOWN"),)], prepend=True)
        self.add_extension(HOST_SPI)
