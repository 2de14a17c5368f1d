"""Colorlight i5 (v7.0) module on its extension board: an ECP5 LFE5U-25F
in the CABGA381 package.

Listed: the 25 MHz oscillator, the reset button, the UART (routed to the
extension board's USB debugger), the 32-bit SDR SDRAM (8 MiB, M12L64322A /
EM638325 class; CS_N, CKE and DM are tied on the module) and the SPI/QPI
host port on the extension board's PMOD P3 ("pmode").  Pin facts from the
i5 v7.0 and extension-board documentation (github.com/wuxx/Colorlight-FPGA-Projects).
"""

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex.build.lattice import LatticePlatform

# PMOD P3 of the extension board, pins 1-4 then 7-10.
PMOD_P3 = "C17 B18 B20 F20 A18 A19 B19 D20".split()

_io = [
    # 25 MHz oscillator.
    ("clk25", 0, Pins("P3"), IOStandard("LVCMOS33")),
    # Reset button (low while pressed).
    ("rst_n", 0, Pins("K18"), IOStandard("LVCMOS33"), Misc("PULLMODE=UP")),

    # UART console.
    ("serial", 0,
        Subsignal("tx", Pins("J17")),
        Subsignal("rx", Pins("H18")),
        IOStandard("LVCMOS33"),
    ),

    # SDR SDRAM, 32-bit, 11 address lines.
    ("sdram_clock", 0, Pins("B9"), IOStandard("LVCMOS33")),
    ("sdram", 0,
        Subsignal("a",     Pins("B13 C14 A16 A17 B16 B15 A14 A13 A12 A11 B12")),
        Subsignal("dq",    Pins("D15 E14 E13 D12 E12 D11 C10 B17 B8 A8 C7 A7 A6 B6 A5 B5 "
                                "D5 C5 D6 C6 E7 D7 E8 D8 E9 D9 E11 C11 C12 D13 D14 C15")),
        Subsignal("we_n",  Pins("A10")),
        Subsignal("ras_n", Pins("B10")),
        Subsignal("cas_n", Pins("A9")),
        Subsignal("ba",    Pins("B11 C8")),
        IOStandard("LVCMOS33"),
        Misc("SLEWRATE=FAST"),
    ),

    # SPI/QPI host port (SPI mode 1: CPOL 0, CPHA 1) on PMOD P3, the
    # datasheet's pins: the top row in the Digilent SPI PMOD order (pin 1
    # CS_N, 2 MOSI, 3 MISO, 4 SCLK; MISO pulled up: SPI, tied to ground by
    # the host: QPI), Q0..Q3 on the bottom row (pins 7..10).
    # cores/host_spi drives them through soc/targets/host_spi_pins.py.
    ("host_spi", 0,
        Subsignal("clk",  Pins(PMOD_P3[3])),
        Subsignal("cs_n", Pins(PMOD_P3[0]), Misc("PULLMODE=UP")),
        Subsignal("mosi", Pins(PMOD_P3[1])),
        Subsignal("miso", Pins(PMOD_P3[2]), Misc("PULLMODE=UP")),
        Subsignal("q",    Pins(*PMOD_P3[4:8]), Misc("PULLMODE=UP")),
        IOStandard("LVCMOS33"),
    ),

    # The module's LED (active low).
    ("user_led_n", 0, Pins("U16"), IOStandard("LVCMOS33")),
]


class ColorlightI5Platform(LatticePlatform):
    default_clk_name = "clk25"
    default_clk_period = 1e9 / 25e6

    def __init__(self):
        LatticePlatform.__init__(self, "LFE5U-25F-6BG381C", _io, toolchain="trellis")

    def do_finalize(self, fragment):
        LatticePlatform.do_finalize(self, fragment)
        self.add_period_constraint(self.lookup_request("clk25", loose=True), self.default_clk_period)
