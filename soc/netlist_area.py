"""`tsoc bench area`: where the LUT positions and flip-flops of a whole
synthesised SoC go, by block.

`tsoc bench fpga` measures each accelerator block alone; a board's SoC is
one flat netlist (LiteX writes one Verilog module, yosys flattens the CPU
and the lanes into it), so its pack count says how full the chip is, not
what fills it.  This reads the netlist yosys wrote (``tensorsoc.json`` in a
build's ``gateware/``, `tsoc bitstream ... --no-tools` and yosys, or a full
build) and charges every cell to a block:

* a cell is named by the first named net (``hide_name`` 0) it drives, or,
  when yosys left its outputs unnamed (ABC's LUTs), by the first named net
  found downstream through at most ``DEPTH`` cells, breadth first; the
  nets of LiteX's anonymous FIFO memories (``storage``, ``storage_N``) do
  not name a cell, the search goes on to their readers (the FIFO's owner);
* the block is the first of ``BLOCK_PATTERNS`` the name matches (the
  Migen/LiteX signal prefixes of soc/tensorsoc.py's submodules).

LUT positions as nextpnr counts them before packing: LUT4 1, CCU2C 2 (a
carry cell takes both LUTs of a slice), TRELLIS_DPR16X4 2 (its write port,
TRELLIS_RAMW, is not counted).  The charge is approximate: logic that
feeds two blocks goes to the one its first named net belongs to, and
nextpnr adds feed-through LUTs when it packs (about 7% on the Colorlight
i5's accelerator build; docs/fpga.md, "Where the 25F's LUTs go").
"""

import collections
import json
import re
from pathlib import Path

from tensorsoc.spec.errors import UserError

# The name of a lane's instance (``lane3`` in the first PCORE, ``lane3_1``
# .. in the others: yosys's names for the copies of an instance name) or of
# a shared rounder's (``rounder0``, SoCConfig.pcore_round_share: the
# lanes' rounding shifters moved out of them); group 1 is the kind.
LANE_INSTANCE = r"(lane|rounder)\d+(_\d+)?"

# (regular expression searched in the net name, block), first match wins.
BLOCK_PATTERNS = (
    (r"^VexRiscv", "cpu"),
    # a lane's or a shared rounder's instance (LANE_INSTANCE)
    (rf"^\$flatten\\(lane|rounder)\d|^{LANE_INSTANCE}\.", "pcore_lanes"),
    (r"pcoresequencer|pcore_imem", "pcore_sequencer"),
    (r"pcore\d|pcore_array", "pcore"),
    (r"tensorenginecore_src_gen", "te_src_agen"),
    (r"tensorenginecore_dst_gen", "te_dst_agen"),
    (r"tensorengine|tensor_engine|te_spu|^te_scratch", "tensor_engine"),
    (r"^soc_port_|hspi", "host_port"),
    (r"sdram|litedram|dfi", "sdram"),
    (r"uart|^soc_soc_(tx|rx)_", "uart"),
    (r"timer|uptime", "timer"),
    (r"csr_bankarray|csrbank|^tensorsoc_interface\d", "csr_bus"),
    (r"ctrl|bus_errors|soc_soc_reset", "ctrl"),
    (r"wishbone|_wb_|arbiter|decoder|grant|slaves|^tensorsoc_shared|fetchgap", "bus"),
    (r"^(rom|sram|main_ram)[._]", "soc_memories"),
    (r"^[IO]FS1P3", "io_registers"),
)
# Names that do not name a cell: the search goes on downstream.
TRANSPARENT = r"^storage(_\d+)?[._]"
# The end of a net name's own part: yosys's autoname suffixes (the cells
# and ports a net runs through) and a memory's block and port.
SUFFIX = r"\.|_(TRELLIS_|LUT4|CCU2C|PFUMX|L6MUX21|DP16KD|MULT18X18D|IFS1P3|OFS1P3)"
DEPTH = 8
POSITIONS = {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 2}
COUNTED = tuple(POSITIONS) + ("TRELLIS_FF", "DP16KD", "MULT18X18D")


