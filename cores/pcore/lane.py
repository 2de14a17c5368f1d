"""One PCORE vector lane: the arithmetic datapath, written in MyHDL.

Every lane of every PCORE is an instance of this block, converted to Verilog
(``generate_verilog``) and instantiated from Migen (``cores/pcore/array.py``).
It is purely arithmetic: operands come in, registered results go out
``LATENCY`` clocks later, one new set of operands per clock.  State
(accumulator, flag) lives outside, in the per-thread memories of the PCORE,
so one lane serves all threads in turn.

Arithmetic is exactly ``verification/golden/fixedpoint.py``: saturating data
results, round-half-up arithmetic right shifts, wrapping accumulator.  The
lane has one multiplier (one DSP block on an FPGA), which is also its left
shifter.  The round-half-up right shift by ``s`` (``1 <= s < 2W``) is
``((x >> (s-1)) + 1) >> 1``: ``x >> W`` when ``s > W`` (fixed wiring, in
stage A), then a shift by ``(s-1) mod W`` of the ``W+2``-bit window the
saturated result needs, with a check of the bits above it against a mask
of the shift amount (``W+2`` bits, not ``2W+1``: stage B).  It took two
DSP blocks as a ``2W x (W+1)`` product before; their wide operands and
products were the most congested routing of the PCORE array on the ECP5
(docs/fpga_history.md, "Right shifts in the fabric again").

Three pipeline stages, so that each fits a 50 MHz clock on an ECP5 (see
docs/pcore.md, "Pipeline"):

A. the product (the DSP block): ``a*b``, or ``a * 2**lo`` for the left
   shifts (``shl``, ``accadd``, ``accset``; ``sh = lo + W*hi``, ``lo < W``),
   so the lane has no left barrel shifter; one adder, ``a+b`` for
   ``add`` and ``a-b`` for the rest, whose sign and zero decide ``max``,
   ``min`` and the compares (no comparator of their own); the flag; the
   value stage C saturates when the result is not the rounding shift's
   (the sum, ``shl``'s overflow marker, or the non-saturating result,
   which is in range and passes unchanged); and the operand of the
   rounding shift (the product for ``mul`` and ``shl``, ``acc_in`` for
   ``accr``, ``a`` for ``asr``; moved down ``W`` bits when ``sh > W``,
   doubled when nothing shifts), so that stage B's shifter starts from
   flip-flops;
B. the rounding right shift, one shifter for ``mul`` (the product),
   ``asr`` and ``accr`` (the three ops never share a clock), ``shl``'s
   product passing through it unshifted; ``a << sh`` as the product moved
   up by ``W*hi`` bits (one 2:1 multiplexer); the new accumulator;
C. saturation of the data result, whatever the op (``shl``'s too: below
   ``sh = W`` the product is ``a << sh`` exactly, from ``W`` up any
   nonzero ``a`` overflows).

One adder and one saturation path for every data result, rather than a
comparator per compare op, a separate non-saturating result register and
a three-way result multiplexer: the lane alone 482 LUTs instead of 688
(``tsoc bench fpga --blocks lane``); in the array, where yosys already
shared the old lane's per-op decoding between a PCORE's lanes, 1-3% fewer
LUTs and 6% fewer flip-flops (docs/fpga.md, "One adder, one saturation
path").

With ``SoCConfig.pcore_round_share`` > 1 the lane has no rounding shift
(its stage B ``stage_b_shared`` only saturates ``shl``'s product): its
stage-A product and accumulator leave on ``rnd_p`` and ``rnd_acc``, and the
PCORE's ``pcore_rounder`` blocks, each shared by several lanes, round them
one lane per clock (half the lane's LUTs: docs/pcore.md, "Shared rounding
shifters").

Ports (all outputs registered, latency ``LATENCY``):

=========== ====== =========================================================
``op``      in     operation code (``tensorsoc.spec.pcore_isa.OP``)
``a``,``b`` in     signed data operands (``width`` bits)
``acc_in``  in     signed accumulator (``acc_width`` bits)
``flag_in`` in     lane flag (for ``sel``)
``fwd``     in     the accumulator bypass: ``mac`` and ``accadd`` add to
                   the lane's own ``acc_out`` register instead of
                   ``acc_in`` (the previous instruction of the same thread,
                   2 clocks earlier: docs/pcore.md, "Accumulator chains")
``sh``      in     shift amount (unsigned)
``mb``      in     the multiplier's second operand (``width+1`` bits,
                   signed): ``b``, or ``2**(sh mod width)`` for the left
                   shifts (``shl``, ``accadd``, ``accset``), chosen by the
                   PCORE (``shift_controls``)
``rlo``     in     the right shift's fine amount ``(sh-1) mod W``, predecoded
``rhi``     in     the right shift takes ``x >> W`` (``sh > W``), predecoded
``rz``      in     no right shift (``sh = 0``, ``shl``), predecoded
``result``  out    signed data result
``acc_out`` out    new accumulator value; undefined after an operation the
                   PCORE does not write it back for (not in
                   ``ACC_WRITE_OPS``)
``flag_out``out    new flag; undefined after an operation not in
                   ``FLAG_WRITE_OPS``
=========== ====== =========================================================
"""

