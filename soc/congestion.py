"""`tsoc bench congestion`: where nextpnr's router2 finds its routing
congested, by block and by region of the chip.

A build that does not route leaves no report of why: router2's overused
wires are a count per iteration.  With ``--router2-heatmap PREFIX``
(`tsoc bitstream ... --nextpnr-arg=--router2-heatmap --nextpnr-arg=heat`)
it writes, in the build's ``gateware/``, per iteration N:

* ``heat_congestion_by_net_N.csv``: ``net[bit],overused wires`` per net;
* ``heat_congestion_by_coordinate_N.csv``: the overused wires per tile,
  one line per X, one value per Y (the LFE5U-25F's files have 74 lines of
  52 values: its grid is 74 tiles wide and 52 high).

This charges each net's overuse to the block of its name, with the
patterns of `tsoc bench area` (soc/netlist_area.py: nextpnr's net names
are yosys's, the same autoname suffixes), lists the nets with the most,
and says how concentrated the overuse is on the chip: the share held by
the hottest 8 x 8-tile regions, against their share of the area.  A few
iterations summed (``--iterations``) smooth out router2's rip-ups.
"""

import collections
import re
from pathlib import Path

from tensorsoc.soc.netlist_area import LANE_INSTANCE, SUFFIX, block_of
from tensorsoc.spec.errors import UserError

NET_CSV = "{prefix}_congestion_by_net_{n}.csv"
GRID_CSV = "{prefix}_congestion_by_coordinate_{n}.csv"
REGION = 8          # tiles per side of a region


def signal_of(net):
    """A net name without its bit index and yosys's autoname suffix; a
    net inside an instance (``lane3.b_sat``, ``VexRiscv.x``) keeps the
    instance's name."""
    name = re.sub(r"\[\d+\]$", "", net)
    inst, dot, rest = name.partition(".")
    if dot and re.fullmatch(rf"{LANE_INSTANCE}|VexRiscv", inst):
        m = re.search(SUFFIX, rest)
        return inst + "." + (rest[:m.start()] if m else rest)
    m = re.search(SUFFIX, name)
    return name[:m.start()] if m else name


def family_of(signal):
    """The signal with the index of its PCORE and of its lane or rounder
    replaced by ``*``, so that the copies of one signal in every PCORE
    and lane (``pcore3_vregs``, ``lane2_5.b_sat``, ``rounder0_1.x``) sum
    to one family (``pcore*_vregs``, ``lane*.b_sat``, ``rounder*.x``)."""
    fam = re.sub(rf"^{LANE_INSTANCE}\.", r"\1*.", signal)
    return re.sub(r"pcore\d", "pcore*", fam)


def read_nets(path):
    """{net: overused wires} of a by-net heatmap file."""
    nets = collections.Counter()
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        net, sep, count = line.rpartition(",")
        try:
            nets[net] += int(count)
        except ValueError:
            raise UserError(f"{path}, line {i}: expected 'net,overused wires', found {line[:80]!r}") from None
        if not sep:
            raise UserError(f"{path}, line {i}: expected 'net,overused wires', found {line[:80]!r}")
    return nets


def read_grid(path):
    """The by-coordinate heatmap as a list of lines (X) of counts (Y)."""
    rows = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        cells = [c for c in line.strip().split(",") if c != ""]
        try:
            rows.append([int(c) for c in cells])
        except ValueError:
            raise UserError(f"{path}, line {i}: expected comma-separated counts, found {line[:80]!r}") from None
    return rows


def iterations_in(directory, prefix):
    """The iterations with a by-net heatmap in ``directory``, ascending."""
    pat = re.compile(re.escape(prefix) + r"_congestion_by_net_(\d+)\.csv$")
    return sorted(int(m.group(1)) for p in Path(directory).iterdir() if (m := pat.match(p.name)))


