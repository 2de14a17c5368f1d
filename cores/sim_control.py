"""Simulation control: lets the firmware end a simulation with an exit code."""

from migen import Signal, If

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStorage, CSRField
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

        # # #

        self.sync += [
            pads.finish.eq(self.finish.fields.valid),
            If(self.finish.fields.valid, pads.exit_code.eq(self.finish.fields.exit_code)),
        ]
