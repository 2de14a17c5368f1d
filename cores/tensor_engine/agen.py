"""Address generation for one side of a tensor transfer.

A side is up to ``MAX_LEVELS`` nested loops (docs/tensor_semantics.md); the
engine has ``SoCConfig.te_levels`` of them per side (the decoder refuses a
side with more, DECODE), so the generators and the side registers are sized
by it.  The
decoder stores them in *slots* ordered innermost first; for a destination,
broadcast levels (``[*]``) occupy the lowest slots so that every element is
written at all their indices before the next element is taken.  Unused slots
have count 1 and never carry.

Per element the generator presents, from registers only:

* ``addr``: ``base + sum(i_l * step_l)`` modulo 2**32, kept as a stack of
  partial sums (``sa[l]`` = address with every slot below ``l`` at 0) so an
  advance is one add whatever level carries;
* ``oob``: a checked level index outside ``0 .. bound-1`` or the overlap
  offset outside ``0 .. ovl_limit-1``;
* ``first``: all broadcast slots at index 0 (a new source element is due);
* ``last``: every slot at its final iteration.

In *chunk mode* (``chunk``, the vector path of ``vector.py``) an advance
moves slot 0 by ``n`` elements at once: ``n`` is the smaller of ``cap`` (the
elements the current memory word still holds from ``addr``) and what is left
of the innermost row; ``row_end`` says this chunk finishes the row.  Slot 0
must then be contiguous (step = one element = ``1 << esh`` address units) and,
if checked, in bound over the whole row or with stride 0 (the vector path
only selects such transfers), so the per-chunk bound and overlap checks of
the other slots stay exact.
"""

from functools import reduce
from operator import and_, or_

from migen import *

from tensorsoc.spec import tensor_isa as isa

# Dimension indices: a level's start and stride are 32-bit signed and its
# bound 32-bit unsigned, so an index outside -2**32 .. 2**32-1 is out of
# bound whatever the bound.  Between two reloads an index only moves by its
# stride (monotonic), so once outside that range it stays out of bound: the
# generator keeps a sticky bit for it (``far``) and the index in
# IDX_BITS = 34 bits, enough for one more stride past the range.  Exact for
# every transfer, at any count.
IDX_BITS = 34
# Overlap offsets: a sum over several levels with steps of either sign, not
# monotonic, so no sticky bit: kept modulo 2**bits as signed values,
# isa.OVL_BITS = 48 by default (exact while every partial offset, ovl_start
# plus the overlapped levels' i * step, stays within +-2**47), a side's
# ``ovl_bits`` (SoCConfig.te_ovl_bits) in general: the reference executor
# wraps them the same way (isa.wrap_offset).
OVL_BITS = isa.OVL_BITS


def if_enabled(cond, stmt):
    """[stmt] when ``cond``, else no statement (a feature left out)."""
    return [stmt] if cond else []


def limit_bits(ovl_bits):
    """Width of the signed overlap limit the offsets (``ovl_bits`` bits,
    signed) are compared with: the 32-bit unsigned limit itself when it
    fits, else one bit more than an offset (``clamped_limit``)."""
    return ovl_bits if ovl_bits > 32 else ovl_bits + 1


def clamped_limit(side):
    """The side's 32-bit ``ovl_limit`` as the offsets' compare needs it: as
    it is when it fits in ``limit_bits``, else at most 2**(ovl_bits-1),
    which every offset (signed, ``ovl_bits`` bits) is below, as it is below
    any larger limit."""
    b = side.ovl_bits
    if b > 32:
        return side.ovl_limit
    return Mux(side.ovl_limit[b - 1:] != 0, 1 << (b - 1), side.ovl_limit[:b - 1])