import warnings
from pathlib import Path

from myhdl import Signal, always, always_comb, block, concat, intbv, toVerilog  # noqa: F401

from tensorsoc.spec import pcore_isa
from tensorsoc.spec.pcore_isa import LANE_LATENCY, OP, OP_BITS

MODULE_NAME = "tsoc_pcore_lane"
LATENCY = LANE_LATENCY   # clocks from the operands to the registered outputs


def shift_bits_for(acc_width):
    return max(1, (acc_width - 1).bit_length())


@block
def pcore_lane(clk, op, a, b, mb, acc_in, flag_in, fwd, sh, rlo, rhi, rz, result, acc_out, flag_out,
               width=16, acc_width=32, dsp_shift=False, rnd_p=None, rnd_acc=None):
    W, AW = width, acc_width
    # rnd_p, rnd_acc given: the lane of a PCORE whose lanes share their
    # rounding shifters (SoCConfig.pcore_round_share > 1): no shifter of its
    # own; stage A's product (mul; asr, whose multiplier operand the PCORE
    # makes 1) and accumulator (accr) leave on them for the PCORE's
    # ``pcore_rounder``, and ``result`` is undefined after the rounding ops
    # (ROUND_OPS: mul, asr, accr); shl's product is saturated in stage B
    # without the shifter (``stage_b_shared``)
    shared = rnd_p is not None
    assert not (shared and dsp_shift), "a lane with a shared rounding shifter has no shift of its own"
    # The left shifts run through the multiplier as a * 2**lo, moved up by
    # W*hi bits: sh < AW = 2W, so hi is 0 or 1, and lo = sh mod W.
    assert AW == 2 * W, "the lane takes an accumulator of twice the data width"
    assert W & (W - 1) == 0, "the lane's data width is a power of two (lo = sh mod W)"
    DMIN, DMAX = -(1 << (W - 1)), (1 << (W - 1)) - 1
    PW = 2 * W                     # product width
    RW = max(PW, AW)               # the rounding right shift's input: product, accumulator or a
    XW = W + 2                     # add/sub results and the shl overflow marker (+-2**W)
    # what stage C saturates: XW values, and the rounded value narrowed to
    # XW bits; with dsp_shift the whole rounded product (RW + 1 bits)
    TW = RW + 1 if dsp_shift else XW
    HW = RW + 2 - XW               # the rounding shift operand's bits from the XW-bit window's sign up
    TOP_ONES = (1 << (TW - W + 1)) - 1     # b_sat's bits TW-1 .. W-1 all set: a negative value in range
    LG = W.bit_length() - 1        # log2(W): the fine right shift's amount bits

    OP_MOV, OP_ADD, OP_SUB, OP_MUL = OP["mov"], OP["add"], OP["sub"], OP["mul"]
    OP_MAX, OP_MIN, OP_RELU, OP_ASR = OP["max"], OP["min"], OP["relu"], OP["asr"]
    OP_SHL, OP_SEL, OP_CMPGT, OP_CMPGE = OP["shl"], OP["sel"], OP["cmpgt"], OP["cmpge"]
    OP_CMPEQ, OP_MAC = OP["cmpeq"], OP["mac"]   # macz: the product alone (a_acc_keep low)
    OP_ACCADD, OP_ACCSET, OP_ACCR = OP["accadd"], OP["accset"], OP["accr"]

    def sig(lo, hi):
        return Signal(intbv(0, min=lo, max=hi))

    # Stage A registers: the product, a << sh (modulo 2**AW), the operand of
    # the rounding shift, the value to saturate when the result is not the
    # rounding shift's (add/sub, shl's overflow, the non-saturating
    # results), the accumulator operands.
    a_rlo = Signal(intbv(0)[LG:])                    # the right shift's fine amount (rlo)
    a_rmul = Signal(intbv(0)[W:])                    # dsp_shift: the right shift's multiplier m
    a_prod = sig(-(1 << (PW - 1)), 1 << (PW - 1))   # a*b, or a * 2**lo (shl, accadd, accset)
    a_hi = Signal(bool(0))                           # accadd, accset: sh >= W, a << sh is the product << W
    a_sat = sig(-(1 << (XW - 1)), 1 << (XW - 1))     # add, sub, an overflowing shl (+-2**W), the non-saturating results
    a_x = sig(-(1 << (RW - 1)), 1 << (RW - 1))       # acc_in (the sum of mac and accadd)
    a_rs = sig(-(1 << RW), 1 << RW)                  # the rounding shift's operand x' (see stage B)
    a_rnd_res = Signal(bool(0))                      # the data result is the rounding shift's (mul, asr, accr, shl in range)
    a_acc_keep = Signal(bool(0))                     # mac, accadd: the sum starts from the accumulator
    a_fwd = Signal(bool(0))                          # the sum starts from acc_out (the bypass)
    a_flag = Signal(bool(0))
    # Stage B registers: the value to saturate, the new accumulator.
    b_sat = sig(-(1 << (TW - 1)), 1 << (TW - 1))
    b_acc = sig(-(1 << (AW - 1)), 1 << (AW - 1))
    b_flag = Signal(bool(0))

    @always(clk.posedge)
    def stage_a():
        dsum = intbv(0, min=-(1 << W), max=1 << W)
        bx = intbv(0, min=DMIN, max=DMAX + 1)
        res = intbv(0, min=DMIN, max=DMAX + 1)
        prod = intbv(0, min=-(1 << (PW - 1)), max=1 << (PW - 1))
        rs = intbv(0, min=-(1 << (RW - 1)), max=1 << (RW - 1))
        hi = bool(0)
        cin = intbv(0, min=-2, max=2)
        neg = bool(0)
        zero = bool(0)
        gt = bool(0)
        pick_a = bool(0)
        pick_b = bool(0)

        # a << sh as a * 2**lo (sh = lo + W*hi): the DSP block is the left
        # shifter; 2**(W-1) needs the multiplier's (W+1)-th bit.  The PCORE
        # chooses the multiplier's operand mb (b, or 2**lo for the left
        # shifts) into a register of this lane, so that the DSP block
        # starts from the lane's own flip-flops (a select shared by a
        # PCORE's lanes in front of it was the ULX3S 4 x 8 x 4 build's
        # critical path, 8.9 ns of routing to the lane).
        hi = sh >= W
        prod[:] = a * mb
        a_prod.next = prod
        a_hi.next = hi and (op == OP_ACCADD or op == OP_ACCSET)
        a_x.next = acc_in
        # The rounding right shift's operand x, chosen here so that stage B
        # starts its shifter from flip-flops: the product (mul, shl), the
        # accumulator (accr) or a (asr); the shift's coarse step: x' = x >> W
        # when sh > W (rhi), 2x when nothing shifts (rz: sh = 0, shl).
        if op == OP_MUL or op == OP_SHL:
            rs[:] = prod
        elif op == OP_ACCR:
            rs[:] = acc_in
        else:
            rs[:] = a
        if rz:
            a_rs.next = rs * 2
        elif rhi:
            a_rs.next = rs >> W
        else:
            a_rs.next = rs
        # stage B's selects, decoded here so that they leave flip-flops.
        # shl below sh = W (or of a = 0): the product, unshifted, saturated
        # in stage C; from W up a nonzero a overflows (a_sat's marker).
        a_rnd_res.next = op == OP_MUL or op == OP_ASR or op == OP_ACCR \
            or (op == OP_SHL and (not hi or a == 0))
        a_acc_keep.next = op == OP_MAC or op == OP_ACCADD
        a_fwd.next = fwd
        a_rlo.next = rlo

        # One adder for add, sub and the compares: a + b for add, a - b
        # (a + ~b + 1) for the rest; max, min and the compares read its sign
        # and zero.  The non-saturating results pick a, b or 0.
        # (cin a signed variable: a bool would make the converted sum unsigned)
        if op == OP_ADD:
            bx[:] = b
            cin[:] = 0
        else:
            bx[:] = ~b
            cin[:] = 1
        dsum[:] = a + bx + cin
        neg = dsum < 0
        zero = dsum == 0
        gt = not neg and not zero
        pick_a = op == OP_MOV or (op == OP_MAX and gt) or (op == OP_MIN and neg) \
            or (op == OP_RELU and a > 0) or (op == OP_SEL and flag_in)
        pick_b = (op == OP_MAX and not gt) or (op == OP_MIN and not neg) or (op == OP_SEL and not flag_in)
        if pick_a:
            res[:] = a
        elif pick_b:
            res[:] = b
        else:
            res[:] = 0
        # a_sat: what stage C saturates when the result is not the rounding
        # shift's: the sum of add and sub, shl's overflow marker (+-2**W),
        # or the non-saturating result (in range, so it passes unchanged).
        if op == OP_ADD or op == OP_SUB:
            a_sat.next = dsum
        elif op == OP_SHL:
            if a < 0:
                a_sat.next = -(1 << W)
            else:
                a_sat.next = 1 << W
        else:
            a_sat.next = res

        if op == OP_CMPGT:
            a_flag.next = gt
        elif op == OP_CMPGE:
            a_flag.next = not neg
        elif op == OP_CMPEQ:
            a_flag.next = zero
        else:
            a_flag.next = flag_in

    @always(clk.posedge)
    def stage_b():
        rsh = intbv(0, min=-(1 << RW), max=1 << RW)
        win = intbv(0, min=-(1 << (XW - 1)), max=1 << (XW - 1))
        inc = intbv(0, min=-(1 << XW), max=1 << XW)
        rnd = intbv(0, min=-(1 << (XW - 1)), max=1 << (XW - 1))
        top = intbv(0)[HW:]
        tmask = intbv(0)[HW:]
        tinv = intbv(0)[HW:]
        fit = bool(0)
        base = intbv(0, min=-(1 << (AW - 1)), max=1 << (AW - 1))
        addend = intbv(0, min=-(1 << (AW - 1)), max=1 << (AW - 1))
        sumw = intbv(0)[AW + 1:]
        lshw = intbv(0)[AW:]

        # round-half-up right shift by sh >= 1: ((x >> (sh-1)) + 1) >> 1,
        # x >> (sh-1) as y = x' >> rlo (stage A took x' = x >> W when
        # sh > W, rlo = (sh-1) mod W); no shift (rz): x' = 2x, rlo = 0, so
        # the same increment and halving give x back.  Only y's low XW bits
        # are shifted: when y does not fit them (x''s bits RW .. XW-1+rlo
        # not all equal, a check against a mask of rlo alone), |y| >= 2**(XW-1)
        # and the result saturates, so the sign's overflow marker (+-2**W)
        # stands in for it and stage C saturates XW bits, not RW + 1.
        rsh[:] = a_rs >> a_rlo
        win[:] = rsh[XW:].signed()
        inc[:] = win + 1
        rnd[:] = inc >> 1
        top[:] = a_rs[RW + 1:XW - 1]
        tmask[:] = (((1 << HW) - 1) << a_rlo) & ((1 << HW) - 1)
        tinv[:] = ~tmask          # its own variable: inverted inside the comparison, Verilog would widen it first
        fit = (top & tmask) == 0 or (top | tinv) == (1 << HW) - 1
        if not a_rnd_res:
            b_sat.next = a_sat
        elif fit:
            b_sat.next = rnd
        elif a_rs < 0:
            b_sat.next = -(1 << W)
        else:
            b_sat.next = 1 << W

        # accumulator: one AW-bit adder, wrapping modulo 2**AW:
        # (mac, accadd: acc; macz, accset: 0) + (mac, macz: a*b; accadd,
        # accset: a << sh = the product a * 2**lo, moved up by W bits when
        # sh >= W); with the bypass, acc is the result stage C holds (the
        # same thread's previous instruction, 2 clocks before)
        if a_acc_keep and a_fwd:
            base[:] = acc_out
        elif a_acc_keep:
            base[:] = a_x[AW:].signed()
        else:
            base[:] = 0
        if a_hi:
            lshw[:] = concat(a_prod[AW - W:], intbv(0)[W:])
            addend[:] = lshw.signed()
        else:
            addend[:] = a_prod
        sumw[:] = (base + addend) & ((1 << AW) - 1)
        b_acc.next = sumw[AW:].signed()
        b_flag.next = a_flag

    @always(clk.posedge)
    def stage_a_dsp():
        # dsp_shift: m = 2**((W - sh) mod W) = 2**(W-1-rlo); for rz (sh = 0,
        # shl; rlo = 0) 2**(W-1), as stage A doubled x
        a_rmul.next = 1 << (W - 1 - rlo)

    @always(clk.posedge)
    def stage_b_dsp():
        rprod = intbv(0, min=-(1 << (RW + W)), max=1 << (RW + W))
        rnd = intbv(0, min=-(1 << RW), max=1 << RW)

        # round-half-up right shift by sh through a product (two DSP blocks
        # for a 33 x 16-bit product): (x' * m + 2**(W-1)) >> W with stage
        # A's x' (x >> W for sh > W, 2x for no shift) and m = 2**(W-1-rlo);
        # the rounding constant rides in the product's sum, no adder of its
        # own (docs/fpga.md, "The right shift through the DSP blocks, for
        # the 25F").  The accumulator is stage_b_acc, the same text as
        # stage_b's: moved into a generator of its own there, it would
        # change the fabric lane's Verilog, and with it the ULX3S's
        # placement.
        rprod[:] = a_rs * a_rmul + (1 << (W - 1))
        rnd[:] = rprod >> W
        if a_rnd_res:
            b_sat.next = rnd
        else:
            b_sat.next = a_sat

    @always(clk.posedge)
    def stage_b_shared():
        ptop = intbv(0)[PW - XW + 1:]

        # shl below sh = W (or of a = 0): the product a * 2**sh, whose bits
        # PW-1 .. XW-1 are all equal when it fits the XW bits stage C
        # saturates, else the sign's overflow marker (+-2**W) stands in; the
        # rounding ops' result comes from the PCORE's rounder, this one is
        # not used
        ptop[:] = a_prod[PW:XW - 1]
        if not a_rnd_res:
            b_sat.next = a_sat
        elif ptop == 0 or ptop == (1 << (PW - XW + 1)) - 1:
            b_sat.next = a_prod[XW:].signed()
        elif a_prod < 0:
            b_sat.next = -(1 << W)
        else:
            b_sat.next = 1 << W

    @always_comb
    def rnd_out():
        rnd_p.next = a_prod
        rnd_acc.next = a_x

    @always(clk.posedge)
    def stage_b_acc():
        base = intbv(0, min=-(1 << (AW - 1)), max=1 << (AW - 1))
        addend = intbv(0, min=-(1 << (AW - 1)), max=1 << (AW - 1))
        sumw = intbv(0)[AW + 1:]
        lshw = intbv(0)[AW:]

        # accumulator: one AW-bit adder, wrapping modulo 2**AW:
        # (mac, accadd: acc; macz, accset: 0) + (mac, macz: a*b; accadd,
        # accset: a << sh = the product a * 2**lo, moved up by W bits when
        # sh >= W); with the bypass, acc is the result stage C holds (the
        # same thread's previous instruction, 2 clocks before)
        if a_acc_keep and a_fwd:
            base[:] = acc_out
        elif a_acc_keep:
            base[:] = a_x[AW:].signed()
        else:
            base[:] = 0
        if a_hi:
            lshw[:] = concat(a_prod[AW - W:], intbv(0)[W:])
            addend[:] = lshw.signed()
        else:
            addend[:] = a_prod
        sumw[:] = (base + addend) & ((1 << AW) - 1)
        b_acc.next = sumw[AW:].signed()
        b_flag.next = a_flag

    @always(clk.posedge)
    def stage_c():
        # b_sat fits W bits when its bits TW-1 .. W-1 are all equal (two
        # all-ones/all-zeros trees, no magnitude compare on carry chains);
        # else its sign picks the bound.
        top = intbv(0)[TW - W + 1:]
        top[:] = b_sat[TW:W - 1]
        if top != 0 and top != TOP_ONES:
            if b_sat[TW - 1]:
                result.next = DMIN
            else:
                result.next = DMAX
        else:
            result.next = b_sat[W:].signed()
        acc_out.next = b_acc
        flag_out.next = b_flag

    if dsp_shift:
        return stage_a, stage_a_dsp, stage_b_dsp, stage_b_acc, stage_c
    if shared:
        return stage_a, stage_b_shared, rnd_out, stage_b_acc, stage_c
    return stage_a, stage_b, stage_c


