"""`tsoc bench depth`: the deepest register-to-register logic of a
synthesised ECP5 netlist, before placement.

nextpnr reports a clock's critical path only after routing, and routing
the 25F's accelerator builds takes from half an hour to never.  This
ranks the paths of a yosys JSON netlist (a board build's
``gateware/tensorsoc.json``, written a minute or two into `tsoc
bitstream`) by an arrival time built from fixed delays: each cell's
(below, from nextpnr's ECP5 reports) plus ``net_ns`` for every net
between two cells, carry chains excepted.  The times are a ranking, not
a timing figure: placement stretches the nets of a crowded chip (the
first routed i5 accelerator build's critical path, 26.83 ns routed, is
24.2 ns here), but the chains it ranks first are the ones nextpnr
reports: on that build, the host port's write queue through the shared
bus and LiteDRAM's bridge into the CPU (docs/fpga.md, "Main RAM answers
from flip-flops").

Launch points: flip-flop outputs (``CLK_TO_Q``), block RAM outputs
(``BRAM_CLK_TO_OUT``, unregistered DP16KD), and every other cell's
outputs (I/O, PLL).  End points: flip-flop DI, CE and LSR; block RAM and
LUT RAM inputs.  Through: LUT4, PFUMX, L6MUX21, CCU2C, the LUT RAM's
read (TRELLIS_DPR16X4 RAD -> DO) and MULT18X18D (combinational here:
the lanes register around their multipliers in the fabric).
"""

import collections
import re

from tensorsoc.soc.netlist_area import TRANSPARENT, block_of, read_netlist
from tensorsoc.spec.errors import UserError

NET_NS = 0.75            # a net between two cells (the routed path above: 0.04-3.78, 0.95 mean)
CLK_TO_Q = 0.52          # TRELLIS_FF
BRAM_CLK_TO_OUT = 5.61   # DP16KD without its output register (nextpnr's report)
LUT_NS = 0.24            # LUT4 (nextpnr's report)
MUX_NS = 0.26            # PFUMX, L6MUX21 (OFX)
LUTRAM_READ_NS = 0.8     # TRELLIS_DPR16X4 RAD -> DO
MULT_NS = 4.0            # MULT18X18D, inputs to outputs, unregistered
# CCU2C: (A..D of a half -> its sum), (carry in -> sums), (A..D -> carry out), (carry in -> carry out)
CARRY_NS = {"sum": 0.3, "cin_sum": 0.2, "cout": 0.45, "cin_cout": 0.06}


def _bits(ports, names):
    return [b for p in names for b in ports.get(p, []) if isinstance(b, int)]