class SideRegs:
    """A decoded side: what the decoder writes and the generator reads,
    ``levels`` slots.  ``overlap``: the side may have an overlap group (set
    False on a destination of ``SoCConfig.te_dst_overlap=0``: its generator
    leaves the overlap offset out).  ``ovl_bits``: the overlap offset's
    width (``SoCConfig.te_ovl_bits``); ``ovl_start`` is kept in it, modulo
    2**ovl_bits like the offset."""

    overlap = True
    # The generator's checks: of each candidate of the checked values' next
    # values, in parallel, into registers (True), or from the checked
    # registers in the clock that presents the element (False:
    # ``SoCConfig.te_parallel_checks=0``).
    parallel_checks = True

    def __init__(self, levels=isa.MAX_LEVELS, ovl_bits=OVL_BITS):
        self.ovl_bits = ovl_bits
        self.space = Signal(3)
        self.dtype = Signal(2)
        self.base = Signal(32)
        self.ovl_en = Signal()
        self.ovl_start = Signal((ovl_bits, True))
        self.ovl_limit = Signal(32)
        self.nbcast = Signal(4)      # broadcast slots (the lowest ones)
        self.count = [Signal(32, reset=1) for _ in range(levels)]
        self.step = [Signal((32, True)) for _ in range(levels)]
        self.start = [Signal((32, True)) for _ in range(levels)]
        self.stride = [Signal((32, True)) for _ in range(levels)]
        self.bound = [Signal(32) for _ in range(levels)]
        self.chk = [Signal() for _ in range(levels)]
        self.ovl = [Signal() for _ in range(levels)]

    def flat(self):
        """Every register, in a fixed order (to copy one side into another)."""
        scalars = [self.space, self.dtype, self.base, self.ovl_en, self.ovl_start, self.ovl_limit, self.nbcast]
        return scalars + self.count + self.step + self.start + self.stride + self.bound + self.chk + self.ovl