@block
def pcore_rounder(clk, p, acc, from_acc, rz, rhi, rlo, result, width=16, acc_width=32):
    """The rounding right shift and saturation of the lanes that share it
    (``SoCConfig.pcore_round_share``), one lane's value per clock, in three
    stages: the operand ``x'`` (the product ``p``, or the accumulator
    ``acc`` when ``from_acc``; moved down W bits when ``rhi``, doubled when
    ``rz``: the full lane's stage A), the shift by ``rlo`` (a clock later)
    and the saturation (the full lane's stages B and C): ``result`` three
    clocks after ``p`` and ``acc``.  The arithmetic is the full lane's, the
    same text on the same names: a generator shared with the full lane
    would change that lane's Verilog, and with it the ULX3S's placement."""
    W, AW = width, acc_width
    PW = 2 * W
    RW = max(PW, AW)
    XW = W + 2
    TW = XW
    HW = RW + 2 - XW
    TOP_ONES = (1 << (TW - W + 1)) - 1
    DMIN, DMAX = -(1 << (W - 1)), (1 << (W - 1)) - 1
    a_rs = Signal(intbv(0, min=-(1 << RW), max=1 << RW))
    b_sat = Signal(intbv(0, min=-(1 << (TW - 1)), max=1 << (TW - 1)))

    @always(clk.posedge)
    def operand():
        rs = intbv(0, min=-(1 << (RW - 1)), max=1 << (RW - 1))

        if from_acc:
            rs[:] = acc
        else:
            rs[:] = p
        if rz:
            a_rs.next = rs * 2
        elif rhi:
            a_rs.next = rs >> W
        else:
            a_rs.next = rs

    @always(clk.posedge)
    def shift():
        rsh = intbv(0, min=-(1 << RW), max=1 << RW)
        win = intbv(0, min=-(1 << (XW - 1)), max=1 << (XW - 1))
        inc = intbv(0, min=-(1 << XW), max=1 << XW)
        rnd = intbv(0, min=-(1 << (XW - 1)), max=1 << (XW - 1))
        top = intbv(0)[HW:]
        tmask = intbv(0)[HW:]
        tinv = intbv(0)[HW:]
        fit = bool(0)

        # ((x >> (sh-1)) + 1) >> 1 on the XW-bit window, the bits above it
        # checked against a mask of rlo (pcore_lane's stage_b)
        rsh[:] = a_rs >> rlo
        win[:] = rsh[XW:].signed()
        inc[:] = win + 1
        rnd[:] = inc >> 1
        top[:] = a_rs[RW + 1:XW - 1]
        tmask[:] = (((1 << HW) - 1) << rlo) & ((1 << HW) - 1)
        tinv[:] = ~tmask
        fit = (top & tmask) == 0 or (top | tinv) == (1 << HW) - 1
        if fit:
            b_sat.next = rnd
        elif a_rs < 0:
            b_sat.next = -(1 << W)
        else:
            b_sat.next = 1 << W

    @always(clk.posedge)
    def saturate():
        top = intbv(0)[TW - W + 1:]
        top[:] = b_sat[TW:W - 1]
        if top != 0 and top != TOP_ONES:
            if b_sat[TW - 1]:
                result.next = DMIN
            else:
                result.next = DMAX
        else:
            result.next = b_sat[W:].signed()

    return operand, shift, saturate


