"""``PCOREArray``: the PCORE array as a LiteX bus peripheral.

The MCORE reaches the array through one Wishbone slave: control registers at
the bottom, the instruction memory above them.  The TensorEngine connects to
the ``te_*`` ports directly (docs/pcore.md).  ``add_pcore_array`` adds the
array to a LiteX SoC in one call.
"""

from pathlib import Path

from migen import *

from litex.gen import LiteXModule
from litex.soc.integration.doc import ModuleDoc
from litex.soc.interconnect import wishbone

from tensorsoc.cores.pcore.array import PCOREArrayCore
from tensorsoc.cores.pcore.lane import generate_verilog

ISA_VERSION = 1

# Control registers: (word offset, name, access, description).  Defined once;
# docs/pcore.md and ``c_header()`` are generated from this table.
REGISTERS = [
    (0, "INFO", "ro", "geometry: NP in bits 7..0, NT in 15..8, VW in 23..16, ISA version in 31..24"),
    (1, "MEMINFO", "ro", "private words per thread and process in 15..0, shared words per PCORE and process in 31..16"),
    (2, "IMEMINFO", "ro", "instruction memory size in 32-bit words"),
    (3, "FUNC", "rw", "function word of the next kernel: entry 15..0, PCOREs 23..16, threads 31..24 (0 = all)"),
    (4, "START", "wo", "write the process space (bit 0) to start FUNC there; queued while the array is busy"),
    (5, "STATUS", "ro", "bit 0 busy on process 0, bit 1 busy on process 1, bit 2 start pending"),
    (6, "CYCLES", "ro", "clocks taken by the last (or running) kernel, start to last write-back"),
    (7, "VOPS", "ro", "vector operations issued to active threads by the last kernel (per PCORE)"),
    (8, "MACS", "ro", "multiply-accumulate lane operations of the last kernel, summed over the array"),
]
REG = {name: off for off, name, _, _ in REGISTERS}


