"""Colorlight i5 (v7.0) module on its extension board, an ECP5 LFE5U-25F in
the CABGA381 package: litex-boards' platform
(``litex_boards.platforms.colorlight_i5``) with tensorsoc's SPI/QPI host
port added as an extension.

From litex-boards, used as they are: the 25 MHz oscillator ``clk25`` (P3),
the reset button ``cpu_reset_n`` (K18, pulled up, low while pressed), the
UART ``serial`` (routed to the extension board's USB debugger), the 32-bit
SDR SDRAM ``sdram`` (8 MiB, M12L64322A / EM638325 class; CS_N, CKE and DM
tied on the module) and ``sdram_clock``.  Added here: ``host_spi`` on the
extension board's PMOD P3, litex-boards' connector ``pmode``.
tests/test_platforms.py checks the pins against a table.
"""

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex_boards.platforms import colorlight_i5

# SPI/QPI host port (SPI mode 1: CPOL 0, CPHA 1) on PMOD P3, the
# datasheet's pins: the top row in the Digilent SPI PMOD order (pin 1
# CS_N, 2 MOSI, 3 MISO, 4 SCLK; MISO pulled up: SPI, tied to ground by
# the host: QPI), Q0..Q3 on the bottom row (pins 7..10).  ``pmode:N`` is
# the connector's N-th pin: PMOD pins 1-4 then 7-10.
# cores/host_spi drives them through soc/targets/host_spi_pins.py.
HOST_SPI = [
    ("host_spi", 0,
        Subsignal("clk",  Pins("pmode:3")),
        Subsignal("cs_n", Pins("pmode:0"), Misc("PULLMODE=UP")),
        Subsignal("mosi", Pins("pmode:1")),
        Subsignal("miso", Pins("pmode:2"), Misc("PULLMODE=UP")),
        Subsignal("q",    Pins("pmode:4 pmode:5 pmode:6 pmode:7"), Misc("PULLMODE=UP")),
        IOStandard("LVCMOS33"),
    ),
]


class ColorlightI5Platform(colorlight_i5.Platform):
    """Colorlight i5 v7.0 (LFE5U-25F-6BG381C)."""

    # The extension board's button (soc/targets/crg.py): pulled up, low
    # while pressed.
    reset_name = "cpu_reset_n"
    reset_active_low = True

    def __init__(self):
        colorlight_i5.Platform.__init__(self, board="i5", revision="7.0", toolchain="trellis")
        self.add_extension(HOST_SPI)
