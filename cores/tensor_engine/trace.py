"""The LOG_ON / LOG_OFF activity trace: event records into a buffer the
MCORE drains word by word (record format: sw/te_trace.py).

Events: LOG turned on or off (always recorded), and while it is on a change
of the PCORE process-busy bits, the start and the end of a transfer.  A
transfer event and a busy change in the same clock are both kept: the busy
record waits one clock in a holding register with its own timestamp.  When
the buffer is full, records are dropped and the next one stored carries
``lost``.
"""

from migen import *
from migen.genlib.fifo import SyncFIFOBuffered

from tensorsoc.sw import te_trace as fmt


class ActivityTrace(Module):
    """Inputs: ``log_on``, ``busy`` (2), ``xfer_active`` and the transfer's
    attributes ``xfer_info`` (a dict of field name -> signal, sampled while
    ``xfer_active``).  Output: ``word`` (the next 32-bit word, 0 when the buffer
    is empty) and ``pop`` (in: the word was read); ``level`` records buffered."""

    def __init__(self, xfer_info, depth=256):
        self.log_on = Signal()
        self.busy = Signal(2)
        self.xfer_active = Signal()
        self.word = Signal(32)
        self.pop = Signal()
        self.level = Signal(max=depth + 2)
        self.cycles = Signal(32)

        # # #

        def _info(**values):
            """The info word of a record from field values (each sized to its field)."""
            word = Signal(32)
            for name, (lsb, width) in fmt.FIELD.items():
                self.comb += word[lsb:lsb + width].eq(values.get(name, 1 if name == "valid" else 0))
            return word

        self.submodules.buf = buf = SyncFIFOBuffered(64, depth)
        self.sync += self.cycles.eq(self.cycles + 1)

        log_r = Signal()
        busy_r = Signal(2)
        xfer_r = Signal()
        self.sync += [log_r.eq(self.log_on), busy_r.eq(self.busy), xfer_r.eq(self.xfer_active)]
        log_edge = Signal()
        xfer_start = Signal()
        xfer_end = Signal()
        busy_change = Signal()
        self.comb += [
            log_edge.eq(self.log_on != log_r),
            xfer_start.eq(self.log_on & self.xfer_active & ~xfer_r),
            xfer_end.eq(self.log_on & ~self.xfer_active & xfer_r),
            busy_change.eq(self.log_on & (self.busy != busy_r)),
        ]
        info = dict(xfer_info)
        primary = Signal()
        primary_word = Signal(32)
        self.comb += [
            primary.eq(log_edge | xfer_start | xfer_end),
            primary_word.eq(Mux(log_edge,
                                _info(kind=Mux(self.log_on, fmt.KINDS["LOG_ON"], fmt.KINDS["LOG_OFF"]), busy=self.busy),
                                _info(kind=Mux(xfer_start, fmt.KINDS["XFER_START"], fmt.KINDS["XFER_END"]),
                                      busy=self.busy, **info))),
        ]
        # A busy change waits here while a primary event takes the clock.
        held = Signal()
        held_ts = Signal(32)
        held_busy = Signal(2)
        lost = Signal()
        rec = Signal(64)
        rec_we = Signal()
        self.comb += [
            If(primary,
                rec.eq(Cat(primary_word | (lost << fmt.FIELD["lost"][0]), self.cycles)), rec_we.eq(1),
            ).Elif(held,
                rec.eq(Cat(_info(kind=fmt.KINDS["BUSY"], busy=held_busy, lost=lost), held_ts)), rec_we.eq(1),
            ).Elif(busy_change,
                rec.eq(Cat(_info(kind=fmt.KINDS["BUSY"], busy=self.busy, lost=lost), self.cycles)), rec_we.eq(1),
            ),
            buf.din.eq(rec),
            buf.we.eq(rec_we),
        ]
        self.sync += [
            If(busy_change & (primary | held), held.eq(1), held_ts.eq(self.cycles), held_busy.eq(self.busy)
            ).Elif(~primary, held.eq(0)),
            If(rec_we, lost.eq(~buf.writable)),
        ]

        # Read side: info word, then the timestamp; the second read pops.
        half = Signal()
        self.comb += [
            self.word.eq(Mux(buf.readable, Mux(half, buf.dout[32:], buf.dout[:32]), 0)),
            buf.re.eq(self.pop & half),
            self.level.eq(buf.level),
        ]
        self.sync += If(self.pop & buf.readable, half.eq(~half))
