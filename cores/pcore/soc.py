"""``PCOREArray``: the PCORE array as a LiteX peripheral.

The MCORE controls the array through LiteX CSRs (bank ``pcore``: geometry,
the function word, a start strobe, status and counters) and writes its
instruction memory through a Wishbone slave window of its own.  The
TensorEngine connects to the ``te_*`` ports directly (docs/pcore.md).
``add_pcore_array`` adds the array to a ``TensorSoC`` through its one
``add_core``.
"""

from pathlib import Path

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr_bus import CSRBankArray
from litex.soc.integration.doc import ModuleDoc
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage

from tensorsoc.cores.csr_storage import WriteOnlyStorage, storage_class

from tensorsoc.cores.pcore.array import PCOREArrayCore
from tensorsoc.cores.pcore.lane import verilog_for
from tensorsoc.spec.pcore_isa import ISA_VERSION


class PCOREArray(LiteXModule):
    """NP PCOREs x NT threads x VW lanes with their instruction memory.

    ``bus``: the instruction memory as a 32-bit word-addressed Wishbone
    slave of ``imem_words`` words (``size`` bytes).  The control registers
    are CSRs (``info`` ... ``macs``, in this order from bank offset 0;
    ``cycles``, ``vops`` and ``macs`` only with ``config.pcore_stats``).
    ``config.csr_readback=0``: ``func`` and ``start`` read as 0
    (cores/csr_storage.py)."""

    def __init__(self, config, imem_words=None):
        imem_words = imem_words or config.pcore_imem_words
        assert imem_words & (imem_words - 1) == 0 and imem_words >= 16
        self.config = config
        self.imem_words = imem_words
        # Wishbone slave, 32-bit, word addressed: the instruction memory.
        self.bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word")
        self.size = imem_words * 4       # bytes of bus address space

        self.doc = ModuleDoc(title="PCORE array", body=(
            f"{config.np} PCOREs x {config.nt} threads x {config.vw} lanes running kernels in lockstep "
            "(docs/pcore.md). The TensorEngine loads their memories and starts kernels (EXE_LOCKSTEP) "
            "through ports of its own. The MCORE sees these registers and, as the Wishbone region of the "
            f"same name, the instruction memory: {imem_words} 32-bit words, read/write, one instruction "
            "per word from word 0 (the TensorEngine's instruction fetch writes it too, with priority). "
            "FUNC then START run a kernel without the TensorEngine (bring-up, tests); a TensorEngine "
            "start has priority over a pending START."))

        # Control registers (CSRs, created in bank-offset order).
        assert config.pcore_private_words < 1 << 16 and config.pcore_shared_words < 1 << 16
        self.info = CSRStatus(fields=[
            CSRField("np", size=8, description="PCOREs (NP)"),
            CSRField("nt", size=8, description="threads per PCORE (NT)"),
            CSRField("vw", size=8, description="lanes per vector (VW)"),
            CSRField("isa_version", size=8, description="PCORE instruction-set version"),
        ], description="Geometry of the array (constant).")
        self.meminfo = CSRStatus(fields=[
            CSRField("private_words", size=16, description="private 16-bit words per thread and process space"),
            CSRField("shared_words", size=16, description="shared 16-bit words per PCORE and process space"),
        ], description="Data memory sizes (constant).")
        self.imeminfo = CSRStatus(32, description=(
            "Instruction memory size in 32-bit words (constant): the size of the Wishbone region ``pcore`` "
            "divided by 4."))
        self.func = storage_class(config.csr_readback)(fields=[
            CSRField("entry", size=16, description="entry address of the kernel in the instruction memory"),
            CSRField("pcores", size=8, description="PCOREs that run it (0 or more than NP: all)"),
            CSRField("threads", size=8, description="threads per PCORE that run it (0 or more than NT: all)"),
        ], description="Function word of the kernel START runs (``spec.pcore_isa.function_word``).")
        self.start = storage_class(config.csr_readback)(fields=[
            CSRField("process", size=1, description="process space the kernel runs on"),
        ], description=(
            "Writing starts the kernel of FUNC on the process space written (the write is the strobe). "
            "A start written while the array is busy is queued (STATUS.pending) and taken when the array "
            "is free; a second write while one is pending replaces it."))
        self.status = CSRStatus(fields=[
            CSRField("busy", size=2, description="bit p: a kernel runs on process space p"),
            CSRField("pending", size=1, description="a START is queued, not yet taken"),
        ], description="Kernel state; 0 when no kernel runs and none is queued.")
        if config.pcore_stats:
            # (SoCConfig.pcore_stats=0: no statistics registers; the
            # sequencer's counters then have no reader and synthesis drops
            # them)
            self.cycles = CSRStatus(32, description=(
                "Clocks taken by the last (or running) kernel, start to last write-back."))
            self.vops = CSRStatus(32, description=(
                "Vector operations issued to active threads by the last kernel (per PCORE)."))
            self.macs = CSRStatus(32, description=(
                "Multiply-accumulate lane operations of the last kernel, summed over the array."))

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

        pending = Signal()
        pending_process = Signal()
        self.comb += [
            self.info.fields.np.eq(config.np),
            self.info.fields.nt.eq(config.nt),
            self.info.fields.vw.eq(config.vw),
            self.info.fields.isa_version.eq(ISA_VERSION),
            self.meminfo.fields.private_words.eq(config.pcore_private_words),
            self.meminfo.fields.shared_words.eq(config.pcore_shared_words),
            self.imeminfo.status.eq(imem_words),
            self.status.fields.busy.eq(core.busy),
            # (a START the CSR bank took in the previous clock counts as pending)
            self.status.fields.pending.eq(pending | self.start.re),
        ]
        if config.pcore_stats:
            self.comb += [
                self.cycles.status.eq(core.cycles),
                self.vops.status.eq(core.vops),
                self.macs.status.eq(core.macs),
            ]

        # Kernel start: the TensorEngine has priority over the MCORE's START.
        self.comb += [
            If(self.te_start_valid,
                core.start_valid.eq(1),
                core.start_func.eq(self.te_start_func),
                core.start_process.eq(self.te_start_process),
                self.te_start_ready.eq(core.start_ready),
            ).Else(
                core.start_valid.eq(pending),
                core.start_func.eq(self.func.storage),
                core.start_process.eq(pending_process),
            ),
        ]
        self.sync += [
            If(core.start_valid & core.start_ready & ~self.te_start_valid, pending.eq(0)),
            # (after the clear: a START written in the clock a pending one is taken is queued)
            If(self.start.re, pending.eq(1), pending_process.eq(self.start.fields.process)),
        ]

        # Instruction memory on the bus: two clocks to present the address,
        # then ack; the TensorEngine's write port has priority.
        bus = self.bus
        aw = log2_int(imem_words)
        rport = core.seq.read_port()
        phase = Signal()
        bus_imem_we = Signal()
        self.comb += [
            rport.adr.eq(bus.adr[:aw]),
            bus_imem_we.eq(bus.cyc & bus.stb & ~bus.ack & phase & bus.we & ~self.te_imem_we),
            If(self.te_imem_we,
                core.imem_we.eq(1), core.imem_adr.eq(self.te_imem_adr), core.imem_dat_w.eq(self.te_imem_dat_w)
            ).Else(
                core.imem_we.eq(bus_imem_we), core.imem_adr.eq(rport.adr), core.imem_dat_w.eq(bus.dat_w)
            ),
        ]
        self.sync += [
            bus.ack.eq(0),
            If(~(bus.cyc & bus.stb), phase.eq(0)),   # an abandoned access restarts
            If(bus.cyc & bus.stb & ~bus.ack,
                If(~phase,
                    phase.eq(1)
                ).Elif(~(bus.we & self.te_imem_we),
                    phase.eq(0),
                    bus.ack.eq(1),
                    bus.dat_r.eq(rport.dat_r[:32]),
                ),
            ),
        ]

    def verilog_sources(self, build_dir):
        """Verilog files the array instantiates (the MyHDL lane datapath)."""
        return [str(verilog_for(self.config, build_dir))]