def block_of(name):
    """The block of a net name (``BLOCK_PATTERNS``), "other" if none."""
    if name is None:
        return "unnamed"
    for pat, block in BLOCK_PATTERNS:
        if re.search(pat, name):
            return block
    return "other"


class Attribution:
    """``blocks``: {block: Counter(positions=, and the cells of each type
    of COUNTED: LUT4=, CCU2C=, TRELLIS_FF=, DP16KD=, ...)};
    ``names``: {block: Counter(signal name (a net name without yosys's
    autoname suffix): positions)}."""

    def __init__(self, blocks, names):
        self.blocks, self.names = blocks, names

    def total(self, key):
        return sum(c[key] for c in self.blocks.values())

    def table(self):
        rows = sorted(self.blocks.items(), key=lambda kv: -kv[1]["positions"])
        total = self.total("positions") or 1
        out = [f"{'block':18s} {'LUT pos':>8s} {'share':>6s} {'FF':>7s} {'DP16KD':>7s} {'MULT18':>7s}"]
        for b, c in rows:
            out.append(f"{b:18s} {c['positions']:8d} {100 * c['positions'] / total:5.1f}% {c['TRELLIS_FF']:7d} "
                       f"{c['DP16KD']:7d} {c['MULT18X18D']:7d}")
        out.append(f"{'total':18s} {self.total('positions'):8d} {'':6s} {self.total('TRELLIS_FF'):7d} "
                   f"{self.total('DP16KD'):7d} {self.total('MULT18X18D'):7d}")
        return "\n".join(out)

    def compare_table(self, base, base_name):
        """Per block, this netlist's LUT positions and FF against ``base``
        (another Attribution, named ``base_name``)."""
        blocks = sorted(set(self.blocks) | set(base.blocks),
                        key=lambda b: -self.blocks.get(b, {}).get("positions", 0))
        out = [f"{'block':18s} {'LUT pos':>8s} {'was':>8s} {'change':>7s} {'FF':>7s} {'was':>7s} {'change':>7s}"
               f"   (was: {base_name})"]
        for b in blocks + ["total"]:
            if b == "total":
                p, p0, f, f0 = (self.total("positions"), base.total("positions"), self.total("TRELLIS_FF"),
                                base.total("TRELLIS_FF"))
            else:
                c, c0 = self.blocks.get(b, {}), base.blocks.get(b, {})
                p, p0, f, f0 = (c.get("positions", 0), c0.get("positions", 0), c.get("TRELLIS_FF", 0),
                                c0.get("TRELLIS_FF", 0))
            out.append(f"{b:18s} {p:8d} {p0:8d} {p - p0:+7d} {f:7d} {f0:7d} {f - f0:+7d}")
        return "\n".join(out)

    def as_dict(self):
        return {b: dict(c) for b, c in self.blocks.items()}


def _flag(value):
    """A yosys JSON attribute as a truth value (a string of bits, or a
    number)."""
    try:
        return int(str(value or "0"), 2) != 0
    except ValueError:
        return False


