"""Simulation control: lets the firmware end a simulation with an exit code."""

from pathlib import Path

from migen import Instance, Signal, If

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus, CSRStorage, CSRField
from litex.soc.integration.doc import ModuleDoc

# The boot flags a testbench sets for the firmware, in bit order.  This is the
# one definition: the CSR fields below (and so the firmware's generated csr.h
# offsets, which sw/firmware/platform.h turns into BOOT_* masks) and the
# testbenches' masks (``BOOT_FLAG``) come from it.
BOOT_FLAGS = (
    ("skip_memtest", "Skip the boot-time main RAM test (shorter test runs)."),
    ("exit_after_boot", "End the simulation after the boot checks instead of serving the host."),
    ("te_trace", "Trace each accelerated layer (LOG_ON/LOG_OFF) and print the TensorEngine's "
                 "activity report on the console."),
    ("quick_memtest", "Boot memory test with every bus check (data lines, each address line of main RAM, "
                      "byte lanes) but the random fill over the first 4 KiB only, not memtest_size."),
)
BOOT_FLAG = {name: 1 << i for i, (name, _) in enumerate(BOOT_FLAGS)}


class SimControl(LiteXModule):
    """Ends the simulation from firmware.

    Only present in simulation builds.  Writing ``finish`` raises the ``finish``
    pad for one cycle with ``exit_code`` on the ``exit_code`` pad; the
    Verilator harness (and the cocotb testbench) then stops the simulation
    and returns that code.
    """

    def __init__(self, pads):
        self.intro = ModuleDoc(__doc__)
        self.finish = CSRStorage(description="Write to end the simulation.", fields=[
            CSRField("exit_code", size=8, description="Status the simulation exits with (0 = success)."),
            CSRField("valid", size=1, offset=31, pulse=True,
                     description="Write 1 to finish (write-only pulse)."),
        ])

        self.boot_flags = CSRStatus(description="Flags the testbench sets for the firmware.", fields=[
            CSRField(name, size=1, description=desc) for name, desc in BOOT_FLAGS])

        # # #

        assert len(BOOT_FLAGS) <= len(pads.boot_flags), "more boot flags than boot_flags pads"
        self.comb += [getattr(self.boot_flags.fields, name).eq(pads.boot_flags[i])
                      for i, (name, _) in enumerate(BOOT_FLAGS)]

        self.sync += [
            pads.finish.eq(self.finish.fields.valid),
            If(self.finish.fields.valid, pads.exit_code.eq(self.finish.fields.exit_code)),
        ]


class SimClock(LiteXModule):
    """The simulation SoC's clock: the ``sys_clk`` pin, or (``pads.en``
    high) a generator inside the Verilated model (cores/sim_clock.v) at the
    configuration's frequency.  The generator needs a build verilated with
    ``--timing`` and ``+define+TSOC_SIM_CLOCK_TIMING`` (the cocotb build,
    verification/soc/runner.py); a testbench then starts the clock by
    raising ``sim_clock_en`` instead of toggling ``sys_clk`` itself, and
    the simulator runs without a Python or GPI step per edge.  ``pads.clk``
    shows the clock the SoC runs on, whichever drives it: testbenches wait
    for its edges."""

    SOURCE = Path(__file__).with_name("sim_clock.v")

    def __init__(self, pin, pads, sys_clk_freq):
        self.clk = Signal()
        gen = Signal()
        half_ps = round(1e12 / sys_clk_freq / 2)
        self.specials += Instance("tsoc_sim_clock", p_HALF_PS=half_ps, i_en=pads.en, o_clk=gen)
        self.comb += [self.clk.eq(pin | gen), pads.clk.eq(self.clk)]
