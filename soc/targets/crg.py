"""``ECP5CRG``: the clocks and resets of a tensorsoc board with an ECP5 and
SDR SDRAM.

One PLL from the board oscillator gives three clock domains:

* ``sys``    -- the SoC (VexRiscv, bus, UART, LiteDRAM controller);
* ``sys_ps`` -- ``sys`` shifted by 180 degrees; it clocks the ODDR that
  drives the SDRAM clock pin, so the SDRAM samples commands and write data
  in the middle of the ``sys`` cycle;
* ``accel``  -- optional (``SoCConfig.accel_clk_freq`` nonzero): a clock of
  its own for the accelerator, which then reaches ``sys`` through the
  crossings of soc/accel_domain.py (docs/fpga.md "Clocks").

Every domain is held in reset until the PLL locks and while the board's
reset button is pressed.  The platform names the button's resource and its
polarity (``reset_name``, ``reset_active_low``; soc/platforms/): the ULX3S's
FIRE1 (R1) is high while pressed, the Colorlight i5's button (K18) low.
"""

from migen import ClockDomain, Signal

from litex.build.io import DDROutput
from litex.gen import LiteXModule
from litex.soc.cores.clock import ECP5PLL
from litex.soc.integration.doc import ModuleDoc

from tensorsoc.soc.targets.board import TargetError


# How far a PLL output may be from the frequency asked for (LiteX's
# create_clkout margin): 100 ppm, the frequencies the configuration names
# are the ones the SoC runs at.
PLL_MARGIN = 1e-4


def pll_outputs_near(pll, clkin_freq, freq, with_freq=None):
    """The frequencies next below and next above ``freq`` that ``pll`` (an
    ``ECP5PLL``) makes exactly from ``clkin_freq`` on one VCO, with
    ``with_freq`` from the same VCO if given."""
    made = set()
    for clki_div in range(*pll.clki_div_range):
        pfd = clkin_freq / clki_div
        if pfd < pll.pfd_freq_range[0]:
            break
        for n in range(1, int(pll.vco_freq_range[1] // pfd) + 1):
            vco = pfd * n
            if vco < pll.vco_freq_range[0]:
                continue
            if with_freq is not None and abs(vco / round(vco / with_freq) - with_freq) > with_freq * PLL_MARGIN:
                continue
            made |= {vco / d for d in range(*pll.clko_div_range)
                     if pll.clko_freq_range[0] <= vco / d <= pll.clko_freq_range[1]}
    below = [f for f in made if f < freq]
    above = [f for f in made if f > freq]
    return ([max(below)] if below else []) + ([min(above)] if above else [])


class ECP5CRG(LiteXModule):
    def __init__(self, platform, clkin_freq, sys_clk_freq, accel_clk_freq=None):
        self.rst = Signal()   # soft reset from the SoC (LiteX's ctrl core)
        self.button = Signal()   # the board's reset button, high while pressed
        self.cd_sys = ClockDomain()
        self.cd_sys_ps = ClockDomain()
        domains = [(self.cd_sys, sys_clk_freq), (self.cd_sys_ps, sys_clk_freq)]
        if accel_clk_freq is not None:
            self.cd_accel = ClockDomain()
            domains.append((self.cd_accel, accel_clk_freq))
        self.doc = ModuleDoc(title="Clocks", body=(
            f"PLL from the {clkin_freq / 1e6:g} MHz board clock: sys {sys_clk_freq / 1e6:g} MHz, "
            f"sys_ps {sys_clk_freq / 1e6:g} MHz at 180 degrees (SDRAM clock)"
            + (f", accel {accel_clk_freq / 1e6:g} MHz (accelerator)." if accel_clk_freq is not None else ".")))

        # # #

        clkin = platform.request(platform.default_clk_name)
        pad = platform.request(platform.reset_name)
        self.comb += self.button.eq(~pad if platform.reset_active_low else pad)

        # Each output within PLL_MARGIN of its frequency: LiteX's default
        # (1%) gave sys 30.26 MHz for 30 beside accel 47.92 for 48 (a 575
        # MHz VCO) while the firmware's UART divisor, the SDRAM timings and
        # the timing report assume 30 and 48.
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(self.button | self.rst)
        pll.register_clkin(clkin, clkin_freq)
        pll.create_clkout(self.cd_sys, sys_clk_freq, margin=PLL_MARGIN)
        pll.create_clkout(self.cd_sys_ps, sys_clk_freq, phase=180, margin=PLL_MARGIN)
        if accel_clk_freq is not None:
            pll.create_clkout(self.cd_accel, accel_clk_freq, margin=PLL_MARGIN)
        # Checked here, for the message; LiteX computes it again when the
        # PLL is finalised (a feedback output compute_config adds is taken
        # back, or that second run finds no configuration).
        outputs = (dict(pll.clkouts), pll.nclkouts)
        try:
            pll.compute_config()
        except ValueError:
            if accel_clk_freq is None:
                near, field = pll_outputs_near(pll, clkin_freq, sys_clk_freq), "sys_clk_freq"
                clocks = f"sys {sys_clk_freq / 1e6:g} MHz"
            else:
                near = pll_outputs_near(pll, clkin_freq, accel_clk_freq, with_freq=sys_clk_freq)
                field = "accel_clk_freq"
                clocks = f"sys {sys_clk_freq / 1e6:g} MHz and accel {accel_clk_freq / 1e6:g} MHz"
            fix = (f"; the nearest it makes: --set {field}=" + " or ".join(f"{f:.0f}" for f in near)) if near else ""
            raise TargetError(
                f"the ECP5 PLL cannot make {clocks} from the {clkin_freq / 1e6:g} MHz board clock within "
                f"{PLL_MARGIN * 1e6:g} ppm: every output is one VCO frequency ({pll.vco_freq_range[0] / 1e6:g}-"
                f"{pll.vco_freq_range[1] / 1e6:g} MHz, a multiple of the board clock / CLKI_DIV, itself at "
                f"least {pll.pfd_freq_range[0] / 1e6:g} MHz) divided by an integer{fix}") from None
        finally:
            pll.clkouts, pll.nclkouts = outputs

        # SDRAM clock: the phase-shifted clock through an output DDR register.
        self.specials += DDROutput(1, 0, platform.request("sdram_clock"), self.cd_sys_ps.clk)

        # Constrain each domain on its own net (kept, so nextpnr reports it
        # under the domain's name) rather than on nextpnr's derived PLL clocks.
        for cd, freq in domains:
            cd.clk.attr.add("keep")
            platform.add_platform_command(f'FREQUENCY NET "{{clk}}" {freq / 1e6:g} MHz;', clk=cd.clk)
