"""``TensorEngine``: the TensorEngine as a LiteX module with the CSRs the
MCORE runtime uses (sw/runtime/platform/litex.c), and ``add_tensor_engine``,
which adds it (with the PCORE array) to a LiteX SoC."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.integration.doc import ModuleDoc
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRField

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.cores.tensor_engine.engine import TensorEngineCore


class TensorEngine(LiteXModule):
    def __init__(self, config, ddr_base, ddr_size, queue_depth=None, trace_depth=None):
        self.doc = ModuleDoc(title="TensorEngine", body=(
            "Executes the tensor instructions of docs/tensor_isa.md: the MCORE writes them word by word to "
            "QUEUE (checking QUEUE_SPACE), reads CALLBACK markers and ERRORS, and while LOG_ON is in effect "
            "drains the activity trace from TRACE_DATA. DDR is reached through a Wishbone master (incremental "
            "bursts), the PCORE array through its te ports. See docs/tensor_engine.md."))
        self.core = core = TensorEngineCore(config, ddr_base=ddr_base, ddr_size=ddr_size, queue_depth=queue_depth,
                                                    trace_depth=trace_depth)
        self.bus = core.bus
        self.te = core.te
        self.start_valid, self.start_ready = core.start_valid, core.start_ready
        self.start_func, self.start_process, self.busy = core.start_func, core.start_process, core.busy
        # The instruction fetch (fetch.TEFetch) pushes into the same queue: dma_we/dma_data (in;
        # the CSR write is lost in a clock the fetch pushes), q_space (out) its free words.
        self.dma_we = Signal()
        self.dma_data = Signal(32)
        self.q_space = core.q_space

        self.queue = CSR(32, name="queue")
        self.queue.description = "Write: append one instruction word to the queue (check QUEUE_SPACE first)."
        self.queue_space = CSRStatus(16, description="Free words in the instruction queue.")
        self.callback = CSR(32, name="callback")
        self.callback.description = ("Read: bit 31 set when a CALLBACK marker was reached, its tag in 30..0; "
                                     "the read removes it. 0 when none is pending.")
        self.errors = CSR(len(isa.ERRORS), name="errors")
        self.errors.description = ("Read: sticky error flags (" + ", ".join(
            f"bit {b} {n}" for n, (b, _) in isa.ERRORS.items()) + "); the read clears them.")
        self.status = CSRStatus(fields=[
            CSRField("idle", size=1, description="queue empty and no instruction executing"),
            CSRField("busy", size=2, description="bit p: a PCORE kernel runs on process space p"),
            CSRField("log", size=1, description="LOG_ON in effect"),
        ])
        self.trace_data = CSR(32, name="trace_data")
        self.trace_data.description = (
            "Read: the activity trace (LOG_ON), two words per record: the info word (bit 31 set; fields in "
            "sw/te_trace.py and sw/runtime/te_trace.h), then the cycle counter at the event. Each read takes "
            "the word; 0 when the buffer is empty.")
        self.trace_status = CSRStatus(fields=[
            CSRField("records", size=16, description="records in the trace buffer"),
            CSRField("depth", size=16, description="capacity of the trace buffer in records"),
        ])

        # Write fence: with the engine behind a bus crossing (an ``accel``
        # clock domain, soc/accel_domain.py) its writes are posted, so the
        # crossing counts the writes it took (wr_issued) and those the memory
        # acknowledged (wr_landed), modulo 64.  A callback shows in CALLBACK,
        # and IDLE reads 1, only once every write issued before is in memory.
        # Both stay 0 where the bus reaches memory directly.
        self.wr_issued = Signal(6)
        self.wr_landed = Signal(6)

        # # #

        behind = Signal(6)       # writes not yet in memory
        since = Signal(6)        # landed minus the count at the callback's arrival
        snap = Signal(6)
        armed = Signal()         # the head callback waits for the writes before it
        cb_ok = Signal()
        self.comb += [
            behind.eq(self.wr_issued - self.wr_landed),
            since.eq(self.wr_landed - snap),
            cb_ok.eq(core.cb_valid & Mux(armed, ~since[5], behind == 0)),
        ]
        self.sync += If(core.cb_pop, armed.eq(0)).Elif(core.cb_valid & ~armed & (behind != 0),
                                                        armed.eq(1), snap.eq(self.wr_issued))

        self.comb += [
            core.q_we.eq(self.queue.re | self.dma_we),
            core.q_data.eq(Mux(self.dma_we, self.dma_data, self.queue.r)),
            self.queue_space.status.eq(core.q_space),
            self.callback.w.eq(Mux(cb_ok, Cat(core.cb_tag[:31], 1), 0)),
            core.cb_pop.eq(self.callback.we & cb_ok),
            self.errors.w.eq(core.errors),
            core.errors_clear.eq(self.errors.we),
            self.status.fields.idle.eq(core.idle & (behind == 0)),
            self.status.fields.busy.eq(core.busy),
            self.status.fields.log.eq(core.log_on),
            self.trace_data.w.eq(core.trace_word),
            core.trace_pop.eq(self.trace_data.we),
            self.trace_status.fields.records.eq(core.trace_level),
            self.trace_status.fields.depth.eq(core.trace_depth),
        ]


def connect_pcore_array(te_engine, array):
    """Statements wiring the engine's PCORE-facing ports to a PCOREArray."""
    return (te_engine.te.connect(array.te)
            + [array.te_start_valid.eq(te_engine.start_valid), te_engine.start_ready.eq(array.te_start_ready),
               array.te_start_func.eq(te_engine.start_func), array.te_start_process.eq(te_engine.start_process),
               te_engine.busy.eq(array.busy)])


def add_tensor_engine(soc, config, name="tensor_engine", pcore_array=None, pcore_origin=None, build_dir=None):
    """Add the TensorEngine to ``soc`` (a ``TensorSoC``) through its
    ``add_core``: CSRs ``name`` and a Wishbone DMA master over main RAM, with
    the PCORE array it drives (``pcore_array``, or a new one added with
    ``tensorsoc.cores.pcore.soc.add_pcore_array``).  Returns (engine, array)."""
    if pcore_array is None:
        from tensorsoc.cores.pcore.soc import add_pcore_array
        pcore_array = add_pcore_array(soc, config, origin=pcore_origin, build_dir=build_dir)
    ddr_base = soc.mem_map["main_ram"]
    engine = TensorEngine(config, ddr_base=ddr_base, ddr_size=config.main_ram_size)
    soc.add_core(name, engine, masters=[engine.bus])
    soc.comb += connect_pcore_array(engine, pcore_array)
    return engine, pcore_array
