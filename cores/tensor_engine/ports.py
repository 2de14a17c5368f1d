"""Word ports of the byte-addressed spaces (DDR, scratch-pad).

The reader and the writer of the engine see DDR and the scratch-pad the same
way: a 32-bit word read port and a 32-bit word write port with byte enables,
each a request held until its acknowledge.  ``WishboneWordPort`` turns them
into one Wishbone master on the SoC bus (writes first when both wait);
``ScratchPad`` is the engine's own memory.
"""

from migen import *

from litex.soc.interconnect import wishbone


class WordPort:
    def __init__(self):
        self.rd_stb = Signal()
        self.rd_adr = Signal(30)
        self.rd_ack = Signal()
        self.rd_dat = Signal(32)
        self.wr_stb = Signal()
        self.wr_adr = Signal(30)
        self.wr_dat = Signal(32)
        self.wr_sel = Signal(4)
        self.wr_ack = Signal()


class WishboneWordPort(Module):
    """One Wishbone master shared by the read and the write side.

    The bus is driven from flip-flops: a request is latched in the clock it
    arrives (the write when both wait) and put on the bus the clock after,
    held there until its acknowledge.  So the element path's request logic
    (the writer's word merge, the reader's cache compare) and the slave's
    acknowledge logic (the accelerator's Wishbone crossing, whose read-ahead
    compares the bus address) are in different clocks: in one they were the
    ULX3S's ``accel`` critical path (docs/fpga.md).  It costs one clock per
    access; the acknowledge reaches the requester in the clock it comes.
    """

    def __init__(self):
        self.port = p = WordPort()
        self.bus = bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word")

        # # #

        owner = Signal(2)          # 0 free, 1 write on the bus, 2 read on the bus
        adr = Signal(30)
        dat = Signal(32)
        sel = Signal(4)
        self.comb += [
            bus.cyc.eq(owner != 0),
            bus.stb.eq(bus.cyc),
            bus.we.eq(owner == 1),
            bus.adr.eq(adr),
            bus.dat_w.eq(dat),
            bus.sel.eq(sel),
            bus.cti.eq(0),
            p.wr_ack.eq(bus.ack & (owner == 1)),
            p.rd_ack.eq(bus.ack & (owner == 2)),
            p.rd_dat.eq(bus.dat_r),
        ]
        # A request is still on the port in the clock of its acknowledge
        # (the requester drops it the clock after): only a free port latches.
        self.sync += If(owner == 0,
            If(p.wr_stb, owner.eq(1), adr.eq(p.wr_adr), dat.eq(p.wr_dat), sel.eq(p.wr_sel)
            ).Elif(p.rd_stb, owner.eq(2), adr.eq(p.rd_adr), sel.eq(0b1111))
        ).Elif(bus.ack, owner.eq(0))


def scratch_word_bytes(vw, vector_path=True):
    """Bytes per scratch-pad word: one PCORE vector word (VW x 16 bits), at
    least 32 bits; 32 bits without the vector path (``vector_path`` false,
    ``SoCConfig.te_vector_path=0``: only the element path's 32-bit port
    reads and writes it, and a wider word would only add its slice
    multiplexer and a wider write)."""
    return max(4, 2 * vw) if vector_path else 4


class ScratchPad(Module):
    """The scratch-pad: ``size`` bytes as ``word_bytes``-byte words (one PCORE
    vector word, so the vector path moves a whole word per clock).

    ``port`` is the element path's 32-bit ``WordPort`` (a slice of a wide
    word); ``wide_*`` is the vector path's full-width access, selected by
    ``wide``.  Reads answer the next clock.  A write is acknowledged in the
    clock it arrives and registered (address, data, byte enables) before
    the block RAM: the element path's word merge and the route to the
    scratch-pad's block RAMs, spread over the chip, in one clock were the
    ULX3S's ``accel`` critical path at 50.64 MHz (docs/fpga.md).  So a
    write reaches the memory a clock later: a read in the clock of the
    write request returns the old word, a read the clock after (or later)
    the new one (the read port is transparent to the write port).  The
    engine never reads a word in the clock it writes it: within a transfer
    every source element is read before any destination element is
    written (docs/tensor_semantics.md, "Order"), and a transfer that reads
    what the one before it writes starts after that one's last write."""

    def __init__(self, size, word_bytes=4):
        assert word_bytes % 4 == 0 and size % word_bytes == 0
        self.port = p = WordPort()
        self.word_bytes = word_bytes
        self.wide = Signal()
        self.wide_rd_adr = Signal(30)
        self.wide_rd_dat = Signal(8 * word_bytes)
        self.wide_wr_adr = Signal(30)
        self.wide_wr_dat = Signal(8 * word_bytes)
        self.wide_wr_be = Signal(word_bytes)
        self.mem = Memory(8 * word_bytes, size // word_bytes, name="te_scratch")

        # # #

        rd = self.mem.get_port()
        wr = self.mem.get_port(write_capable=True, we_granularity=8)
        self.specials += self.mem, rd, wr
        k = (word_bytes // 4).bit_length() - 1        # 32-bit slices per word (log2)
        slices = Array(rd.dat_r[32 * j:32 * j + 32] for j in range(word_bytes // 4))
        pending = Signal()
        slice_shift = Signal(max(1, k + 2))
        self.comb += [
            slice_shift.eq(Cat(C(0, 2), p.wr_adr[:k]) if k else 0),
            self.wide_rd_dat.eq(rd.dat_r),
            p.rd_dat.eq(slices[p.rd_adr[:k]] if k else rd.dat_r),
            p.rd_ack.eq(pending),
            p.wr_ack.eq(p.wr_stb),
            rd.adr.eq(Mux(self.wide, self.wide_rd_adr, p.rd_adr[k:])),
        ]
        # the write, registered before the block RAM
        self.sync += If(self.wide,
                wr.adr.eq(self.wide_wr_adr),
                wr.dat_w.eq(self.wide_wr_dat),
                wr.we.eq(self.wide_wr_be),
            ).Else(
                wr.adr.eq(p.wr_adr[k:]),
                wr.dat_w.eq(Replicate(p.wr_dat, word_bytes // 4)),
                # the shift amount as its own signal: Verilog sizes an inline product to its operands
                wr.we.eq(Mux(p.wr_stb, p.wr_sel, 0) << slice_shift),
            )
        self.sync += pending.eq(p.rd_stb & ~pending)
