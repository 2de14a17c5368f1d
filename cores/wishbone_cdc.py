"""``WishboneCDC``: a Wishbone bus from one clock domain to another.

A master in domain ``cd_up`` drives ``up``; ``down`` (domain ``cd_down``)
drives the slave.  Two asynchronous FIFOs (LiteX ``stream.ClockDomainCrossing``,
Gray-coded pointers through ``MultiReg``) carry the traffic, so the two clocks
may be unrelated:

* the *request* FIFO (up -> down) carries every access in program order:
  address, write enable, data and byte selects, entering it through a
  register in ``cd_up`` (a clock of latency);
* the *response* FIFO (down -> up) carries read data and the error flag,
  leaving it through a register in ``cd_up`` (a clock of latency).

Writes are *posted*: ``up`` acknowledges a write as soon as the request FIFO
takes it, and a write's bus error is not reported back (the accelerator's
masters write main RAM only).  Because every access goes through the one
request FIFO, a read after a write (to any address) sees the write.  A master
that must have its writes in memory before it tells anyone (the
TensorEngine's callbacks) compares ``wr_landed`` with ``wr_issued``: the
writes acknowledged by the slave, counted in ``cd_down`` and brought over in
Gray code, against the writes taken.

Reads are *read ahead* during incrementing bursts: while the master's beat
has ``cti`` = 0b010 (more beats follow at the next word address), the up side
requests the following words before the master asks for them, up to
``read_ahead`` reads in flight, and never across a ``block_words`` boundary
(a read never leaves the block the master's own address is in, so it never
reaches past the end of a memory region aligned to the block).  The master's
next beat takes the data already on its way; a beat at another address, or a
write into the words read ahead, discards what was read ahead (after it
arrives) and starts again.  A burst therefore streams at one word per clock of
the slower side once the FIFOs fill; a single read (``cti`` 0) costs the
round trip through both FIFOs.

The down side re-forms bursts: it holds up to three beats in a ring of
registers (read from the FIFO while fewer than three are held, so the
slave's acknowledge never reaches the FIFO's pointers in the same clock, and
moves only the ring's read pointer and count, not the beats' registers) and
offers the first with
``cti`` = 0b010 when the second is already there, at the following word address and of the same kind (read or
write), up to ``max_burst`` beats; else 0b111 (the last beat of a burst) or
0 (a single access).  ``cti`` is frozen from the first clock a beat is offered
until its acknowledge.  A first beat waits one clock when the next is
arriving (to know whether to start a burst), and ``cyc`` drops for one clock
after each burst or single access, so the SoC's arbiter can serve the other
masters.

The response FIFO is ``read_ahead`` deep: the up side never has more reads in
flight, so it cannot overflow (``overflow``, a sticky flag in ``cd_down``, is
the check the tests read).

``bursts=False`` leaves out the read-ahead (and the address compares in the
up side's acknowledge): for a master that reads one word at a time, such as
the CPU reaching the accelerator's registers.

``cd_up`` == ``cd_down`` is refused: connect the buses instead.
"""

from functools import reduce
from operator import xor

from migen import *
from migen.genlib.cdc import GrayCounter, MultiReg

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

CTI_CLASSIC = 0b000
CTI_INCR = 0b010
CTI_END = 0b111