LEFT_SHIFT_OPS = ("shl", "accadd", "accset")


def shift_controls(op, sh, b, width=16, shared_round=False):
    """The lane's predecoded ports ``(mb, rlo, rhi, rz)`` for operation
    code ``op``, shift ``sh`` and operand ``b``: the multiplier's second
    operand (``2**(sh mod width)`` for the ops that shift left through the
    multiplier, else ``b``), and the rounding right shift's fine amount
    ``(sh - 1) mod width``, coarse step (``sh > width``: the shift takes
    ``x >> width``) and ``rz``, no right shift (``sh = 0``, and ``shl``,
    which passes its product through unshifted).  The PCORE computes the
    same from its issue bundle a clock ahead (``cores/pcore/pcore.py``).
    ``shared_round``: the lane of a shared rounder, whose ``asr`` takes its
    operand from the product, ``mb`` = 1."""
    W = width
    mb = 1 << (sh % W) if op in [OP[n] for n in LEFT_SHIFT_OPS] else b
    if shared_round and op == OP["asr"]:
        mb = 1
    if sh == 0 or op == OP["shl"]:
        rlo, rhi, rz = 0, 0, 1
    else:
        rlo, rhi, rz = (sh - 1) % W, int(sh > W), 0
    return mb, rlo, rhi, rz


