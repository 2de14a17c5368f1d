"""A first-word-fall-through FIFO whose output is a register.

Migen's ``SyncFIFO`` (``fwft=True``) reads its LUT RAM asynchronously: its
``dout`` is the memory's read at the read pointer and its ``readable`` a
compare of its level, so whatever the consumer computes from the head word
starts with a LUT-RAM read and a carry chain.  In the ULX3S build those
were the first nanoseconds of the accel clock's critical paths (the
decoder's instruction queue; the vector path's request queue into the DMA
crossing).  ``HeadFIFO`` keeps a ``SyncFIFO`` behind a head register: the
head takes the FIFO's first word, or the word being written when the FIFO
is empty (a bypass), so a word written in one clock is readable in the
next, as in ``SyncFIFO``.  Its ports, level, capacity and cycle behaviour
are those of ``SyncFIFO(width, depth)`` with ``fwft=True``
(``tests/test_te_fifo.py`` compares the two under random traffic); only
``dout`` and ``readable`` now leave flip-flops.  (Migen's
``SyncFIFOBuffered`` registers its output too, but a word takes two
clocks to reach it.)
"""

from migen import *
from migen.genlib.fifo import SyncFIFO


class HeadFIFO(Module):
    def __init__(self, width, depth):
        self.din = Signal(width)
        self.we = Signal()
        self.writable = Signal()
        self.dout = Signal(width)
        self.re = Signal()
        self.readable = Signal()
        self.level = Signal(max=depth + 1)

        # # #

        # The FIFO behind the head: depth words (one is never used, the
        # level below stops writes at depth in all), a power of two as the
        # caller's depth, so its pointers wrap for free.
        self.submodules.fifo = fifo = SyncFIFO(width, depth)
        free = Signal()        # the head takes a word (or empties) this clock
        do_write = Signal()
        self.comb += [
            self.level.eq(fifo.level + self.readable),
            self.writable.eq(self.level != depth),
            do_write.eq(self.we & self.writable),
            free.eq(~self.readable | self.re),
            fifo.din.eq(self.din),
            fifo.re.eq(free & fifo.readable),
            # written into the FIFO unless it goes straight to the head
            fifo.we.eq(do_write & ~(free & ~fifo.readable)),
        ]
        self.sync += If(free,
            If(fifo.readable, self.dout.eq(fifo.dout), self.readable.eq(1)
            ).Elif(do_write, self.dout.eq(self.din), self.readable.eq(1)
            ).Else(self.readable.eq(0)))