class AddressGenerator(Module):
    """``cap_of``: a function of an address expression returning a module
    whose ``cap`` is the elements the memory word at that address still
    holds (``vector.Geometry``).  The generator keeps ``cap`` and ``fits``
    as registers that follow ``addr`` and slot 0's iterations (computed
    from the candidates of their next values, one per level, in parallel),
    so the decision which slot increments is made of flip-flops alone.
    ``cap_of`` None: the generator has no chunk mode (an engine without
    its vector path, ``SoCConfig.te_vector_path=0``): ``cap`` and ``fits``
    stay 0 and ``chunk`` must stay low.
    A side whose ``overlap`` is False has no overlap offset
    (``SoCConfig.te_dst_overlap=0`` for the destination, whose decoder
    refuses an overlap group): ``oob`` is the bound checks alone.  (Read
    from the side, not a parameter: a new local name would rename the
    generator's signals in the Verilog, through Migen's name tracer, and
    re-roll the boards' placement.)"""

    def __init__(self, side, cap_of, range_of=None):
        self.load = Signal()       # in: start a new walk (side registers stable)
        self.valid = Signal()      # out: an element is presented
        self.ready = Signal()      # in: the element is consumed, advance
        self.addr = Signal(32)
        self.oob = Signal()
        self.in_range = Signal()   # out (with range_of): range_of(addr).ok, as a register
        self.first = Signal()
        self.last = Signal()
        self.chunk = Signal()      # in: chunk mode, taken at load
        self.cap = Signal(8)       # out (chunk mode): elements left in the memory word at addr
        self.esh = Signal()        # in (chunk mode): log2 of the address units of an element, taken at load
        self.chunk_q = Signal()    # out: the chunk mode of this walk (``chunk`` at the last load)
        self.n = Signal(32)        # out: elements of this advance (1 outside chunk mode)
        self.row_end = Signal()    # out: this advance finishes slot 0
        self.fits = Signal()       # out (chunk mode): the rest of the row lies in the current word (n = rest)
        self.rest = Signal(32)     # out: iterations of slot 0 still to go (the current one included)

        # # #

        n = len(side.count)
        # The mode and the element size are taken at load into this
        # generator's own flip-flops: they hold for the walk, and the engine's
        # vector-mode register, which reaches both generators, the vector
        # path and the element path from one place, no longer starts the
        # paths into the generator's carry decision and clock enables (the
        # ULX3S's accel critical paths of three builds at 56.5-58.0 MHz,
        # 14.2-15.5 of their 17.2-17.7 ns routing; docs/fpga.md, "The
        # generators' mode from their own flip-flops").
        chunk = self.chunk_q
        esh = Signal()
        self.sync += If(self.load, chunk.eq(self.chunk), esh.eq(self.esh))
        # left[l]: iterations of slot l still to go, the current one included
        # (count .. 1).  A down-counter rather than an index, so "last
        # iteration" is a compare of one register with a constant, not a
        # subtraction and a compare on a carry chain (the path that limited
        # the generator to about 52 MHz on an ECP5).
        left = [Signal(32) for _ in range(n)]
        # one[l]: left[l] == 1, kept as a register (set from the next value
        # of left[l]), so the carry decision starts from flip-flops.  Level 0
        # in chunk mode moves by n, not 1: its end is `fits` and one[0] is
        # not used there.
        one = [Signal() for _ in range(n)]
        at0 = [Signal() for _ in range(n)]      # slot l at its first iteration (left[l] == count[l])
        sa = [Signal(32) for _ in range(n)]
        go = [Signal((side.ovl_bits, True)) for _ in range(n)]
        idx = [Signal((IDX_BITS, True)) for _ in range(n)]
        far = [Signal() for _ in range(n)]      # idx[l] has left -2**32 .. 2**32-1 since the reload: out of bound
        nidx = [Signal((IDX_BITS, True)) for _ in range(n)]
        at_end = [Signal() for _ in range(n)]
        # sel, below and advance are kept nets: each register's clock enable
        # is then one LUT, load | advance & (sel | below), after the advance.
        # Unkept, yosys folded advance into the select logic, and the
        # vector path's advance (from the destination chunk queue's level
        # register) reached the enables through seven LUTs spread over the
        # generator: the ULX3S's accel critical path at 49.80 MHz (20.1 ns,
        # 17.9 of them routing).
        sel = [Signal(attr={"keep"}, name=f"sel{l}") for l in range(n)]      # the slot that increments
        below = [Signal(attr={"keep"}, name=f"below{l}") for l in range(n)]  # a slot under the incrementing one: rewinds
        nsa = [Signal(32) for _ in range(n)]
        ngo = [Signal((side.ovl_bits, True)) for _ in range(n)]
        carry_sa = Signal(32)
        carry_go = Signal((side.ovl_bits, True))
        running = Signal()
        capw = len(self.cap)
        # cap and fits are registers (set below with the address and left[0])
        cap_r, fits_r = self.cap, self.fits
        fits = fits_r
        self.comb += [
            self.rest.eq(left[0]),
            self.n.eq(Mux(chunk, Mux(fits, left[0], self.cap), 1)),
            self.row_end.eq(at_end[0]),
        ]

        # Which slot increments: every input is a register (one[], and fits
        # in chunk mode).  hi_end[l]: every slot 1 .. l-1 at its end.  (Not
        # kept nets: kept, yosys chains them one LUT per level.)
        hi_end = [Signal(name=f"hi_end{l}") for l in range(n + 1)]
        self.comb += [hi_end[l].eq(reduce(and_, [one[k] for k in range(1, l)], 1)) for l in range(n + 1)]
        for l in range(n):
            end = Mux(chunk, fits, one[0]) if l == 0 else one[l]
            incr = Mux(chunk, self.n << esh, side.step[0]) if l == 0 else side.step[l]
            self.comb += [
                at_end[l].eq(end),
                # ~at_end[l] & every slot below at its end
                sel[l].eq(~at_end[0] if l == 0 else at_end[0] & hi_end[l] & ~one[l]),
                # some slot above l increments: slots 0 .. l at their ends, not all slots
                below[l].eq(at_end[0] & hi_end[l + 1] & ~hi_end[n]),
                nsa[l].eq(sa[l] + incr),
                *if_enabled(side.overlap, ngo[l].eq(go[l] + Mux(side.ovl[l], side.step[l], 0))),
                nidx[l].eq(idx[l] + side.stride[l]),
            ]
        self.comb += [If(sel[l], carry_sa.eq(nsa[l]), *if_enabled(side.overlap, carry_go.eq(ngo[l]))) for l in range(n)]

        limit = Signal((limit_bits(side.ovl_bits), True))
        self.comb += [
            limit.eq(clamped_limit(side)),
            self.valid.eq(running),
            self.addr.eq(sa[0]),
            self.last.eq(reduce(and_, at_end)),
            self.first.eq(reduce(and_, [(side.nbcast <= l) | at0[l] for l in range(n)])),
        ]

        advance = Signal(attr={"keep"})
        self.comb += advance.eq(running & self.ready)
        # cap follows sa[0] (the same enables): the cap of each candidate of
        # sa[0]'s next value, the base at load, slot 0's next address, each
        # level's nsa, computed in parallel and selected as the address is.
        # In chunk mode slot 0 increments only when the row goes on past this
        # word (not fits), i.e. by cap elements, so its candidate comes from
        # cap_r, not from n.  (In element mode cap and fits are not used.)
        nsa0 = Signal(32)
        self.comb += nsa0.eq(sa[0] + Mux(chunk, cap_r << esh, side.step[0]))

        def kept(expr, name, width=1):
            """``expr`` in a signal yosys keeps: one computation per
            candidate in parallel, not one behind the select (yosys would
            share them otherwise)."""
            k = Signal(width, attr={"keep"}, name=name)
            self.comb += k.eq(expr)
            return k

        def carry_of(cands, width=1):
            """``cands[l]`` of the level l that increments when slot 0
            rewinds (below[0]: one of 1 .. n-1; cands[0] is not read)."""
            c = Signal(width)
            self.comb += [If(sel[l], c.eq(cands[l])) for l in range(1, n)]
            return c

        # (no ``cap_of``: no chunk mode, cap and fits stay 0; the candidates'
        # caps are kept nets, which synthesis would keep unread)
        if cap_of is not None:
            ncap = []
            for k, a in enumerate([side.base, nsa0] + nsa[1:]):
                geo = cap_of(a)
                self.submodules += geo
                ncap.append(kept(geo.cap, f"ncap{k}", 8))
            carry_cap = carry_of([None] + ncap[2:], 8)
            # fits follows left[0] and cap: at load and when slot 0 rewinds,
            # slot 0's count against the new cap; when slot 0 increments in
            # chunk mode, what is left after cap elements against the next cap.
            def fits_of(rest, cap):
                return (rest[capw:] == 0) & (rest[:capw] <= cap)
            rest_chunk = Signal(32)
            self.comb += rest_chunk.eq(left[0] - cap_r)
            self.sync += [
                If(self.load, cap_r.eq(ncap[0]), fits_r.eq(fits_of(side.count[0], ncap[0]))
                ).Elif(advance & sel[0], cap_r.eq(ncap[1]), fits_r.eq(fits_of(rest_chunk, ncap[1]))
                ).Elif(advance & below[0], cap_r.eq(carry_cap), fits_r.eq(fits_of(side.count[0], carry_cap))),
            ]
        self.sync += If(self.load, running.eq(1)).Elif(advance & self.last, running.eq(0))
        # The bound, overlap and range checks as registers (``oob_l``,
        # ``ovl_oob``, ``in_range``) that follow the index, the offset and
        # the address they check, computed like ``cap``: a check of each
        # candidate of the register's next value in parallel (the value at
        # load or rewind, which the side registers fix for the walk, and
        # each level's incremented value), selected as the register is, so
        # the decision which slot increments reaches only the last
        # multiplexer and ``oob`` is an OR of flip-flops.  Computed from the
        # registers themselves, the 34-bit index compares (ORed over the
        # levels) and the overlap offset's 48-bit compare ran into the
        # vector path's request queue and the element path's skip in the
        # clock that uses them (the ULX3S's accel critical path in two
        # set-aside builds, 16.80 and 18.89 ns); computed after the select of
        # the next value, the select, the adder and the check in one clock
        # were (48.74 and 50.56 MHz; docs/fpga.md, "The checks as
        # registers").
        #
        # A side whose ``parallel_checks`` is False
        # (``SoCConfig.te_parallel_checks=0``) computes each check once, from
        # the registers it checks, in the clock that presents the element:
        # the same values at every clock, with one overlap and one range
        # check instead of one per candidate and one index check per level
        # instead of two, and the compares in the paths that read ``oob`` and
        # ``in_range`` (docs/fpga.md, "The generators' checks from their
        # registers").
        oob_l = [Signal(name=f"oob{l}") for l in range(n)]
        ovl_oob = Signal()
        self.comb += self.oob.eq(reduce(or_, oob_l) | ovl_oob)

        def ovl_check(v):
            return side.ovl_en & ((v < 0) | (v >= limit))
        if not side.parallel_checks:
            if side.overlap:
                self.comb += ovl_oob.eq(ovl_check(go[0]))
            if range_of is not None:
                m = range_of(sa[0])
                self.submodules += m
                self.comb += self.in_range.eq(m.ok)
        elif side.overlap:
            ovl_c = [kept(ovl_check(v), f"novl{k}") for k, v in enumerate([side.ovl_start] + ngo)]
            self.sync += If(self.load, ovl_oob.eq(ovl_c[0])
                ).Elif(advance & sel[0], ovl_oob.eq(ovl_c[1])
                ).Elif(advance & below[0], ovl_oob.eq(carry_of([None] + ovl_c[2:])))
        if range_of is not None and side.parallel_checks:
            rng = []
            for k, a in enumerate([side.base, nsa0] + nsa[1:]):
                m = range_of(a)
                self.submodules += m
                rng.append(kept(m.ok, f"nrange{k}"))
            self.sync += If(self.load, self.in_range.eq(rng[0])
                ).Elif(advance & sel[0], self.in_range.eq(rng[1])
                ).Elif(advance & below[0], self.in_range.eq(carry_of([None] + rng[2:])))
        for l in range(n):
            b = Signal((IDX_BITS, True), name=f"bound{l}")
            far_inc = Signal(name=f"far_inc{l}")
            self.comb += [
                b.eq(side.bound[l]),
                far_inc.eq(far[l] | (nidx[l][IDX_BITS - 1] != nidx[l][IDX_BITS - 2])),
            ]
            if side.parallel_checks:
                # the index's check at its start (fixed for the walk) and
                # after its increment, registered in oob_l[l] below
                start_oob = kept(side.chk[l] & ((side.start[l] < 0) | (side.start[l] >= b)),
                                 f"start_oob{l}")
                inc_oob = kept(side.chk[l] & (far_inc | (nidx[l] < 0) | (nidx[l] >= b)), f"inc_oob{l}")
                oob_load, oob_inc = [oob_l[l].eq(start_oob)], [oob_l[l].eq(inc_oob)]
            else:
                self.comb += oob_l[l].eq(side.chk[l] & (far[l] | (idx[l] < 0) | (idx[l] >= b)))
                oob_load, oob_inc = [], []
            self.sync += [
                If(self.load | (advance & below[l]),
                    one[l].eq(side.count[l] == 1), at0[l].eq(1),
                    idx[l].eq(side.start[l]), far[l].eq(0), *oob_load,
                ).Elif(advance & sel[l],
                    one[l].eq(left[l] == 2), at0[l].eq(0),
                    idx[l].eq(nidx[l]), far[l].eq(far_inc), *oob_inc,
                ),
                If(self.load,
                    left[l].eq(side.count[l]), sa[l].eq(side.base), *if_enabled(side.overlap, go[l].eq(side.ovl_start)),
                ).Elif(advance & sel[l],
                    left[l].eq(left[l] - (self.n if l == 0 else 1)), sa[l].eq(nsa[l]), *if_enabled(side.overlap, go[l].eq(ngo[l])),
                ).Elif(advance & below[l],
                    left[l].eq(side.count[l]), sa[l].eq(carry_sa), *if_enabled(side.overlap, go[l].eq(carry_go)),
                )
            ]
