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

    A request is put on the bus in the clock it arrives; the owner is latched
    until the acknowledge so a request is never switched under the slave.
    """

    def __init__(self):
        self.port = p = WordPort()
        self.bus = bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word")

        # # #

        owner = Signal(2)          # 0 free, 1 write in progress, 2 read in progress
        is_write = Signal()
        self.comb += [
            is_write.eq(Mux(owner == 0, p.wr_stb, owner == 1)),
            bus.cyc.eq((owner != 0) | p.wr_stb | p.rd_stb),
            bus.stb.eq(bus.cyc),
            bus.we.eq(is_write),
            bus.adr.eq(Mux(is_write, p.wr_adr, p.rd_adr)),
            bus.dat_w.eq(p.wr_dat),
            bus.sel.eq(Mux(is_write, p.wr_sel, 0b1111)),
            bus.cti.eq(0),
            p.wr_ack.eq(bus.ack & is_write),
            p.rd_ack.eq(bus.ack & ~is_write),
            p.rd_dat.eq(bus.dat_r),
        ]
        self.sync += If(bus.ack, owner.eq(0)).Elif(bus.cyc & (owner == 0), owner.eq(Mux(is_write, 1, 2)))


class ScratchPad(Module):
    """The scratch-pad: ``size`` bytes as 32-bit words; reads answer the next
    clock, writes in the clock they arrive."""

    def __init__(self, size):
        self.port = p = WordPort()
        self.mem = Memory(32, size // 4, name="te_scratch")

        # # #

        rd = self.mem.get_port()
        wr = self.mem.get_port(write_capable=True, we_granularity=8)
        self.specials += self.mem, rd, wr
        pending = Signal()
        self.comb += [
            rd.adr.eq(p.rd_adr),
            p.rd_dat.eq(rd.dat_r),
            p.rd_ack.eq(pending),
            wr.adr.eq(p.wr_adr),
            wr.dat_w.eq(p.wr_dat),
            wr.we.eq(Mux(p.wr_stb, p.wr_sel, 0)),
            p.wr_ack.eq(p.wr_stb),
        ]
        self.sync += pending.eq(p.rd_stb & ~pending)
