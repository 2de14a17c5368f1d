"""The vector path of the TensorEngine: whole memory words per clock.

A transfer qualifies when on both sides the innermost level is contiguous
(step = one element), checked only if in bound over the whole row (stride 1)
or with stride 0, not overlapped, no broadcast level, no PROC, the destination
is not the SPU, INT16 rows in DDR/scratch start on even bytes, and not DDR on
both sides (one bus master).  ``eligible()`` says so from the decoded sides;
everything else takes the element path of ``engine.py``, bit-exact either way.

Both address generators run in chunk mode (``agen.py``): one advance is a
*chunk*, the elements of one row that lie in one memory word (a 32-bit DDR
word, a scratch-pad word of VW x 16 bits, a PCORE vector word)::

    src agen -> request queue -> memory (DDR burst | scratch | PCORE te read)
        -> response queue -> unpack + convert -> element ring (2L x 16 bits)
        -> pack + convert <- chunk queue <- dst agen
        -> write queue -> memory (.. | PCORE te write)

The element ring takes up to L = max(VW, 4) elements per clock at any lane
offset and gives up to L at any other offset, so rows of different lengths
and alignments on the two sides still move a word per clock.  DDR reads and
writes are Wishbone incremental bursts (cti 0b010, last beat 0b111, bte 0)
of up to ``max_burst`` beats inside one row, with cyc low for a clock between
bursts so other masters get the bus.
"""

from migen import *
from migen.genlib.fifo import SyncFIFO

from litex.soc.interconnect import wishbone

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.cores.tensor_engine.ports import scratch_word_bytes
from tensorsoc.cores.tensor_engine.fifo import HeadFIFO

SPACE = {name: v[0] for name, v in isa.SPACES.items()}
DT = {name: v[0] for name, v in isa.DTYPES.items()}
CTI_INCREMENTING = 0b010
CTI_END = 0b111


def _log2(n):
    return n.bit_length() - 1


def eligible(sd, first=0):
    """Expression: side ``sd`` can be walked by chunks (see the module doc).
    ``first``: the slot of its innermost non-broadcast level, which is also
    its number of broadcast slots (1: a destination broadcast over the
    PCORE dimension, the engine's broadcast mode; its broadcast slot is
    checked by the engine)."""
    f = first
    byte = sd.space <= SPACE["SCRATCH"]
    wide = byte & (sd.dtype == DT["INT16"])
    unit = Mux(wide, 2, 1)
    last = Signal((48, True))       # index of the row's last element (stride 1)
    bound = Signal((48, True))
    sd.vector_eligibility = getattr(sd, "vector_eligibility", []) + [
        last.eq(sd.start[f] + sd.count[f] - 1), bound.eq(sd.bound[f])]
    row_in_bound = (sd.start[f] >= 0) & (last < bound)
    even = (sd.base[0] == 0) & reduce_and([sd.step[l][0] == 0 for l in range(f + 1, len(sd.step))])
    return ((sd.nbcast == f) & (sd.space <= SPACE["PCORE_SHARED"]) & (sd.step[f] == unit) & ~sd.ovl[f]
            & (~sd.chk[f] | (sd.stride[f] == 0) | ((sd.stride[f] == 1) & row_in_bound))
            & (~wide | even))


def rotate(xs, amount):
    """Expressions ``ys[e] = xs[(e + amount) mod len(xs)]`` (a power-of-2
    length): log2(len) stages of 2:1 multiplexers, stage i moving by 2**i."""
    n = len(xs)
    cur = list(xs)
    for i in range(_log2(n)):
        cur = [Mux(amount[i], cur[(e + (1 << i)) % n], cur[e]) for e in range(n)]
    return cur


def reduce_and(xs):
    out = 1
    for x in xs:
        out = out & x
    return out


def ring_lanes(vw):
    """Elements the element ring takes per clock: L = max(VW, 4)."""
    return max(vw, 4)


def cap_of(sd, config):
    """For ``AddressGenerator(sd, cap_of=...)`` in a TensorEngine of
    ``config``: the ``Geometry`` of an address of side ``sd``; None (no
    chunk mode) in an engine without its vector path (``te_vector_path=0``)."""
    if not config.te_vector_path:
        return None
    vw = config.vw
    return lambda addr: Geometry(sd, addr, vw, scratch_word_bytes(vw), ring_lanes(vw))