class Depth:
    """Arrival times of a yosys JSON module's nets (``bits``) and its end
    points."""

    def __init__(self, module, net_ns=NET_NS):
        self.net_ns = net_ns
        self.names = {}
        # the netname a person would pick for a bit: visible, fewest '$', shortest
        for name, v in sorted(module["netnames"].items(),
                              key=lambda kv: (kv[1].get("hide_name", 0), kv[0].count("$"), len(kv[0]))):
            for b in v["bits"]:
                if isinstance(b, int):
                    self.names.setdefault(b, name)
        self.arcs = collections.defaultdict(list)    # out bit -> [(in bit, delay incl. its net)]
        self.launch = {}                              # bit -> launch time
        self.ends = []                                # (bit, cell, port)
        for cname, cell in module["cells"].items():
            self._cell(cname, cell)
        self.arrival, self.prev, self.loops = {}, {}, 0

    def _through(self, outs, ins, delay, net=True):
        for o in outs:
            self.arcs[o] += [(i, delay + (self.net_ns if net else 0.0)) for i in ins]

    def _cell(self, cname, cell):
        t, con = cell["type"], cell["connections"]
        dirs = cell.get("port_directions", {})
        outs = {p: [b for b in bs if isinstance(b, int)] for p, bs in con.items() if dirs.get(p) == "output"}
        ins = {p: bs for p, bs in con.items() if dirs.get(p) == "input"}
        if t == "LUT4":
            self._through(outs["Z"], _bits(ins, "ABCD"), LUT_NS)
        elif t in ("PFUMX", "L6MUX21"):
            self._through(outs["Z"], _bits(ins, ["ALUT", "BLUT", "C0", "D0", "D1", "SD"]), MUX_NS)
        elif t == "CCU2C":
            half0, half1 = _bits(ins, ["A0", "B0", "C0", "D0"]), _bits(ins, ["A1", "B1", "C1", "D1"])
            cin = _bits(ins, ["CIN"])
            # the carry runs on its own wires between the cells of a chain: no net delay
            self._through(outs["S0"], half0, CARRY_NS["sum"])
            self._through(outs["S1"], half0 + half1, CARRY_NS["sum"] + 0.1)
            self._through(outs["COUT"], half0 + half1, CARRY_NS["cout"])
            self._through(outs["S0"] + outs["S1"], cin, CARRY_NS["cin_sum"], net=False)
            self._through(outs["COUT"], cin, CARRY_NS["cin_cout"], net=False)
        elif t == "TRELLIS_DPR16X4":
            self._through(outs["DO"], _bits(ins, ["RAD"]), LUTRAM_READ_NS)
            self.ends += [(b, cname, p) for p in ("DI", "WAD", "WRE") for b in _bits(ins, [p])]
        elif t == "MULT18X18D":
            data = [b for p, bs in ins.items() if re.fullmatch(r"[AB]\d+", p) for b in bs if isinstance(b, int)]
            self._through([b for bs in outs.values() for b in bs], data, MULT_NS)
        elif t == "TRELLIS_FF":
            for b in outs.get("Q", []):
                self.launch[b] = CLK_TO_Q
            self.ends += [(b, cname, p) for p in ("DI", "CE", "LSR") for b in _bits(ins, [p])]
        elif t == "DP16KD":
            for bs in outs.values():
                for b in bs:
                    self.launch[b] = BRAM_CLK_TO_OUT
            self.ends += [(b, cname, p) for p, bs in ins.items() if not p.startswith("CLK")
                          for b in bs if isinstance(b, int)]
        else:
            for bs in outs.values():
                for b in bs:
                    self.launch.setdefault(b, 0.0)

    def time(self, bit):
        """The arrival time of ``bit`` (computed once, iteratively: the
        chains are thousands of cells long)."""
        if bit in self.arrival:
            return self.arrival[bit]
        stack, open_ = [(bit, False)], set()
        while stack:
            x, expanded = stack.pop()
            if x in self.arrival:
                continue
            if x not in self.arcs:
                self.arrival[x] = self.launch.get(x, 0.0)
                continue
            if not expanded:
                open_.add(x)
                stack.append((x, True))
                for i, _ in self.arcs[x]:
                    if i in open_:
                        self.loops += 1        # a combinational loop: that input counts as 0
                    elif i not in self.arrival:
                        stack.append((i, False))
                continue
            best, via = 0.0, None
            for i, d in self.arcs[x]:
                if i not in self.arrival:
                    continue                   # (the loop's input, still open)
                v = self.arrival[i] + d
                if v > best:
                    best, via = v, i
            self.arrival[x], self.prev[x] = best, via
            open_.discard(x)
        return self.arrival[bit]

    def path(self, bit):
        """The bits of the latest chain into ``bit``, from its launch."""
        chain = []
        while bit is not None and bit not in chain:
            chain.append(bit)
            bit = self.prev.get(bit)
        return chain[::-1]

    def deepest(self, n):
        """The ``n`` latest end points, one per register or memory (its
        bits are alike): [(ns, cells through, end cell, port, bits)]."""
        rows = sorted(((self.time(b) + self.net_ns, b, c, p) for b, c, p in self.ends), reverse=True)
        out, seen = [], set()
        for t, b, c, p in rows:
            # a memory's blocks (storage_9.0.0, storage_9.0.1) and a
            # register's bits (x_TRELLIS_FF_Q, x_TRELLIS_FF_Q_7) are one
            key = c.split(".")[0] if c.startswith("storage") else re.sub(r"_TRELLIS_FF_Q(_\d+)?$", "", c)
            if key in seen:
                continue
            seen.add(key)
            chain = self.path(b)
            out.append((t, len(chain) - 1, c, p, chain))
            if len(out) >= n:
                break
        return out

    def block(self, chain):
        """The block a chain starts in (``tsoc bench area``'s patterns); a
        memory's (``storage_N``, no block of its own) is that of the
        first named signal after it."""
        for b in chain:
            s = self.signal(b)
            if not re.search(TRANSPARENT, s):
                return block_of(s)
        return "other"

    def signal(self, bit):
        """A readable name for a bit: its net name without yosys's cell suffixes."""
        name = self.names.get(bit, f"${bit}")
        return re.sub(r"_(LUT4|PFUMX|L6MUX21|CCU2C|TRELLIS_FF|TRELLIS_DPR16X4|DP16KD)_.*$", "", name)


def _read(path, top):
    design = read_netlist(path, "bench depth")
    modules = design.get("modules", {})
    if top not in modules:
        raise UserError(f"{path}: no module {top!r} (modules: {', '.join(sorted(modules)) or 'none'}); "
                        "pass --top")
    return modules[top]


def cmd_bench_depth(args):
    d = Depth(_read(args.netlist, args.top), net_ns=args.net_ns)
    rows = d.deepest(args.paths)
    if d.loops:
        print(f"[bench depth] {d.loops} combinational loop arcs counted as 0")
    print(f"[bench depth] the {len(rows)} deepest end points (one per register or memory), "
          f"estimated with {args.net_ns} ns a net: a ranking, not a timing figure")
    for k, (t, cells, cell, port, chain) in enumerate(rows, 1):
        src, dst = d.signal(chain[0]), d.signal(chain[-1])
        print(f"{k:3d}. {t:6.2f} ns {cells:3d} cells  {d.block(chain)} -> {block_of(cell)}: {src} -> {cell}.{port}")
        steps = []
        for b in chain[1:-1]:
            s = d.signal(b)
            if s not in steps and s not in (src, dst):
                steps.append(s)
        if steps:
            print("       through " + ", ".join(steps[:args.through])
                  + (f", ... ({len(steps) - args.through} more)" if len(steps) > args.through else ""))
    return 0


def register(groups):
    p = groups["bench"].add_parser(
        "depth", help="the deepest register-to-register logic of a synthesised netlist, before placement",
        description="Rank the end points of a yosys JSON netlist (a board build's gateware/tensorsoc.json, "
                    "written by the yosys step of `tsoc bitstream`) by an arrival time from fixed cell delays "
                    "and a fixed delay per net, and print each one's deepest chain: which logic to cut next, in "
                    "seconds rather than a routing run. A ranking, not a timing figure. docs/fpga_history.md, "
                    "'Main RAM answers from flip-flops'.")
    p.add_argument("netlist", help="yosys JSON netlist (build/<dir>/gateware/tensorsoc.json)")
    p.add_argument("--top", default="tensorsoc", help="the top module (default tensorsoc)")
    p.add_argument("--paths", type=int, default=10, help="end points listed (default 10)")
    p.add_argument("--net-ns", type=float, default=NET_NS,
                   help=f"delay of a net between two cells, in ns (default {NET_NS})")
    p.add_argument("--through", type=int, default=12, help="signals listed along each path (default 12)")
    p.set_defaults(func=cmd_bench_depth)
