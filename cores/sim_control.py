"""Simulation control: lets the firmware end a simulation with an exit code."""

from migen import Signal, If

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus, CSRStorage, CSRField
from litex.soc.integration.doc import ModuleDoc


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
            CSRField("skip_memtest", size=1, description="Skip the boot-time main RAM test (shorter test runs)."),
            CSRField("exit_after_boot", size=1,
                     description="End the simulation after the boot checks instead of serving the host."),
            CSRField("te_trace", size=1,
                     description="Trace each accelerated layer (LOG_ON/LOG_OFF) and print the TensorEngine's "
                                 "activity report on the console."),
        ])

        # # #

        self.comb += [
            self.boot_flags.fields.skip_memtest.eq(pads.boot_flags[0]),
            self.boot_flags.fields.exit_after_boot.eq(pads.boot_flags[1]),
            self.boot_flags.fields.te_trace.eq(pads.boot_flags[2]),
        ]

        self.sync += [
            pads.finish.eq(self.finish.fields.valid),
            If(self.finish.fields.valid, pads.exit_code.eq(self.finish.fields.exit_code)),
        ]
