"""The board platforms: litex-boards' platform files with tensorsoc's host
port added as an extension (soc/platforms/).  The pins tensorsoc uses are
checked against a table here, so a litex-boards that moved one fails; the
reset button's polarity is checked by simulating the clock generator's reset
logic."""

import tomllib
from importlib.metadata import version

import pytest

from tensorsoc.soc.builder import ROOT
from tensorsoc.soc.targets import TARGETS, get

LVCMOS33 = "LVCMOS33"

# Every pin tensorsoc's targets request, by resource and subsignal (None: a
# resource without subsignals): (sites, pull mode or None).  The sites are
# those of the hand-written platforms these replaced; the generated .lpf of
# both boards was identical but for the reset port's name (rst_n before) and
# the ULX3S reset's pull-down (none before).
PINS = {
    "ulx3s": {
        ("clk25", None): ("G2", None),
        ("rst", None): ("R1", "DOWN"),          # FIRE1, high while pressed
        ("serial", "tx"): ("L4", None),
        ("serial", "rx"): ("M1", None),
        ("sdram_clock", None): ("F19", None),
        ("sdram", "a"): ("M20 M19 L20 L19 K20 K19 K18 J20 J19 H20 N19 G20 G19", None),
        ("sdram", "dq"): ("J16 L18 M18 N18 P18 T18 T17 U20 E19 D20 D19 C20 E18 F18 J18 J17", None),
        ("sdram", "we_n"): ("T20", None),
        ("sdram", "ras_n"): ("R20", None),
        ("sdram", "cas_n"): ("T19", None),
        ("sdram", "cs_n"): ("P20", None),
        ("sdram", "cke"): ("F20", None),
        ("sdram", "ba"): ("P19 N20", None),
        ("sdram", "dm"): ("U19 E20", None),
        # The host port on J1: GP0 SCLK, GN0 CS_N, GP1 MOSI, GN1 MISO, GP2/GN2/GP3/GN3 Q0..Q3.
        ("host_spi", "clk"): ("B11", None),
        ("host_spi", "cs_n"): ("C11", "UP"),
        ("host_spi", "mosi"): ("A10", None),
        ("host_spi", "miso"): ("A11", "UP"),
        ("host_spi", "q"): ("A9 B10 B9 C10", "UP"),
    },
    "colorlight_i5": {
        ("clk25", None): ("P3", None),
        ("cpu_reset_n", None): ("K18", "UP"),   # the extension board's button, low while pressed
        ("serial", "tx"): ("J17", None),
        ("serial", "rx"): ("H18", None),
        ("sdram_clock", None): ("B9", None),
        ("sdram", "a"): ("B13 C14 A16 A17 B16 B15 A14 A13 A12 A11 B12", None),
        ("sdram", "dq"): ("D15 E14 E13 D12 E12 D11 C10 B17 B8 A8 C7 A7 A6 B6 A5 B5 "
                          "D5 C5 D6 C6 E7 D7 E8 D8 E9 D9 E11 C11 C12 D13 D14 C15", None),
        ("sdram", "we_n"): ("A10", None),
        ("sdram", "ras_n"): ("B10", None),
        ("sdram", "cas_n"): ("A9", None),
        ("sdram", "ba"): ("B11 C8", None),
        # The host port on PMOD P3: pin 1 CS_N, 2 MOSI, 3 MISO, 4 SCLK, 7..10 Q0..Q3.
        ("host_spi", "clk"): ("F20", None),
        ("host_spi", "cs_n"): ("C17", "UP"),
        ("host_spi", "mosi"): ("B18", None),
        ("host_spi", "miso"): ("B20", "UP"),
        ("host_spi", "q"): ("A18 A19 B19 D20", "UP"),
    },
}

# The platform litex-boards defines for each board, and the ECP5 it names.
LITEX_BOARDS = {
    "ulx3s": ("litex_boards.platforms.radiona_ulx3s", "LFE5U-85F-6BG381C", "rst", False),
    "colorlight_i5": ("litex_boards.platforms.colorlight_i5", "LFE5U-25F-6BG381C", "cpu_reset_n", True),
}


def _constraints(platform, resources):
    """{(resource, subsignal): (sites, [other constraints])} of the requested resources."""
    for name in resources:
        platform.request(name)
    out = {}
    for _, pins, others, (name, _, sub) in platform.constraint_manager.get_sig_constraints():
        out[(name, sub)] = (" ".join(pins), others)
    return out