def add_pcore_array(soc, config, name="pcore", origin=None, imem_words=None, build_dir=None):
    """Add the PCORE array to ``soc`` (a ``TensorSoC``) through its
    ``add_core``: CSR bank ``name`` and the instruction memory as the
    Wishbone region ``name`` (``origin``: None lets LiteX place it).  The
    MyHDL lane datapath is converted into ``build_dir`` (default:
    ``build/pcore`` under the current directory) and added to the platform
    sources.  Returns the ``PCOREArray``."""
    array = PCOREArray(config, imem_words)
    build_dir = Path(build_dir or Path("build") / "pcore")
    soc.add_core(name, array, slaves=[(name, array.bus, origin, array.size, "rw")],
                 sources=array.verilog_sources(build_dir))
    return array


def _accessor(csr):
    return f"pcore_{csr.name}_{'write' if isinstance(csr, CSRStorage) else 'read'}()"


def _bits(f):
    return f"{f.offset + f.size - 1}..{f.offset}" if f.size > 1 else f"{f.offset}"


def register_table_markdown(config=None):
    """The CSRs of the array (bank ``pcore``) as the Markdown table
    docs/pcore.md embeds: read from the CSRs themselves (their order in the
    bank, descriptions and fields)."""
    from tensorsoc.spec.config import DEFAULT
    array = PCOREArray(config or DEFAULT)
    rows = ["| offset | register | access | C accessor | meaning |", "|---|---|---|---|---|"]
    for i, csr in enumerate(array.get_csrs(sort=True)):
        access = ("wo" if isinstance(csr, WriteOnlyStorage) else "rw") if isinstance(csr, CSRStorage) else "ro"
        desc = " ".join(csr.description.split()).replace("``", "`")
        fields = getattr(csr, "fields", None)
        if fields is not None:
            desc += " Fields: " + "; ".join(f"`{f.name}` ({_bits(f)}) {f.description}" for f in fields.fields) + "."
        rows.append(f"| 0x{4 * i:02x} | `{csr.name.upper()}` | {access} | `{_accessor(csr)}` | {desc} |")
    return "\n".join(rows)


CSR_DATA_WIDTH = 32          # the SoC's (LiteX's default csr_data_width)


class PCOREArrayTop(LiteXModule):
    """``PCOREArray`` (submodule ``pcore``) and its CSR bank at bank 0 of a
    32-bit CSR bus, as a SoC builds it, for the block on its own: the
    array's cocotb bench (verification/pcore/build.py) and its area in
    ``tsoc bench fpga``.  ``csr_map``: CSR name -> word address on ``csr``."""

    def __init__(self, config, imem_words=None):
        self.pcore = PCOREArray(config, imem_words)
        self.csrbankarray = banks = CSRBankArray(self, lambda name, memory: 0 if name == "pcore" and memory is None
                                                 else None, data_width=CSR_DATA_WIDTH, address_width=14)
        (_, csrs, _, bank), = banks.banks
        self.csr = bank.bus
        self.csr_map, adr = {}, 0
        for c in csrs:
            self.csr_map[c.name] = adr
            adr += len(c.get_simple_csrs())