def lane_signals(width=16, acc_width=32, shared_round=False):
    """The port signals of a lane, in port order (``shared_round``: with
    ``rnd_p`` and ``rnd_acc``, the lane of ``SoCConfig.pcore_round_share`` > 1)."""
    sw = shift_bits_for(acc_width)
    rw = max(2 * width, acc_width)
    sig = dict(
        clk=Signal(bool(0)),
        op=Signal(intbv(0)[OP_BITS:]),
        a=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        b=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        mb=Signal(intbv(0, min=-(1 << width), max=1 << width)),
        acc_in=Signal(intbv(0, min=-(1 << (acc_width - 1)), max=1 << (acc_width - 1))),
        flag_in=Signal(bool(0)),
        fwd=Signal(bool(0)),
        sh=Signal(intbv(0)[sw:]),
        rlo=Signal(intbv(0)[width.bit_length() - 1:]),
        rhi=Signal(bool(0)),
        rz=Signal(bool(0)),
        result=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        acc_out=Signal(intbv(0, min=-(1 << (acc_width - 1)), max=1 << (acc_width - 1))),
        flag_out=Signal(bool(0)),
    )
    if shared_round:
        sig["rnd_p"] = Signal(intbv(0, min=-(1 << (2 * width - 1)), max=1 << (2 * width - 1)))
        sig["rnd_acc"] = Signal(intbv(0, min=-(1 << (rw - 1)), max=1 << (rw - 1)))
    return sig