class WishboneCDC(LiteXModule):
    # Enough for every write in flight: the request FIFO, its input
    # register and the three beats the down side holds (a fence compares
    # counts modulo 2**6, so fewer than 32 may be in flight).
    WR_COUNT_BITS = 6

    def __init__(self, up, down, cd_up, cd_down, read_ahead=16, depth=16, max_burst=64, block_words=256,
                 bursts=True):
        if cd_up == cd_down:
            raise ValueError(f"WishboneCDC: both sides are in clock domain {cd_up!r}; connect the buses directly")
        aw, dw = len(up.adr), len(up.dat_w)
        if (len(down.adr), len(down.dat_w)) != (aw, dw):
            raise ValueError(f"WishboneCDC: the buses differ (address {aw} / {len(down.adr)} bits, "
                             f"data {dw} / {len(down.dat_w)} bits); convert one first")
        if depth + 4 >= 1 << (self.WR_COUNT_BITS - 1):
            raise ValueError(f"WishboneCDC: depth={depth}: at most {(1 << (self.WR_COUNT_BITS - 1)) - 5}")
        for name, n in (("read_ahead", read_ahead), ("depth", depth), ("block_words", block_words)):
            if n < 4 or n & (n - 1):
                raise ValueError(f"WishboneCDC: {name}={n} must be a power of two, 4 or more")
        self.up_idle = Signal()      # cd_up: no read in flight (writes may still be on their way)
        self.down_idle = Signal()    # cd_down: nothing held, nothing offered
        self.overflow = Signal()     # cd_down, sticky: a response found the response FIFO full (a bug)
        # Write fence (cd_up): writes taken from the master, and writes the
        # slave has acknowledged (seen through a Gray-coded counter), both
        # modulo 2**WR_COUNT_BITS.  Equal: every posted write is in memory.
        self.wr_issued = Signal(self.WR_COUNT_BITS)
        self.wr_landed = Signal(self.WR_COUNT_BITS)

        req_layout = [("adr", aw), ("we", 1), ("dat_w", dw), ("sel", dw // 8)]
        rsp_layout = [("dat_r", dw), ("err", 1)]
        self.req = req = stream.ClockDomainCrossing(req_layout, cd_from=cd_up, cd_to=cd_down, depth=depth)
        # The up side's requests enter the FIFO through a register (LiteX
        # stream.PipeValid): the master's request and the read-ahead logic
        # end at flip-flops, not at the FIFO's write enable and the Gray
        # counter of its write pointer (with them, the accel DMA master's
        # burst request through this logic was the ULX3S's accel critical
        # path at 51.00 MHz, 16.2 of its 19.6 ns routing; docs/fpga.md).  It
        # costs every access a clock of latency, not throughput.  Its ready
        # is a register too (a skid register behind it, LiteX
        # stream.PipeReady): a write's acknowledge no longer comes from the
        # FIFO's full compare (the Gray-coded read pointer brought into
        # cd_up) in the clock the master's logic acts on it (with it, that
        # compare through the acknowledge into the TensorEngine's vector path
        # was the ULX3S's accel critical path at 51.47 MHz, 16.9 of its 19.4
        # ns routing; docs/fpga_history.md, "The crossing's ready from flip-flops").
        # When the FIFO is full the skid register holds one more access.
        self.req_pipe = req_pipe = ClockDomainsRenamer(cd_up)(
            stream.Buffer(req_layout, pipe_valid=True, pipe_ready=True))
        self.rsp = rsp = stream.ClockDomainCrossing(rsp_layout, cd_from=cd_down, cd_to=cd_up, depth=read_ahead)
        # The responses leave the FIFO through a register in cd_up (LiteX
        # stream.PipeValid): the master's acknowledge and read data come from
        # flip-flops, not from the FIFO's readable compare (the Gray-coded
        # write pointer brought into cd_up) in the same clock (with it, that
        # compare through ``hit`` and the acknowledge into the TensorEngine's
        # vector path was the ULX3S's accel critical path at 59.76 MHz, 14.0
        # of its 16.7 ns routing; docs/fpga.md, "The crossing's response from
        # flip-flops").  It costs a read a clock of latency, not throughput;
        # the register holds one response beside the FIFO's ``read_ahead``,
        # and ``n_out`` still bounds the responses on their way.  Its ready
        # is a register too (stream.PipeReady, a skid register behind it):
        # the FIFO's read, its Gray-coded pointer and its LUT-RAM read
        # address no longer wait for the master's request and the read-ahead
        # match (``stale``, ``hit``) in the same clock (with them, the
        # TensorEngine fetch's request through them into the FIFO's read was
        # the ULX3S's accel critical path at 53.81 MHz, 14.5 of its 18.6 ns
        # routing; docs/fpga.md, "The crossing's response ready from
        # flip-flops").  It holds one more response, still within ``n_out``.
        self.rsp_pipe = rsp_pipe = ClockDomainsRenamer(cd_up)(
            stream.Buffer(rsp_layout, pipe_valid=True, pipe_ready=True))
        self.comb += rsp.source.connect(rsp_pipe.sink)
        rsp_out = rsp_pipe.source

        # -- up side (cd_up) -------------------------------------------------
        sync_up = getattr(self.sync, cd_up)
        n_out = Signal(max=read_ahead + 1)   # reads requested whose response is not yet taken
        head = Signal(aw)                    # the word address of the oldest of them
        ahead = Signal(aw)                   # the next word address to read ahead
        stale = Signal()                     # every read in flight is to be discarded
        blk = log2_int(block_words)

        access = Signal()
        rd = Signal()
        wr = Signal()
        match = Signal()
        hit = Signal()
        drop = Signal()
        first = Signal()
        more = Signal()
        push = Signal()
        pop = Signal()
        in_ahead = Signal()
        self.comb += [
            access.eq(up.cyc & up.stb),
            rd.eq(access & ~up.we),
            wr.eq(access & up.we),
            # (without read-ahead, the one read in flight is the master's beat)
            match.eq((n_out != 0) & ~stale & ((head == up.adr) if bursts else 1)),
            hit.eq(rd & match & rsp_out.valid),
            drop.eq(stale & rsp_out.valid),
            rsp_out.ready.eq(hit | drop),
            pop.eq(rsp_out.valid & rsp_out.ready),
            up.dat_r.eq(rsp_out.dat_r),
            up.ack.eq((wr & req_pipe.sink.ready) | (hit & ~rsp_out.err)),
            up.err.eq(hit & rsp_out.err),
            # a read with nothing in flight: request its own word
            first.eq(rd & ~stale & (n_out == 0)),
            # a beat of an incrementing burst whose word is in flight: read ahead
            more.eq(rd & match & (up.cti == CTI_INCR) & (n_out < read_ahead)
                    & (ahead[blk:] == up.adr[blk:])) if bursts else more.eq(0),
            req_pipe.sink.valid.eq(wr | first | more),
            req_pipe.sink.adr.eq(Mux(more, ahead, up.adr)),
            req_pipe.sink.we.eq(wr),
            req_pipe.sink.dat_w.eq(up.dat_w),
            req_pipe.sink.sel.eq(up.sel),
            req_pipe.source.connect(req.sink),
            push.eq(req_pipe.sink.valid & req_pipe.sink.ready),
            in_ahead.eq((up.adr >= head) & (up.adr < ahead)),
            self.up_idle.eq(n_out == 0),
        ]
        sync_up += [
            n_out.eq(n_out + (push & ~wr) - pop),
            If(push & first, head.eq(up.adr), ahead.eq(up.adr + 1)),
            If(push & more, ahead.eq(ahead + 1)),
            If(hit, head.eq(head + 1)),
            If(drop & (n_out == 1), stale.eq(0)),
            If(push & wr, self.wr_issued.eq(self.wr_issued + 1)),
        ]
        if bursts:
            # a read elsewhere, or a write into the words read ahead: discard them
            sync_up += [
                If(rd & (n_out != 0) & ~stale & (head != up.adr), stale.eq(1)),
                If(wr & push & (n_out != 0) & ~stale & in_ahead, stale.eq(1)),
            ]

        # -- down side (cd_down) ---------------------------------------------
        # The beats taken from the FIFO wait in a ring of four registers, at
        # most three of them full; ``rp`` points at the one offered.  The
        # FIFO is read while fewer than three are full, a registered
        # condition, so the slave's acknowledge (through the SoC's crossbar)
        # moves only the read pointer and the count: it never reaches the
        # FIFO's pointers or the enables of the beats' flip-flops (~200 for
        # three beats, which a shift register moved on each acknowledge: the
        # ULX3S's `sys` critical path ended there, docs/fpga.md).
        sync_down = getattr(self.sync, cd_down)
        src = req.source
        ring = [Record(req_layout) for _ in range(4)]
        rp = Signal(2)           # the beat offered
        wp = Signal(2)           # the slot the FIFO's next beat goes to
        count = Signal(2)        # beats held, 0 .. 3
        fields = [name for name, _ in req_layout]
        cur = Record(req_layout)
        nxt = Record(req_layout)     # the beat after the one offered
        nrp = Signal(2)
        self.comb += nrp.eq(rp + 1)
        for f in fields:
            self.comb += [getattr(cur, f).eq(Array([getattr(r, f) for r in ring])[rp]),
                          getattr(nxt, f).eq(Array([getattr(r, f) for r in ring])[nrp])]
        v = [count != 0, count >= 2]
        pending = Signal()       # the current beat is offered and not yet acknowledged
        cti_r = Signal(3)
        blen = Signal(max=max_burst)     # beats of the current burst acknowledged
        cti = Signal(3)
        gap = Signal()           # one clock with cyc low after a burst or single access (other masters)
        hold = Signal()
        offer = Signal()
        done = Signal()
        take_src = Signal()
        consec = Signal()
        self.comb += [
            consec.eq(v[1] & (nxt.we == cur.we) & (nxt.adr == cur.adr + 1) & (blen != max_burst - 1)),
            cti.eq(Mux(pending, cti_r, Mux(consec, CTI_INCR, Mux(blen != 0, CTI_END, CTI_CLASSIC)))),
            # A first beat while the next one is arriving: offer it the
            # clock after, when its cti (a burst or not) is known.
            hold.eq(~pending & (blen == 0) & ~v[1] & src.valid),
            offer.eq(v[0] & ~gap & ~hold),
            down.cyc.eq(offer),
            down.stb.eq(offer),
            down.adr.eq(cur.adr),
            down.we.eq(cur.we),
            down.dat_w.eq(cur.dat_w),
            down.sel.eq(cur.sel),
            down.cti.eq(cti),
            down.bte.eq(0),
            done.eq(offer & (down.ack | down.err)),
            take_src.eq(src.valid & (count != 3)),
            src.ready.eq(take_src),
            rsp.sink.valid.eq(done & ~cur.we),
            rsp.sink.dat_r.eq(down.dat_r),
            rsp.sink.err.eq(down.err),
            self.down_idle.eq(~v[0] & ~src.valid),
        ]
        for k in range(4):
            sync_down += If(take_src & (wp == k), *[getattr(ring[k], f).eq(getattr(src, f)) for f in fields])
        sync_down += [
            If(take_src, wp.eq(wp + 1)),
            If(done, rp.eq(rp + 1)),
            count.eq(count + take_src - done),
        ]
        sync_down += [
            If(offer & ~done, pending.eq(1), cti_r.eq(cti)).Else(pending.eq(0)),
            If(done, If(cti == CTI_INCR, blen.eq(blen + 1)).Else(blen.eq(0))),
            gap.eq(done & (cti != CTI_INCR)),
            If(rsp.sink.valid & ~rsp.sink.ready, self.overflow.eq(1)),
        ]
        landed = ClockDomainsRenamer(cd_down)(GrayCounter(self.WR_COUNT_BITS))
        self.submodules += landed
        landed_gray = Signal(self.WR_COUNT_BITS)
        self.comb += landed.ce.eq(done & cur.we)
        self.specials += MultiReg(landed.q, landed_gray, cd_up)
        # Gray to binary: bit i is the XOR of the Gray bits from i up.
        self.comb += [self.wr_landed[i].eq(reduce(xor, [landed_gray[j] for j in range(i, self.WR_COUNT_BITS)]))
                      for i in range(self.WR_COUNT_BITS)]