def test_every_board_is_in_the_table():
    assert sorted(PINS) == sorted(TARGETS) == sorted(LITEX_BOARDS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_platform_from_litex_boards(name):
    """The board's platform is litex-boards' (the pinned version), for the
    device, clock and toolchain of the hand-written one it replaced; the
    reset resource is litex-boards' own."""
    import importlib
    module, device, reset_name, active_low = LITEX_BOARDS[name]
    platform = get(name).make_platform()
    assert isinstance(platform, importlib.import_module(module).Platform)
    assert platform.device == device
    assert platform.toolchain.__class__.__name__ == "LatticeTrellisToolchain"
    assert platform.default_clk_name == "clk25" and platform.default_clk_period == 1e9 / 25e6
    assert (platform.reset_name, platform.reset_active_low) == (reset_name, active_low)
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"litex-boards=={version('litex-boards')}" in deps


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_pins(name):
    """Every pin the targets use at its site, LVCMOS33, with the pull-ups of
    the host port (and of the Colorlight i5's reset button)."""
    table = PINS[name]
    platform = get(name).make_platform()
    located = _constraints(platform, sorted({resource for resource, _ in table}))
    assert sorted(located) == sorted(table), f"{name}: resources or subsignals differ from the table"
    for key, (sites, pull) in table.items():
        got_sites, others = located[key]
        assert got_sites == sites, f"{name} {key}: {got_sites}, expected {sites}"
        standards = {o.name for o in others if type(o).__name__ == "IOStandard"}
        assert standards == {LVCMOS33}, f"{name} {key}: IO standard {standards}"
        pulls = {o.misc.split("=")[1] for o in others
                 if type(o).__name__ == "Misc" and o.misc.startswith("PULLMODE=")}
        assert pulls == ({pull} if pull else set()), f"{name} {key}: pull {pulls}, expected {pull}"
        if key[0] == "sdram":
            assert any(getattr(o, "misc", None) == "SLEWRATE=FAST" for o in others)


def test_ulx3s_host_pins_are_j1_gpio():
    """On the ULX3S the host port is litex-boards' "gpio" 0..3 (J1's GPn/GNn
    pairs): SCLK/CS_N, MOSI/MISO, Q0/Q1, Q2/Q3."""
    platform = get("ulx3s").make_platform()
    pairs = [platform.request("gpio", i) for i in range(4)]
    host = platform.request("host_spi")
    sites = {id(sig): pins for sig, pins, _, _ in platform.constraint_manager.get_sig_constraints()}
    j1 = [sites[id(getattr(p, pol))][0] for p in pairs for pol in ("p", "n")]
    ours = [sites[id(host.clk)][0], sites[id(host.cs_n)][0], sites[id(host.mosi)][0],
            sites[id(host.miso)][0]] + sites[id(host.q)]
    assert ours == j1


@pytest.mark.parametrize("name,pressed_level", [("ulx3s", 1), ("colorlight_i5", 0)])
def test_reset_button_polarity(name, pressed_level):
    """Simulate the clock generator's reset logic: the PLL (and with it every
    clock domain) is held in reset while the button is pressed -- the ULX3S's
    FIRE1 (R1) reads 1 when pressed and 0 when released, the Colorlight i5's
    K18 the opposite -- and runs while it is released."""
    from migen import Module
    from migen.sim import run_simulation
    from tensorsoc.soc.targets.crg import ECP5CRG

    target = get(name)
    platform = target.make_platform()
    crg = ECP5CRG(platform, target.clkin_freq, target.config.sys_clk_freq)
    pad = platform.lookup_request(platform.reset_name)

    class ResetLogic(Module):
        """The CRG's own combinational statements (button -> PLL reset),
        without the PLL and DDR instances the simulator cannot run."""
        def __init__(self):
            self.comb += crg._fragment.comb

    seen = {}

    def bench():
        for level in (0, 1, pressed_level, 1 - pressed_level):
            for soft in (0, 1):
                yield pad.eq(level)
                yield crg.rst.eq(soft)
                yield
                seen[(level, soft)] = ((yield crg.button), (yield crg.pll.reset))

    run_simulation(ResetLogic(), bench())
    released = 1 - pressed_level
    assert seen[(pressed_level, 0)] == (1, 1), f"{name}: button pressed, the PLL must be in reset"
    assert seen[(released, 0)] == (0, 0), f"{name}: button released, the PLL must run"
    assert seen[(released, 1)] == (0, 1), f"{name}: the SoC's soft reset must reset the PLL"
