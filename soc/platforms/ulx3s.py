"""ULX3S (Radiona) with an ECP5 LFE5U-85F in the CABGA381 package.

Only what tensorsoc uses is listed: the 25 MHz oscillator, the power button
as reset, the UART of the FT231X USB bridge, the SDR SDRAM (32 MiB
MT48LC16M16 or a compatible part) and the SPI/QPI host port on the J1
header.  Pin facts come from the ULX3S v3 schematic (radiona.org/ulx3s).
"""

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex.build.lattice import LatticePlatform

_io = [
    # 25 MHz oscillator.
    ("clk25", 0, Pins("G2"), IOStandard("LVCMOS33")),
    # BTN_PWRn: low while pressed; used as the SoC reset.
    ("rst_n", 0, Pins("R1"), IOStandard("LVCMOS33")),

    # UART console through the FT231X (the board's USB port US1).
    ("serial", 0,
        Subsignal("tx", Pins("L4")),
        Subsignal("rx", Pins("M1")),
        IOStandard("LVCMOS33"),
    ),

    # SDR SDRAM, 16-bit, 13 address lines; its clock comes from an ODDR.
    ("sdram_clock", 0, Pins("F19"), IOStandard("LVCMOS33")),
    ("sdram", 0,
        Subsignal("a",     Pins("M20 M19 L20 L19 K20 K19 K18 J20 J19 H20 N19 G20 G19")),
        Subsignal("dq",    Pins("J16 L18 M18 N18 P18 T18 T17 U20 E19 D20 D19 C20 E18 F18 J18 J17")),
        Subsignal("we_n",  Pins("T20")),
        Subsignal("ras_n", Pins("R20")),
        Subsignal("cas_n", Pins("T19")),
        Subsignal("cs_n",  Pins("P20")),
        Subsignal("cke",   Pins("F20")),
        Subsignal("ba",    Pins("P19 N20")),
        Subsignal("dm",    Pins("U19 E20")),
        IOStandard("LVCMOS33"),
        Misc("SLEWRATE=FAST"),
    ),

    # SPI/QPI host port (the inference-engine protocol, SPI mode 1: CPOL 0,
    # CPHA 1), the datasheet's pins on the J1 header's first four GP/GN pairs:
    #   SCLK = GP0, CS_N = GN0, MOSI = GP1, MISO = GN1 (pulled up: SPI;
    #   tied to ground by the host: QPI), Q0 = GP2, Q1 = GN2, Q2 = GP3,
    #   Q3 = GN3.
    # cores/host_spi drives them through soc/targets/host_spi_pins.py.
    ("host_spi", 0,
        Subsignal("clk",  Pins("B11")),
        Subsignal("cs_n", Pins("C11"), Misc("PULLMODE=UP")),
        Subsignal("mosi", Pins("A10")),
        Subsignal("miso", Pins("A11"), Misc("PULLMODE=UP")),
        Subsignal("q",    Pins("A9 B10 B9 C10"), Misc("PULLMODE=UP")),
        IOStandard("LVCMOS33"),
    ),

    # User LEDs D0..D7 (active high).
    ("user_led", 0, Pins("B2"), IOStandard("LVCMOS33")),
    ("user_led", 1, Pins("C2"), IOStandard("LVCMOS33")),
    ("user_led", 2, Pins("C1"), IOStandard("LVCMOS33")),
    ("user_led", 3, Pins("D2"), IOStandard("LVCMOS33")),
    ("user_led", 4, Pins("D1"), IOStandard("LVCMOS33")),
    ("user_led", 5, Pins("E2"), IOStandard("LVCMOS33")),
    ("user_led", 6, Pins("E1"), IOStandard("LVCMOS33")),
    ("user_led", 7, Pins("H3"), IOStandard("LVCMOS33")),
]

DEVICES = ("LFE5U-12F", "LFE5U-25F", "LFE5U-45F", "LFE5U-85F")


class ULX3SPlatform(LatticePlatform):
    """ULX3S; ``device`` is the ECP5 fitted (the board exists with four)."""

    default_clk_name = "clk25"
    default_clk_period = 1e9 / 25e6

    def __init__(self, device="LFE5U-85F"):
        if device not in DEVICES:
            raise ValueError(f"ULX3S device {device!r}: expected one of {', '.join(DEVICES)}")
        LatticePlatform.__init__(self, f"{device}-6BG381C", _io, toolchain="trellis")

    def do_finalize(self, fragment):
        LatticePlatform.do_finalize(self, fragment)
        self.add_period_constraint(self.lookup_request("clk25", loose=True), self.default_clk_period)
