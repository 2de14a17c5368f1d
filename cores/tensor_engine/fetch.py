"""``TEFetch``: instruction fetch by DMA for the TensorEngine.

The MCORE programs a bus address and a length in words; the fetcher reads the
words from the SoC bus (main RAM: the model image's accelerator section) with
its own Wishbone master, in incremental bursts, and pushes them into the
TensorEngine's instruction queue -- the queue the ``tensor_engine_queue`` CSR
feeds -- as fast as the queue takes them (target ``queue``), or writes them to
the PCORE instruction memory from word 0 through the array's ``te_imem``
port (target ``imem``: a kernel's code).  See docs/tensor_engine.md."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.integration.doc import ModuleDoc
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRStatus, CSRField

from tensorsoc.cores.csr_storage import storage_class

from tensorsoc.cores.tensor_engine.vector import BurstMaster
from tensorsoc.spec.config import DEFAULT

TARGET_QUEUE = 0
TARGET_IMEM = 1


class TEFetchCore(Module):
    """The fetch itself (plain Migen).  Control: ``address`` (byte address),
    ``length`` (words), ``target`` (TARGET_QUEUE, TARGET_IMEM), taken by a
    ``start`` pulse when not ``busy``; ``remaining`` words.  ``q_we``/
    ``q_data`` (out) push a word into the engine's queue, ``q_space`` (in)
    its free words.  ``imem_we``/``imem_adr``/``imem_dat_w`` (out) write the
    PCORE instruction memory (``imem_words`` deep).  ``bus``: the Wishbone
    master (32-bit, word addressed, incremental bursts of at most
    ``max_burst`` beats).  A burst starts when the queue has ``min_space``
    free words (or room for all that is left), so the engine's own DMA is
    not interleaved with single beats, and continues a word per clock while
    the queue has room."""

    def __init__(self, imem_words, max_burst=32, min_space=8, length_bits=24, readback=True):
        self.bus = bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
        self.address = Signal(32)
        self.length = Signal(length_bits)
        self.target = Signal()
        self.start = Signal()
        self.busy = Signal()
        self.remaining = Signal(length_bits)
        self.q_we = Signal()
        self.q_data = Signal(32)
        self.q_space = Signal(16)
        self.imem_we = Signal()
        self.imem_adr = Signal(max=imem_words)
        self.imem_dat_w = Signal(32)

        # # #

        adr = Signal(30)
        remaining = self.remaining
        target = Signal()
        offered = Signal()     # a beat is on the bus, not yet acknowledged
        cont = Signal()        # the last beat was acknowledged with cti 0b010: the next follows now
        busy = self.busy
        fetching = Signal()    # words are still to be read (busy: or the last still to be written)
        self.submodules.burst = burst = BurstMaster(bus, max_burst)
        to_queue = ~target
        # The queue's room, compared a clock before: the queue's level and
        # these compares (carry chains) into the bus request and on through
        # the crossing's acknowledge into the queue's write were the ULX3S's
        # accel critical path (52.54 MHz, 13.8 of its 19.0 ns routing;
        # docs/fpga_history.md, "The fetch's room from flip-flops").  A clock
        # later the queue has at most one word less (this fetch pushes at
        # most one a clock, and nothing else writes the queue while it
        # runs), and ``remaining`` is one less with it, so each flag still
        # promises what its compare did.
        room_min = Signal()    # q_space >= min_space
        room_rest = Signal()   # q_space >= remaining
        room_two = Signal()    # q_space >= 2
        self.sync += [
            room_min.eq(self.q_space >= min_space + 1),
            # (not in the clock a fetch starts: remaining is loaded then)
            room_rest.eq((self.q_space >= remaining) & ~(self.start & ~busy)),
            room_two.eq(self.q_space >= 3),
        ]
        # ``remaining`` above 0 and above 1 as registers that follow it (the
        # value it loads, one less after a beat, or its own): the compare
        # (a carry chain) into the burst's ``more``, through the crossing's
        # request into its FIFO's write, was the ULX3S's accel critical
        # path at 63.40 MHz (12.14 of 15.77 ns routing; docs/fpga.md, "The
        # fetch's word count flags as registers").
        rem_nz = Signal()      # remaining != 0
        rem_gt1 = Signal()     # remaining > 1
        self.sync += [
            If(self.start & ~busy,
                rem_nz.eq(self.length != 0), rem_gt1.eq(self.length > 1),
            ).Elif(burst.ack,
                rem_nz.eq(remaining != 1), rem_gt1.eq(remaining > 2),
            ),
        ]
        self.comb += [
            fetching.eq(rem_nz),
            busy.eq(fetching | self.imem_we),
            # A 0b010 beat promises the next one in the next clock: it needs room for two words.
            burst.req.eq(fetching & (offered | cont | ~to_queue | room_min | room_rest)),
            burst.more.eq(rem_gt1 & (~to_queue | room_two)),
            bus.adr.eq(adr),
            bus.we.eq(0),
            bus.sel.eq(0xf),
            self.q_we.eq(burst.ack & to_queue),
            self.q_data.eq(bus.dat_r),
        ]
        # The instruction-memory write is registered: it lands the clock
        # after the word arrives (and ``busy`` holds until it has), so the
        # bus acknowledge through the crossing no longer reaches the
        # memory's write port, shared with the MCORE's, in one clock (the
        # ULX3S's accel critical path at 52.67 MHz: from the fetch's word
        # count into the instruction memory's address, 15.4 of 19.0 ns
        # routing; docs/fpga_history.md, "The fetch's room from flip-flops").
        self.sync += [
            self.imem_we.eq(burst.ack & ~to_queue),
            self.imem_dat_w.eq(bus.dat_r),
            If(self.imem_we, self.imem_adr.eq(self.imem_adr + 1)),
        ]
        self.sync += [
            offered.eq(bus.cyc & ~bus.ack),
            If(bus.cyc & bus.ack, cont.eq(bus.cti == 0b010)),
            If(burst.ack,
                adr.eq(adr + 1),
                remaining.eq(remaining - 1),
            ),
            If(self.start & ~busy,
                adr.eq(self.address[2:]),
                remaining.eq(self.length),
                target.eq(self.target),
                self.imem_adr.eq(0),
                cont.eq(0),
            ),
        ]


class TEFetch(LiteXModule):
    """``TEFetchCore`` with its CSRs (module ``tensor_engine_fetch`` in the SoC)."""

    def __init__(self, imem_words, max_burst=32, min_space=8, length_bits=24, readback=True):
        self.doc = ModuleDoc(title="TensorEngine instruction fetch", body=(
            "Reads LENGTH 32-bit words from bus address ADDRESS (incremental Wishbone bursts of at most "
            f"{max_burst} beats) and, with CONTROL.target = 0, pushes them into the TensorEngine's instruction "
            "queue (the queue the TENSOR_ENGINE_QUEUE CSR writes; a word per clock while the queue has room), "
            "or, with CONTROL.target = 1, writes them to the PCORE instruction memory from word 0. Writing "
            "CONTROL with start = 1 starts it (ignored while busy); STATUS says when it is done. The MCORE must "
            "not write TENSOR_ENGINE_QUEUE while a queue fetch is busy. See docs/tensor_engine.md."))
        self.core = core = TEFetchCore(imem_words, max_burst, min_space, length_bits)
        self.bus = core.bus
        self.q_we, self.q_data, self.q_space = core.q_we, core.q_data, core.q_space
        self.imem_we, self.imem_adr, self.imem_dat_w = core.imem_we, core.imem_adr, core.imem_dat_w

        # (``readback`` False: ADDRESS, LENGTH and CONTROL read as 0,
        # ``SoCConfig.csr_readback=0``, cores/csr_storage.py)
        self.address = storage_class(readback)(32, description="Bus (byte) address of the first word; 4-byte aligned.")
        self.length = storage_class(readback)(length_bits, description="Number of 32-bit words to fetch.")
        self.control = storage_class(readback)(fields=[
            CSRField("start", size=1, pulse=True, description="write 1: start the fetch (ignored while busy)"),
            CSRField("target", size=1, offset=8, values=[
                ("``0``", "queue", "the TensorEngine's instruction queue"),
                ("``1``", "imem", "the PCORE instruction memory, from word 0 (no kernel may be running)"),
            ], description="where the words go"),
        ])
        self.status = CSRStatus(fields=[
            CSRField("busy", size=1, description="a fetch is in progress"),
            CSRField("remaining", size=length_bits, offset=8, description="words still to fetch"),
        ])

        # # #

        self.comb += [
            core.address.eq(self.address.storage),
            core.length.eq(self.length.storage),
            core.target.eq(self.control.fields.target),
            core.start.eq(self.control.fields.start),
            self.status.fields.busy.eq(core.busy),
            self.status.fields.remaining.eq(core.remaining),
        ]


def add_tensor_engine_fetch(soc, engine, pcore_array=None, name="tensor_engine_fetch", readback=True):
    """Add a ``TEFetch`` to ``soc`` (a ``TensorSoC``) through its
    ``add_core``: CSRs ``name``, a Wishbone master on the SoC bus, feeding
    ``engine``'s (core.TensorEngine) instruction queue and, with
    ``pcore_array`` (cores.pcore.soc.PCOREArray), its instruction memory.
    ``readback``: as ``TEFetch``'s."""
    imem_words = pcore_array.imem_words if pcore_array is not None else DEFAULT.pcore_imem_words
    fetch = TEFetch(imem_words=imem_words, readback=readback)
    soc.add_core(name, fetch, masters=[fetch.bus])
    soc.comb += [
        engine.dma_we.eq(fetch.q_we),
        engine.dma_data.eq(fetch.q_data),
        fetch.q_space.eq(engine.q_space),
    ]
    if pcore_array is not None:
        soc.comb += [
            pcore_array.te_imem_we.eq(fetch.imem_we),
            pcore_array.te_imem_adr.eq(fetch.imem_adr),
            pcore_array.te_imem_dat_w.eq(fetch.imem_dat_w),
        ]
    return fetch