def rounder_signals(width=16, acc_width=32):
    """The port signals of a ``pcore_rounder``, in port order."""
    return dict(
        clk=Signal(bool(0)),
        p=Signal(intbv(0, min=-(1 << (2 * width - 1)), max=1 << (2 * width - 1))),
        acc=Signal(intbv(0, min=-(1 << (acc_width - 1)), max=1 << (acc_width - 1))),
        from_acc=Signal(bool(0)),
        rz=Signal(bool(0)),
        rhi=Signal(bool(0)),
        rlo=Signal(intbv(0)[width.bit_length() - 1:]),
        result=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
    )


ROUNDER_NAME = "tsoc_pcore_rounder"


def module_name(width=16, acc_width=32, dsp_shift=False, shared_round=False):
    """The lane module's name: ``tsoc_pcore_lane`` for the 16/32-bit lane
    with the fabric's right shift; the widths and ``_dsp`` (the DSP
    blocks' shift) or ``_sr`` (a shared rounder's lane) appended else."""
    name = MODULE_NAME if (width, acc_width) == (16, 32) else f"{MODULE_NAME}_{width}_{acc_width}"
    return name + ("_dsp" if dsp_shift else "") + ("_sr" if shared_round else "")


def rounder_name(width=16, acc_width=32):
    return ROUNDER_NAME if (width, acc_width) == (16, 32) else f"{ROUNDER_NAME}_{width}_{acc_width}"