class Congestion:
    """Overuse summed over some iterations: ``blocks`` {block: Counter(
    overuse=, nets=)}, ``signals`` {(block, signal): overuse}, ``grid``
    (per-tile sums, ``grid[x][y]``, or None).  A net is charged by its
    name without the bit index (``block_of``: the lanes' nets keep their
    instance prefix, ``lane3.``), listed without yosys's suffix."""

    def __init__(self, nets, grid):
        self.blocks = collections.defaultdict(collections.Counter)
        self.signals = collections.Counter()
        for net, v in nets.items():
            if v <= 0:
                continue
            sig = signal_of(net)
            b = block_of(re.sub(r"\[\d+\]$", "", net))
            self.blocks[b]["overuse"] += v
            self.blocks[b]["nets"] += 1
            self.signals[(b, sig)] += v
        self.grid = grid

    @property
    def total(self):
        return sum(c["overuse"] for c in self.blocks.values())

    def block_table(self):
        total = self.total or 1
        out = [f"{'block':18s} {'overuse':>9s} {'share':>6s} {'nets':>7s}"]
        for b, c in sorted(self.blocks.items(), key=lambda kv: -kv[1]["overuse"]):
            out.append(f"{b:18s} {c['overuse']:9d} {100 * c['overuse'] / total:5.1f}% {c['nets']:7d}")
        out.append(f"{'total':18s} {self.total:9d}")
        return "\n".join(out)

    def signal_lines(self, n):
        return [f"  {v:7d}  {b:16s} {s}" for (b, s), v in self.signals.most_common(n)]

    def families(self):
        """Counter {(block, family): overuse} (``family_of``)."""
        fams = collections.Counter()
        for (b, s), v in self.signals.items():
            fams[(b, family_of(s))] += v
        return fams

    def family_lines(self, n):
        total = self.total or 1
        return [f"  {v:7d}  {100 * v / total:5.1f}%  {b:16s} {f}" for (b, f), v in self.families().most_common(n)]

    def regions(self):
        """[(overuse, x0, y0)] of the REGION x REGION tiles, hottest first."""
        if not self.grid:
            return []
        sums = collections.Counter()
        for x, col in enumerate(self.grid):
            for y, v in enumerate(col):
                sums[(x // REGION, y // REGION)] += v
        regs = [(v, rx * REGION, ry * REGION) for (rx, ry), v in sums.items()]
        regs.sort(key=lambda t: (-t[0], t[1], t[2]))
        return regs

    def region_lines(self, n):
        regs = self.regions()
        if not regs:
            return ["  (no by-coordinate heatmap)"]
        total = sum(v for v, _, _ in regs) or 1
        width, height = len(self.grid), max(len(col) for col in self.grid)
        out = [f"  chip {width} x {height} tiles, {len(regs)} regions of {REGION} x {REGION}"]
        for v, x, y in regs[:n]:
            out.append(f"  {v:7d}  {100 * v / total:5.1f}%  X {x}..{x + REGION - 1}, Y {y}..{y + REGION - 1}")
        tenth = max(1, len(regs) // 10)
        share = sum(v for v, _, _ in regs[:tenth]) / total
        out.append(f"  the hottest {tenth} regions ({100 * tenth / len(regs):.0f}% of them) hold "
                   f"{100 * share:.0f}% of the overuse")
        return out


def parse_iterations(text, available):
    """``text`` "N", "A-B" or None (the last iteration) against the
    iterations ``available``: the list to sum."""
    if not available:
        return []
    if text is None:
        return [available[-1]]
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", text.strip())
    if not m:
        raise UserError(f"--iterations {text}: expected N or A-B (e.g. 4 or 40-46)")
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    chosen = [i for i in available if lo <= i <= hi]
    if not chosen:
        raise UserError(f"--iterations {text}: no heatmap of those iterations here "
                        f"(there are {available[0]}..{available[-1]})")
    return chosen


def load(directory, prefix="heat", iterations=None):
    """A Congestion of the heatmaps ``prefix``_* in ``directory`` summed
    over ``iterations`` ("N", "A-B", None: the last); also returns the
    iterations read."""
    d = Path(directory)
    if not d.is_dir():
        raise UserError(f"{d}: not a directory (give the build's gateware/ directory, where nextpnr wrote "
                        f"the heatmaps)")
    available = iterations_in(d, prefix)
    if not available:
        raise UserError(f"{d}: no {NET_CSV.format(prefix=prefix, n='N')} here: run nextpnr with "
                        f"--router2-heatmap {prefix} (tsoc bitstream ... --nextpnr-arg=--router2-heatmap "
                        f"--nextpnr-arg={prefix})")
    chosen = parse_iterations(iterations, available)
    nets = collections.Counter()
    grid = None
    for n in chosen:
        nets.update(read_nets(d / NET_CSV.format(prefix=prefix, n=n)))
        gpath = d / GRID_CSV.format(prefix=prefix, n=n)
        if gpath.exists():
            g = read_grid(gpath)
            if grid is None:
                grid = [list(r) for r in g]
            else:
                for x, col in enumerate(g):
                    if x >= len(grid):
                        grid.append([0] * len(col))
                    for y, v in enumerate(col):
                        if y >= len(grid[x]):
                            grid[x].extend([0] * (y + 1 - len(grid[x])))
                        grid[x][y] += v
    return Congestion(nets, grid), chosen


def cmd_bench_congestion(args):
    c, chosen = load(args.directory, args.prefix, args.iterations)
    span = f"iteration {chosen[0]}" if len(chosen) == 1 else f"iterations {chosen[0]}..{chosen[-1]} summed"
    print(f"[bench congestion] {args.directory}: router2's overused wires, {span}")
    print(c.block_table())
    if args.families:
        print(f"-- the {args.lines} signal families with the most overused wires (each PCORE's and lane's "
              f"copies together)")
        print("\n".join(c.family_lines(args.lines)))
    else:
        print(f"-- the {args.lines} signals with the most overused wires")
        print("\n".join(c.signal_lines(args.lines)))
    print(f"-- the hottest regions")
    print("\n".join(c.region_lines(args.regions)))
    return 0


def register(groups):
    p = groups["bench"].add_parser(
        "congestion", help="router2's congestion heatmaps of a build, by block and by region",
        description="Sum nextpnr router2's heatmaps (--router2-heatmap PREFIX writes PREFIX_congestion_by_net_N.csv "
                    "and PREFIX_congestion_by_coordinate_N.csv per iteration N) and print the overused wires by "
                    "block (the patterns of `tsoc bench area`), the signals with the most, and the hottest "
                    f"{REGION} x {REGION}-tile regions. Get the heatmaps with `tsoc bitstream ... "
                    "--nextpnr-arg=--router2-heatmap --nextpnr-arg=heat`. docs/fpga.md, 'Where router2 congests' and 'Where the 25F congests'.")
    p.add_argument("directory", help="where nextpnr wrote the heatmaps (a build's gateware/ directory)")
    p.add_argument("--prefix", default="heat", help="the --router2-heatmap prefix (default heat)")
    p.add_argument("--iterations", metavar="N|A-B",
                   help="router2 iteration, or a range to sum (default: the last one written)")
    p.add_argument("--lines", type=int, default=20, help="signals listed (default 20)")
    p.add_argument("--regions", type=int, default=10, help="regions listed (default 10)")
    p.add_argument("--families", action="store_true",
                   help="list signal families instead of signals: the copies of a signal in every PCORE, lane "
                        "and rounder summed (pcore*_vregs, lane*.b_sat), with their share of the total")
    p.set_defaults(func=cmd_bench_congestion)