class PCOREArray(LiteXModule):
    def __init__(self, config, imem_words=None):
        imem_words = imem_words or config.pcore_imem_words
        assert imem_words & (imem_words - 1) == 0 and imem_words >= 16
        self.config = config
        self.imem_words = imem_words
        # Wishbone slave, 32-bit, word addressed: 2 x imem_words words.
        self.bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word")
        self.size = 2 * imem_words * 4   # bytes of bus address space
        self.imem_base = imem_words      # word offset of the instruction memory

        # # #

        self.core = core = PCOREArrayCore(config, imem_words)
        # TensorEngine-facing ports (see docs/pcore.md).
        self.te = core.te
        self.busy = core.busy
        self.te_start_valid = Signal()
        self.te_start_ready = Signal()
        self.te_start_func = Signal(32)
        self.te_start_process = Signal()
        self.te_imem_we = Signal()
        self.te_imem_adr = Signal(max=imem_words)
        self.te_imem_dat_w = Signal(32)

        self.doc = ModuleDoc(title="PCORE array", body=(
            f"{config.np} PCOREs x {config.nt} threads x {config.vw} lanes running kernels in "
            "lockstep. The bus window holds the control registers (word offsets "
            + ", ".join(f"{n}={o}" for o, n, _, _ in REGISTERS)
            + f") and, from word {imem_words}, the instruction memory. See docs/pcore.md."))

        bus = self.bus
        func = Signal(32)
        pending = Signal()
        pending_process = Signal()

        # Kernel start: the TensorEngine has priority over the MCORE's START.
        self.comb += [
            If(self.te_start_valid,
                core.start_valid.eq(1),
                core.start_func.eq(self.te_start_func),
                core.start_process.eq(self.te_start_process),
                self.te_start_ready.eq(core.start_ready),
            ).Else(
                core.start_valid.eq(pending),
                core.start_func.eq(func),
                core.start_process.eq(pending_process),
            ),
        ]

        # Bus access: two clocks to present the address, then ack.
        idx = Signal(4)
        is_imem = Signal()
        rport = core.seq.read_port()
        phase = Signal()
        bus_imem_we = Signal()
        self.comb += [
            idx.eq(bus.adr[:4]),
            is_imem.eq(bus.adr[log2_int(imem_words)]),
            rport.adr.eq(bus.adr[:log2_int(imem_words)]),
            bus_imem_we.eq(bus.cyc & bus.stb & ~bus.ack & phase & bus.we & is_imem & ~self.te_imem_we),
            If(self.te_imem_we,
                core.imem_we.eq(1), core.imem_adr.eq(self.te_imem_adr), core.imem_dat_w.eq(self.te_imem_dat_w)
            ).Else(
                core.imem_we.eq(bus_imem_we), core.imem_adr.eq(rport.adr), core.imem_dat_w.eq(bus.dat_w)
            ),
        ]
        info = config.np | (config.nt << 8) | (config.vw << 16) | (ISA_VERSION << 24)
        assert config.pcore_private_words < 1 << 16 and config.pcore_shared_words < 1 << 16
        meminfo = config.pcore_private_words | (config.pcore_shared_words << 16)
        reg_read = Signal(32)
        self.comb += Case(idx, {
            REG["INFO"]: reg_read.eq(info),
            REG["MEMINFO"]: reg_read.eq(meminfo),
            REG["IMEMINFO"]: reg_read.eq(imem_words),
            REG["FUNC"]: reg_read.eq(func),
            REG["STATUS"]: reg_read.eq(Cat(core.busy, pending)),
            REG["CYCLES"]: reg_read.eq(core.cycles),
            REG["VOPS"]: reg_read.eq(core.vops),
            REG["MACS"]: reg_read.eq(core.macs),
            "default": reg_read.eq(0),
        })
        self.sync += [
            bus.ack.eq(0),
            If(core.start_valid & core.start_ready & ~self.te_start_valid, pending.eq(0)),
            If(~(bus.cyc & bus.stb), phase.eq(0)),   # an abandoned access restarts
            If(bus.cyc & bus.stb & ~bus.ack,
                If(~phase,
                    phase.eq(1)
                ).Elif(~(is_imem & bus.we & self.te_imem_we),
                    phase.eq(0),
                    bus.ack.eq(1),
                    bus.dat_r.eq(Mux(is_imem, rport.dat_r, reg_read)),
                    If(bus.we & ~is_imem,
                        If(idx == REG["FUNC"], func.eq(bus.dat_w)),
                        If(idx == REG["START"], pending.eq(1), pending_process.eq(bus.dat_w[0])),
                    ),
                ),
            ),
        ]

    def verilog_sources(self, build_dir):
        """Verilog files the array instantiates (the MyHDL lane datapath)."""
        return [str(generate_verilog(build_dir))]


def c_header(base_name="PCORE"):
    """C macros for the register map (word offsets)."""
    lines = ["/* Generated from cores/pcore/soc.py: do not edit. */"]
    for off, name, _, desc in REGISTERS:
        lines.append(f"#define {base_name}_{name:<10} {off:2d}  /* {desc} */")
    lines.append(f"#define {base_name}_ISA_VERSION {ISA_VERSION}")
    return "\n".join(lines) + "\n"


def add_pcore_array(soc, config, name="pcore", origin=None, imem_words=None, build_dir=None):
    """Add the PCORE array to a LiteX ``soc`` as Wishbone slave ``name``.

    The MyHDL lane datapath is converted into ``build_dir`` (default:
    ``build/pcore`` under the current directory) and added to the platform
    sources.  Returns the ``PCOREArray``."""
    from litex.soc.integration.soc import SoCRegion
    array = PCOREArray(config, imem_words)
    soc.add_module(name=name, module=array)
    soc.bus.add_slave(name, array.bus, SoCRegion(origin=origin, size=array.size, cached=False))
    build_dir = Path(build_dir or Path("build") / "pcore")
    for src in array.verilog_sources(build_dir):
        soc.platform.add_source(src)
    return array


def register_table_markdown():
    """The register map as the Markdown table docs/pcore.md embeds."""
    rows = ["| word offset | name | access | meaning |", "|---|---|---|---|"]
    rows += [f"| {off} | `{name}` | {acc} | {desc} |" for off, name, acc, desc in REGISTERS]
    return "\n".join(rows)