def verilog_for(config, build_dir):
    """The lane Verilog a ``SoCConfig`` instantiates (its
    ``pcore_shift_dsp`` and ``pcore_round_share``), generated in
    ``build_dir``; returns the path."""
    return generate_verilog(build_dir, dsp_shift=bool(config.pcore_shift_dsp),
                            shared_round=config.pcore_round_share > 1)


def generate_verilog(build_dir, width=16, acc_width=32, dsp_shift=False, shared_round=False):
    """Convert the lane to Verilog in ``build_dir``; returns the file path.
    ``dsp_shift``: the rounding right shift through two more DSP blocks
    (``SoCConfig.pcore_shift_dsp``), a module of its own name;
    ``shared_round``: the lane without a rounding shifter and, in the same
    file, the ``pcore_rounder`` its PCORE shares between lanes
    (``SoCConfig.pcore_round_share`` > 1).

    The file is regenerated only if missing or older than this source."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    name = module_name(width, acc_width, dsp_shift, shared_round)
    path = build_dir / f"{name}.v"
    if path.exists() and path.stat().st_mtime >= Path(__file__).stat().st_mtime \
            and path.stat().st_mtime >= Path(pcore_isa.__file__).stat().st_mtime:
        return path
    sig = lane_signals(width, acc_width, shared_round)
    inst = pcore_lane(**sig, width=width, acc_width=acc_width, dsp_shift=dsp_shift)
    with warnings.catch_warnings():
        # dsp_shift, shared_round: stage A's fine amount (a_rlo) is the
        # fabric shifter's, unread; shared_round: so are the lane's rlo
        # port and stage A's operand of the shift (a_rs), the rounder's
        warnings.filterwarnings("ignore", message=".*driven but not read: a_rlo")
        warnings.filterwarnings("ignore", message=".*driven but not read: a_rs")
        warnings.filterwarnings("ignore", message=".*Port is not used: rlo")
        inst.convert(hdl="Verilog", path=str(build_dir), name=name, testbench=False,
                     timescale="1ns/1ps")
        if shared_round:
            rname = rounder_name(width, acc_width)
            rinst = pcore_rounder(**rounder_signals(width, acc_width), width=width, acc_width=acc_width)
            rinst.convert(hdl="Verilog", path=str(build_dir), name=rname, testbench=False,
                          timescale="1ns/1ps")
            rpath = build_dir / f"{rname}.v"
            path.write_text(path.read_text() + "\n" + rpath.read_text())
            rpath.unlink()
    return path
