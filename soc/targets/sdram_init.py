"""``SDRAMInit``: initialises an SDR SDRAM in gateware, so the firmware finds
main RAM ready at reset.

The LiteX BIOS initialises SDRAM in software (liblitedram's ``sdram_init``,
through the DFII CSRs).  tensorsoc's firmware runs without the BIOS and
knows nothing about SDRAM, the same image as in simulation: on the boards this
module replays LiteDRAM's own init sequence (``litedram.init``) on the DFI
injector's external port while it holds the CPU in reset, then hands the DFI
to the LiteDRAM controller.
"""

from migen import Array, If, Replicate, Signal

from litex.gen import LiteXModule
from litex.soc.integration.doc import ModuleDoc

from litedram.init import get_sdram_phy_init_sequence

# What each DFII flag of litedram.init's command strings drives.
_COMMAND_FLAGS = {"DFII_COMMAND_CS": "cs", "DFII_COMMAND_RAS": "ras", "DFII_COMMAND_CAS": "cas",
                  "DFII_COMMAND_WE": "we"}
_CONTROL_CKE = "DFII_CONTROL_CKE"

# SDR SDRAMs want 100 us of stable clock before the first command; LiteDRAM's
# software waits a few ms (20000 delay-loop turns).  Wait 200 us.
POWER_UP_WAIT_S = 200e-6


def init_steps(phy_settings, timing_settings, clk_freq):
    """LiteDRAM's init sequence as steps the gateware replays:
    ``(comment, address, bank, flags, wait_cycles)``, ``flags`` a set of
    "cs"/"ras"/"cas"/"we" (a command) or {"cke"} (CKE high, no command).

    Each step is followed by at least the longest command recovery of the
    module (tRP, tRFC, tMRD = 2 clocks) -- the software sequence's delay of
    0 relies on the time CSR writes take -- and the CKE step by the power-up
    wait."""
    sequence, _ = get_sdram_phy_init_sequence(phy_settings, timing_settings)
    recovery = max(2, *(t for t in (timing_settings.tRP, timing_settings.tRFC) if t)) + 1
    steps = []
    for comment, address, bank, command, delay in sequence:
        names = set(command.split("|"))
        if _CONTROL_CKE in names:
            flags = {"cke"}
            wait = max(delay, int(POWER_UP_WAIT_S * clk_freq))
        else:
            unknown = names - set(_COMMAND_FLAGS)
            if unknown:
                raise ValueError(f"SDRAM init step {comment!r}: unsupported DFII flags {sorted(unknown)}")
            flags = {_COMMAND_FLAGS[n] for n in names}
            wait = max(delay, recovery)
        steps.append((comment, address, bank, frozenset(flags), wait))
    return steps


class SDRAMInit(LiteXModule):
    def __init__(self, dfii, phy_settings, timing_settings, clk_freq):
        self.done = Signal()
        self.steps = steps = init_steps(phy_settings, timing_settings, clk_freq)
        self.doc = ModuleDoc(title="SDRAM initialisation", body=(
            "Replays LiteDRAM's init sequence on the DFI injector's external port after reset, "
            "holding the CPU in reset meanwhile: " + "; ".join(s[0] for s in steps) + "."))

        # # #

        dfi = dfii.ext_dfi
        if len(dfi.phases) != 1:
            raise ValueError("SDRAMInit drives single-phase (1:1) SDR PHYs only")
        phase = dfi.phases[0]
        nranks = len(phase.cs_n)

        index = Signal(max=len(steps) + 1)
        wait = Signal(max=max(s[4] for s in steps) + 1)
        cke = Signal()
        # The command of the current step, registered: on the DFI for one clock.
        cmd = {name: Signal(name=f"cmd_{name}") for name in ("cs", "ras", "cas", "we")}
        address = Signal(len(phase.address))
        bank = Signal(len(phase.bank))

        def table(values):
            return Array(values)[index]

        self.comb += [
            dfii.ext_dfi_sel.eq(~self.done),
            phase.cke.eq(Replicate(cke, nranks)),
            phase.reset_n.eq(1),
            phase.cs_n.eq(Replicate(~cmd["cs"], nranks)),
            phase.ras_n.eq(~cmd["ras"]),
            phase.cas_n.eq(~cmd["cas"]),
            phase.we_n.eq(~cmd["we"]),
            phase.address.eq(address),
            phase.bank.eq(bank),
        ]
        if hasattr(phase, "odt"):
            self.comb += phase.odt.eq(Replicate(cke, nranks))
        self.sync += [
            [sig.eq(0) for sig in cmd.values()],
            If(~self.done,
                If(wait != 0,
                    wait.eq(wait - 1),
                ).Elif(index == len(steps),
                    self.done.eq(1),
                ).Else(
                    # Step ``index``: its command for one clock, then its wait.
                    [sig.eq(table([int(name in s[3]) for s in steps])) for name, sig in cmd.items()],
                    address.eq(table([s[1] for s in steps])),
                    bank.eq(table([s[2] for s in steps])),
                    If(table([int("cke" in s[3]) for s in steps]), cke.eq(1)),
                    wait.eq(table([s[4] for s in steps])),
                    index.eq(index + 1),
                ),
            ),
        ]