class Geometry(Module):
    """Where the element at ``addr`` of side ``sd`` sits: memory word, lane
    offset in it, and how many elements of the word remain (``cap``, at
    most ``lanes``).

    The elements per word (``epw``) and ``lanes`` are powers of two, so
    ``epw - off - 1`` is ``~elem & (epw - 1)`` and ``epw - off > lanes``
    is a bit of it above ``log2(lanes)``: no subtraction and no compare on
    a carry chain, only the increment of ``cap``.  (The generators compute
    a ``cap`` per candidate of their next address; the subtraction and the
    compare after the address's adder were the TensorEngine's critical path
    out of context at the ULX3S's shape, 65.7 MHz.)"""

    def __init__(self, sd, addr, vw, scratch_bytes, lanes):
        self.word = Signal(32)
        self.off = Signal(8)
        self.cap = Signal(8)
        self.esh = Signal()

        # # #

        lvw, lsb, ll = _log2(vw), _log2(scratch_bytes), _log2(lanes)
        assert scratch_bytes <= 256 and vw <= 256 and lanes <= 128
        byte = sd.space <= SPACE["SCRATCH"]
        elem = Signal(8)       # the element index's low bits (addr >> esh)
        mask = Signal(8)       # elements per memory word - 1
        rem = Signal(8)        # elements of the word after this one: epw - 1 - off
        self.comb += [
            self.esh.eq(byte & (sd.dtype == DT["INT16"])),
            elem.eq(Mux(self.esh, addr[1:9], addr[0:8])),
            Case(sd.space, {
                SPACE["DDR"]: [self.word.eq(addr[2:]), mask.eq(Mux(self.esh, 1, 3))],
                SPACE["SCRATCH"]: [self.word.eq(addr[lsb:]),
                                   mask.eq(Mux(self.esh, scratch_bytes // 2 - 1, scratch_bytes - 1))],
                "default": [self.word.eq(addr[lvw:]), mask.eq(vw - 1)],
            }),
            self.off.eq(elem & mask),
            rem.eq(~elem & mask),
            self.cap.eq(Mux(rem[ll:] != 0, lanes, rem + 1)),
        ]


class BurstMaster(Module):
    """Drives one Wishbone master with beats offered by ``req`` (address and
    data from outside).  ``more`` says another beat will be offered in the
    clock after this one is acknowledged: the beat then carries cti 0b010,
    else 0b111 (a burst is at most ``max_burst`` beats).  cti is frozen from
    the first clock a beat is offered until its acknowledge, as a LiteX
    bursting SRAM latches it; after a 0b111 beat cyc drops for one clock."""

    def __init__(self, bus, max_burst):
        self.req = Signal()
        self.more = Signal()
        self.ack = Signal()

        # # #

        pending = Signal()
        cti_r = Signal(3)
        gap = Signal()
        blen = Signal(max=max_burst)
        cti = Signal(3)
        self.comb += [
            cti.eq(Mux(pending, cti_r, Mux(self.more & (blen != max_burst - 1), CTI_INCREMENTING, CTI_END))),
            bus.cyc.eq(self.req & ~gap),
            bus.stb.eq(bus.cyc),
            bus.cti.eq(cti),
            bus.bte.eq(0),
            self.ack.eq(bus.cyc & bus.ack),
        ]
        self.sync += [
            gap.eq(0),
            If(bus.cyc,
                If(bus.ack,
                    pending.eq(0),
                    If(cti == CTI_INCREMENTING, blen.eq(blen + 1)).Else(blen.eq(0), gap.eq(1)),
                ).Else(pending.eq(1), cti_r.eq(cti)),
            ),
        ]


class _Packed:
    """A record packed into one FIFO word."""

    def __init__(self, **fields):
        self.layout = list(fields.items())
        self.width = sum(fields.values())

    def pack(self, **values):
        return Cat(*[values[n] for n, _ in self.layout])

    def unpack(self, word):
        out, pos = {}, 0
        for n, w in self.layout:
            out[n] = word[pos:pos + w]
            pos += w
        return out


def _convert(dtype, v):
    """A 16-bit element after reading/storing as ``dtype`` (truncate, extend)."""
    return Mux(dtype == DT["UINT8"], Cat(v[:8], C(0, 8)),
               Mux(dtype == DT["INT8"], Cat(v[:8], Replicate(v[7], 8)), v))


def _declare_ports(m, config):
    """``VectorPath``'s ports on ``m``, in its order (the engine reads them
    by name; ``NoVectorPath`` has the same, idle)."""
    vw = config.vw
    m.active = Signal()     # in: a vector transfer is executing (the agens are in chunk mode)
    m.done = Signal()       # out: every element of it written
    m.src_done = Signal()   # out: every source word read and unpacked into the element ring
    m.dst_done = Signal()   # out: the destination walked and every word written
    m.src_ready = Signal()  # out: the source agen may advance (read in chunk mode only)
    m.dst_ready = Signal()  # out: the destination agen may advance (read in chunk mode only)
    m.bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
    # te port channels as driven by this path (the engine muxes them in
    # and maps a PCORE tag, element address / VW, to pcore/thread/addr):
    # a source read and a destination write in the same clock.
    m.t_rd_valid = Signal()
    m.t_rd_shared = Signal()
    m.t_rd_tag = Signal(32)
    m.t_wr_valid = Signal()
    m.t_wr_shared = Signal()
    m.t_wr_tag = Signal(32)
    m.t_wdata = Signal(16 * vw)
    m.t_wmask = Signal(vw)
    # Broadcast mode: the PCOREs that take each destination word
    # (``d_bcast``, NP bits, with the chunk; 0 outside broadcast mode).
    m.t_wr_bcast = Signal(config.np)
    # Activity (trace): a memory word read / written this clock.
    m.rd_beat = Signal()
    m.wr_beat = Signal()


class NoVectorPath(Module):
    """What an engine without its vector path (``SoCConfig.te_vector_path=0``)
    has in its place: ``VectorPath``'s ports, idle (nothing drives them, so
    they stay 0 and its bus master never requests), so that the engine's
    multiplexers read the same names.  No transfer selects it (the engine
    never sets ``active``), and the scratch-pad has 32-bit words
    (``ports.scratch_word_bytes``): no vector path reads or writes it a
    memory word at a time."""

    def __init__(self, config):
        _declare_ports(self, config)


class VectorPath(Module):
    """The vector data path; ``engine.py`` muxes its ports in while ``active``."""

    def __init__(self, config, src, dst, sg, dg, s_skip, d_skip, s_next_in, d_next_in, pad,
                 scratch, te, d_bcast=None, rsp_depth=4, max_burst=64):
        vw = config.vw
        self.lanes = L = ring_lanes(vw)
        D = 2 * L                                  # element ring
        sb = scratch.word_bytes
        emax = max(sb, vw)                         # lanes of the widest memory word
        _declare_ports(self, config)
        bus = self.bus
        if d_bcast is None:
            d_bcast = C(0, config.np)

        # # #

        sgeo = Geometry(src, sg.addr, vw, sb, L)
        dgeo = Geometry(dst, dg.addr, vw, sb, L)
        self.submodules += sgeo, dgeo
        # (the generators keep cap as a register: agen.py, cap_of)
        self.comb += [sg.esh.eq(sgeo.esh), dg.esh.eq(dgeo.esh)]
        s_ddr, s_scr = src.space == SPACE["DDR"], src.space == SPACE["SCRATCH"]
        d_ddr, d_scr = dst.space == SPACE["DDR"], dst.space == SPACE["SCRATCH"]
        s_pc, d_pc = ~s_ddr & ~s_scr, ~d_ddr & ~d_scr

        # -- request queue: one chunk of the source per clock --------------
        desc = _Packed(word=32, off=8, n=8, skip=1, cont=1)
        # (its head word in a register, fifo.py: the LUT-RAM read into the
        # DMA crossing's read-ahead compare and back through its acknowledge
        # was the ULX3S's accel critical path, 47.68 MHz)
        self.submodules.rq = rq = HeadFIFO(desc.width, 4)
        self.comb += [
            rq.din.eq(desc.pack(word=sgeo.word, off=sgeo.off, n=sg.n[:8], skip=s_skip,
                                cont=~s_skip & ~sg.row_end & s_next_in)),
            rq.we.eq(sg.chunk_q & sg.valid),     # the generator's own copy of active
            self.src_ready.eq(rq.writable),      # read in chunk mode only (engine.py)
        ]
        head = desc.unpack(rq.dout)

        rsp = _Packed(off=8, n=8, skip=1, data=max(32, 8 * sb, 16 * vw))
        # (its head word in a register too: the LUT-RAM read of the head's
        # element count, the ring's count compare and the ring registers'
        # clock enables were the ULX3S 4 x 8 x 4 build's accel critical
        # path, 51.09 MHz)
        self.submodules.rspq = rspq = HeadFIFO(rsp.width, rsp_depth)

        # DDR (source or destination, never both): bursts.
        self.submodules.burst = bm = BurstMaster(bus, max_burst)
        rd_req, rd_more, wr_req, wr_more = Signal(), Signal(), Signal(), Signal()
        # Scratch / PCORE source: requests into a delay line (1 or 2 clocks).
        d1_valid, d2_valid = Signal(), Signal()
        d1, d2 = Signal(desc.width), Signal(desc.width)
        inflight = Signal(8)
        queued = Signal(8)
        self.comb += [inflight.eq(d1_valid + d2_valid), queued.eq(rspq.level + inflight)]
        issue = Signal()
        te_rd = Signal()
        te_wr = Signal()
        pc_lat2 = s_pc
        rsp_in = Signal(rsp.width)
        rsp_we = Signal()
        ddr_skip = Signal()
        self.comb += [
            # DDR
            rd_req.eq(s_ddr & rq.readable & ~head["skip"] & rspq.writable),
            # the next beat follows next clock if it is queued or being queued
            # now (the first beat of a transfer is no longer a burst of one)
            rd_more.eq(head["cont"] & ((rq.level >= 2) | rq.we) & (rspq.level <= rsp_depth - 2)),
            ddr_skip.eq(s_ddr & rq.readable & head["skip"] & rspq.writable),
            # scratch / PCORE: issue when the response queue has room for everything in flight
            issue.eq(~s_ddr & rq.readable & (queued < rsp_depth)
                     & (head["skip"] | s_scr | te.rd_ready)),
            te_rd.eq(issue & s_pc & ~head["skip"]),
            scratch.wide_rd_adr.eq(head["word"]),
            rq.re.eq((bm.ack & s_ddr) | ddr_skip | issue),
        ]
        self.sync += [
            d1_valid.eq(issue), d1.eq(rq.dout),
            d2_valid.eq(d1_valid & pc_lat2), d2.eq(d1),
        ]
        done_d = Signal(desc.width)
        self.comb += [
            If(s_ddr,
                rsp_we.eq((bm.ack & s_ddr) | ddr_skip), done_d.eq(rq.dout),
                rsp_in.eq(Cat(rq.dout[32:32 + 17], bus.dat_r)),
            ).Elif(s_scr,
                rsp_we.eq(d1_valid), done_d.eq(d1),
                rsp_in.eq(Cat(d1[32:32 + 17], scratch.wide_rd_dat)),
            ).Else(
                rsp_we.eq(d2_valid), done_d.eq(d2),
                rsp_in.eq(Cat(d2[32:32 + 17], te.rdata)),
            ),
            rspq.din.eq(rsp_in),
            rspq.we.eq(rsp_we),
            self.rd_beat.eq((bm.ack & s_ddr) | te_rd | (issue & s_scr & ~head["skip"])),
        ]

        # -- unpack into the element ring -----------------------------------
        r = rsp.unpack(rspq.dout)
        s_byte = src.space <= SPACE["SCRATCH"]
        s_narrow = s_byte & (src.dtype != DT["INT16"])
        raw = [Signal(16, name=f"vraw{k}") for k in range(emax)]
        conv = [Signal(16, name=f"vconv{k}") for k in range(emax)]
        for k in range(emax):
            byte_k = r["data"][8 * k:8 * k + 8] if 8 * k + 8 <= len(r["data"]) else C(0, 8)
            half_k = r["data"][16 * k:16 * k + 16] if 16 * k + 16 <= len(r["data"]) else C(0, 16)
            self.comb += [
                raw[k].eq(Mux(r["skip"], pad, Mux(s_narrow, byte_k, half_k))),
                conv[k].eq(_convert(src.dtype, raw[k])),
            ]
        ring = [Signal(16, name=f"vring{k}") for k in range(D)]
        lb = _log2(D)
        wp, rp = Signal(lb), Signal(lb)
        count = Signal(max=D + 1)
        push = Signal()
        pop = Signal()
        n_push = Signal(8)
        n_pop = Signal(8)
        count_after_push = Signal(10)
        self.comb += count_after_push.eq(count + r["n"])
        self.comb += [
            push.eq(rspq.readable & (count_after_push <= D)),
            rspq.re.eq(push),
            n_push.eq(Mux(push, r["n"], 0)),
        ]
        # Ring entry e takes the word's lane off + ((e - wp) mod D): the
        # word's lanes rotated by (off - wp) mod D (lanes from emax on are
        # never taken: off + n <= emax).  A rotator of log2(D) 2:1 stages
        # rather than a D:1 multiplexer per entry and bit.
        w_rot = Signal(lb)
        self.comb += w_rot.eq(r["off"][:lb] - wp)
        taken = rotate(conv + [C(0, 16)] * (D - emax), w_rot)
        for e in range(D):
            rel = Signal(lb, name=f"vrel{e}")
            self.comb += rel.eq(e - wp)
            self.sync += If(push & (rel < r["n"]), ring[e].eq(taken[e]))
        self.sync += [wp.eq(wp + n_push), rp.eq(rp + n_pop), count.eq(count + n_push - n_pop)]

        # -- destination chunks: a queue between the generator and the packer --
        # The generator advances on the queue's room (a level register), not
        # on the packer's pop: the ring's count against the chunk's size
        # into the clock enables of every destination generator register
        # (about 600 flip-flops spread over the chip) was the ULX3S's accel
        # critical path at 48.73 MHz (20.5 ns, 16.9 of them routing).  The
        # chunk's word, lanes, skip, burst continuation and broadcast copies
        # are computed from the generator's registers as it is queued.
        dd = _Packed(word=32, off=8, n=8, skip=1, cont=1, pcores=config.np)
        self.submodules.dq = dq = SyncFIFO(dd.width, 2)
        self.comb += [
            dq.din.eq(dd.pack(word=dgeo.word, off=dgeo.off, n=dg.n[:8], skip=d_skip,
                              cont=~d_skip & ~dg.row_end & d_next_in, pcores=d_bcast)),
            dq.we.eq(dg.chunk_q & dg.valid),     # the generator's own copy of active
            self.dst_ready.eq(dq.writable),      # read in chunk mode only (engine.py)
        ]
        dh = dd.unpack(dq.dout)

        # -- pack a destination word ------------------------------------------
        # Lane k of the destination word takes ring entry (rp + k - off) mod
        # D: the ring rotated by (rp - off) mod D, as on the way in.
        d_byte = dst.space <= SPACE["SCRATCH"]
        d_narrow = d_byte & (dst.dtype != DT["INT16"])
        r_rot = Signal(lb)
        self.comb += r_rot.eq(rp - dh["off"][:lb])
        given = rotate(ring, r_rot)
        out = [Signal(16, name=f"vout{k}") for k in range(emax)]
        lane_on = [Signal(name=f"vlane{k}") for k in range(emax)]
        for k in range(emax):
            rel = Signal((9, True), name=f"vorel{k}")
            self.comb += [
                rel.eq(k - dh["off"]),
                lane_on[k].eq((rel >= 0) & (rel < dh["n"])),
                out[k].eq(_convert(dst.dtype, given[k])),
            ]
        wdata = Signal(max(32, 8 * sb, 16 * vw))
        wmask = Signal(max(4, sb, vw))
        byte_data = Cat(*[out[k][:8] for k in range(len(wdata) // 8)])
        byte_mask = Cat(*[lane_on[k] for k in range(len(wmask))])
        half_data = Cat(*[out[k] for k in range(len(wdata) // 16)])
        half_mask = Cat(*[Replicate(lane_on[k], 2) for k in range(len(wmask) // 2)])
        self.comb += [
            If(d_narrow, wdata.eq(byte_data), wmask.eq(byte_mask)
            ).Elif(d_byte, wdata.eq(half_data), wmask.eq(half_mask)
            ).Else(wdata.eq(half_data), wmask.eq(Cat(*lane_on[:vw]))),
        ]
        have = Signal()
        self.comb += have.eq(count >= dh["n"])     # the ring holds the chunk
        wq = _Packed(word=32, cont=1, mask=len(wmask), data=len(wdata), pcores=config.np)
        self.submodules.wfq = wfq = SyncFIFO(wq.width, 4)
        # A skipped chunk (out of bound, nothing written) waits for a free
        # write-queue slot like any other, so pop does not depend on its skip.
        self.comb += [
            pop.eq(self.active & dq.readable & have & wfq.writable),
            dq.re.eq(pop),
            n_pop.eq(Mux(pop, dh["n"], 0)),
            wfq.we.eq(pop & ~dh["skip"]),
            wfq.din.eq(wq.pack(word=dh["word"], cont=dh["cont"], mask=wmask, data=wdata, pcores=dh["pcores"])),
        ]

        # -- write the word -----------------------------------------------
        w = wq.unpack(wfq.dout)
        scr_we = Signal()
        # The next beat follows next clock if it is queued or being queued
        # now.  With one word queued, the chunk popped now is the one after
        # it, and a word with cont has a successor in the same row and
        # inside the memory, in bound as it is (the vector path's rows are
        # in bound whole or not at all): it is not skipped, so pop stands
        # for wfq.we here.  wfq.we (pop & ~d_skip) would bring the
        # destination generator's bound and overlap compares into cti and
        # on into the accel crossing's read-ahead logic and its request
        # FIFO's Gray counter (the ULX3S's accel critical path at 45 MHz,
        # 21.8 ns, 17.4 of them routing).
        self.comb += [
            wr_req.eq(d_ddr & wfq.readable),
            wr_more.eq(w["cont"] & ((wfq.level >= 2) | pop)),
            bm.req.eq(Mux(s_ddr, rd_req, wr_req)),
            bm.more.eq(Mux(s_ddr, rd_more, wr_more)),
            bus.we.eq(~s_ddr),
            bus.adr.eq(Mux(s_ddr, head["word"], w["word"])),
            bus.sel.eq(Mux(s_ddr, 0b1111, w["mask"][:4])),
            bus.dat_w.eq(w["data"][:32]),
            te_wr.eq(d_pc & wfq.readable & te.wr_ready),
            scr_we.eq(d_scr & wfq.readable),
            wfq.re.eq((bm.ack & ~s_ddr) | te_wr | scr_we),
            scratch.wide_wr_adr.eq(w["word"]),
            scratch.wide_wr_dat.eq(w["data"]),
            scratch.wide_wr_be.eq(Mux(scr_we, w["mask"], 0)),
            self.wr_beat.eq(wfq.re),
            # the te port: the source on the read channel, the destination on
            # the write channel (PCORE to PCORE: both in the same clock)
            self.t_rd_valid.eq(te_rd),
            self.t_rd_shared.eq(src.space == SPACE["PCORE_SHARED"]),
            self.t_rd_tag.eq(head["word"]),
            self.t_wr_valid.eq(te_wr),
            self.t_wr_shared.eq(dst.space == SPACE["PCORE_SHARED"]),
            self.t_wr_tag.eq(w["word"]),
            self.t_wdata.eq(w["data"][:16 * vw]),
            self.t_wmask.eq(w["mask"][:vw]),
            self.t_wr_bcast.eq(w["pcores"]),
        ]

        # -- end: the destination walked, every word written --------------
        self.comb += self.done.eq(~dg.valid & ~dq.readable & ~wfq.readable & ~rq.readable & ~rspq.readable)
        # -- overlap (engine.py): the next transfer's source may start once this
        # one's source is read and unpacked (the ring keeps the order), its
        # destination once this one's is written
        self.comb += [
            self.src_done.eq(~sg.valid & ~rq.readable & ~d1_valid & ~d2_valid & ~rspq.readable),
            self.dst_done.eq(~dg.valid & ~dq.readable & ~wfq.readable),
        ]