def attribute(data, top=None):
    """An Attribution of the yosys JSON netlist ``data`` (a dict), module
    ``top`` (default: the one marked top, or the only one)."""
    mods = data.get("modules", {})
    if top is None:
        tops = [n for n, m in mods.items() if _flag(m.get("attributes", {}).get("top"))]
        top = tops[0] if len(tops) == 1 else (next(iter(mods)) if len(mods) == 1 else None)
        if top is None:
            raise UserError(f"the netlist has {len(mods)} modules and no single top: give --top "
                            f"(one of {', '.join(sorted(mods))})")
    if top not in mods:
        raise UserError(f"--top {top}: no such module in the netlist (modules: {', '.join(sorted(mods))})")
    m = mods[top]
    named = {}
    for n, v in m.get("netnames", {}).items():
        if not v.get("hide_name"):
            for bit in v["bits"]:
                if isinstance(bit, int):
                    named.setdefault(bit, n)
    cells = m.get("cells", {})
    outs, sinks = {}, collections.defaultdict(list)
    for cn, c in cells.items():
        dirs = c.get("port_directions", {})
        outs[cn] = [b for p, bits in c["connections"].items() if dirs.get(p) == "output"
                    for b in bits if isinstance(b, int)]
        for p, bits in c["connections"].items():
            if dirs.get(p) == "input":
                for b in bits:
                    if isinstance(b, int):
                        sinks[b].append(cn)

    def name_of(cn):
        seen, frontier = {cn}, [cn]
        for _ in range(DEPTH + 1):
            nxt = []
            for x in frontier:
                for b in outs[x]:
                    if b in named and not re.match(TRANSPARENT, named[b]):
                        return named[b]
                for b in outs[x]:
                    for s in sinks[b]:
                        if s not in seen:
                            seen.add(s)
                            nxt.append(s)
            frontier = nxt
            if not frontier:
                break
        return None

    blocks = collections.defaultdict(collections.Counter)
    names = collections.defaultdict(collections.Counter)
    for cn, c in cells.items():
        t = c["type"]
        if t not in COUNTED:
            continue
        name = name_of(cn)
        b = block_of(name)
        blocks[b][t] += 1
        if t in POSITIONS:
            blocks[b]["positions"] += POSITIONS[t]
            names[b][re.split(SUFFIX, name or "?")[0]] += POSITIONS[t]
    return Attribution(dict(blocks), dict(names))


def read_netlist(path, tag="bench area"):
    """The yosys JSON netlist at ``path`` (a dict), saying so on stdout
    under ``[tag]``; a UserError for a missing file or one that is not
    JSON."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file (a yosys JSON netlist: build/<dir>/gateware/tensorsoc.json after "
                        "`tsoc bitstream`, or after yosys on the script of `tsoc bitstream --no-tools`)")
    print(f"[{tag}] reading {path} ({path.stat().st_size // 1024} KiB)", flush=True)
    try:
        return json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not a JSON netlist ({e})") from None


def cmd_bench_area(args):
    path = Path(args.netlist)
    a = attribute(read_netlist(path), args.top)
    if args.compare:
        print(a.compare_table(attribute(read_netlist(args.compare), args.top), args.compare))
    else:
        print(a.table())
    for b in (args.detail or "").split(","):
        if not b:
            continue
        if b not in a.names:
            raise UserError(f"--detail {b}: no such block here (blocks: {', '.join(sorted(a.names))})")
        print(f"-- {b}: the named nets its LUT positions are charged to")
        for n, v in a.names[b].most_common(args.lines):
            print(f"  {v:7d}  {n}")
    if args.json:
        Path(args.json).write_text(json.dumps({"netlist": str(path), "blocks": a.as_dict()}, indent=1) + "\n")
        print(f"[bench area] figures in {args.json}")
    return 0


def register(groups):
    p = groups["bench"].add_parser(
        "area", help="LUT positions, FF, block RAM and DSP blocks of a synthesised SoC netlist, by block",
        description="Charge every cell of a yosys JSON netlist (a board build's gateware/tensorsoc.json) to the "
                    "block whose named signal it drives, directly or through unnamed cells downstream, and print "
                    "the blocks: LUT positions (LUT4 1, CCU2C 2, TRELLIS_DPR16X4 2), TRELLIS_FF, DP16KD, "
                    "MULT18X18D. Approximate: logic feeding two blocks is charged to one. docs/fpga.md, 'Where "
                    "the 25F's LUTs go'.")
    p.add_argument("netlist", help="yosys JSON netlist (write_json), e.g. build/colorlight_i5/gateware/"
                                   "tensorsoc.json")
    p.add_argument("--top", help="module to read (default: the netlist's top)")
    p.add_argument("--compare", metavar="BASE.json",
                   help="another netlist of the same design (before a change): print each block's LUT positions "
                        "and FF against it")
    p.add_argument("--detail", metavar="BLOCK[,BLOCK]",
                   help="also list the named nets a block's LUT positions are charged to")
    p.add_argument("--lines", type=int, default=20, help="nets listed per --detail block (default 20)")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.set_defaults(func=cmd_bench_area)
