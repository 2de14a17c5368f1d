"""One PCORE vector lane: the arithmetic datapath, written in MyHDL.

Every lane of every PCORE is an instance of this block, converted to Verilog
(``generate_verilog``) and instantiated from Migen (``cores/pcore/array.py``).
It is purely arithmetic: operands come in, registered results go out
``LATENCY`` clocks later, one new set of operands per clock.  State
(accumulator, flag) lives outside, in the per-thread memories of the PCORE,
so one lane serves all threads in turn.

Arithmetic is exactly ``verification/golden/fixedpoint.py``: saturating data
results, round-half-up arithmetic right shifts, wrapping accumulator.  The
round-half-up shift uses ``(x + 2**(s-1)) >> s == (x >> s) + bit(x, s-1)``,
so it needs no wider adder than the truncating shift.

Three pipeline stages, so that each fits a 50 MHz clock on an ECP5 (see
docs/pcore.md, "Pipeline"):

A. the product ``a*b`` (the DSP block), ``a << sh``, ``a+b``/``a-b``, the
   non-saturating results and the flag, and the operand of the rounding
   shift (``acc_in`` for ``accr``, ``a`` for ``asr``);
B. the rounding right shift, one shifter for ``mul`` (the product),
   ``asr`` and ``accr`` (the three ops never share a clock), and the new
   accumulator;
C. saturation of the data result.

Ports (all outputs registered, latency ``LATENCY``):

=========== ====== =========================================================
``op``      in     operation code (``tensorsoc.spec.pcore_isa.OP``)
``a``,``b`` in     signed data operands (``width`` bits)
``acc_in``  in     signed accumulator (``acc_width`` bits)
``flag_in`` in     lane flag (for ``sel``)
``sh``      in     shift amount (unsigned)
``result``  out    signed data result
``acc_out`` out    new accumulator value (= ``acc_in`` for non-acc ops)
``flag_out``out    new flag (= ``flag_in`` for non-compare ops)
=========== ====== =========================================================
"""

from pathlib import Path

from myhdl import Signal, always, block, intbv, toVerilog  # noqa: F401

from tensorsoc.spec import pcore_isa
from tensorsoc.spec.pcore_isa import LANE_LATENCY, OP, OP_BITS

MODULE_NAME = "tsoc_pcore_lane"
LATENCY = LANE_LATENCY   # clocks from the operands to the registered outputs


def shift_bits_for(acc_width):
    return max(1, (acc_width - 1).bit_length())


@block
def pcore_lane(clk, op, a, b, acc_in, flag_in, sh, result, acc_out, flag_out,
               width=16, acc_width=32):
    W, AW = width, acc_width
    assert AW >= 2 * W, "the accumulator must hold a full product"
    SH_MAX = (1 << len(sh)) - 1
    DMIN, DMAX = -(1 << (W - 1)), (1 << (W - 1)) - 1
    PW = 2 * W                     # product width
    LW = W + SH_MAX + 1            # a << sh, never overflows
    RW = max(PW, AW)               # the rounding shifter's input: product, accumulator or a
    SW = max(AW, LW) + 2           # accumulator-add width

    OP_MOV, OP_ADD, OP_SUB, OP_MUL = OP["mov"], OP["add"], OP["sub"], OP["mul"]
    OP_MAX, OP_MIN, OP_RELU, OP_ASR = OP["max"], OP["min"], OP["relu"], OP["asr"]
    OP_SHL, OP_SEL, OP_CMPGT, OP_CMPGE = OP["shl"], OP["sel"], OP["cmpgt"], OP["cmpge"]
    OP_CMPEQ, OP_MAC, OP_MACZ = OP["cmpeq"], OP["mac"], OP["macz"]
    OP_ACCADD, OP_ACCSET, OP_ACCR = OP["accadd"], OP["accset"], OP["accr"]

    def sig(lo, hi):
        return Signal(intbv(0, min=lo, max=hi))

    # Stage A registers: the product, shifted operands, non-saturating results.
    a_op = Signal(intbv(0)[len(op):])
    a_sh = Signal(intbv(0)[len(sh):])
    a_prod = sig(-(1 << (PW - 1)), 1 << (PW - 1))
    a_lsh = sig(-(1 << (LW - 1)), 1 << (LW - 1))
    a_sat = sig(-(1 << (SW - 1)), 1 << (SW - 1))     # saturating input of add, sub, shl
    a_rsrc = sig(-(1 << (RW - 1)), 1 << (RW - 1))    # rounding shift's operand: acc_in (accr) or a (asr)
    a_rnd_prod = Signal(bool(0))                     # the rounding shift takes the product (mul)
    a_rnd_res = Signal(bool(0))                      # the data result is the rounding shift's (mul, asr, accr)
    a_res = sig(DMIN, DMAX + 1)                      # result of the non-saturating ops
    a_acc = sig(-(1 << (AW - 1)), 1 << (AW - 1))
    a_flag = Signal(bool(0))
    # Stage B registers: rounded product, new accumulator.
    b_sat = sig(-(1 << (SW - 1)), 1 << (SW - 1))
    b_do_sat = Signal(bool(0))
    b_res = sig(DMIN, DMAX + 1)
    b_acc = sig(-(1 << (AW - 1)), 1 << (AW - 1))
    b_flag = Signal(bool(0))

    @always(clk.posedge)
    def stage_a():
        dsum = intbv(0, min=-(1 << W), max=1 << W)
        lsh = intbv(0, min=-(1 << (LW - 1)), max=1 << (LW - 1))
        res = intbv(0, min=DMIN, max=DMAX + 1)

        a_prod.next = a * b
        lsh[:] = a << sh
        a_lsh.next = lsh
        if op == OP_ACCR:
            a_rsrc.next = acc_in
        else:
            a_rsrc.next = a
        # stage B's selects, decoded here so that they leave flip-flops
        a_rnd_prod.next = op == OP_MUL
        a_rnd_res.next = op == OP_MUL or op == OP_ASR or op == OP_ACCR

        a_sat.next = 0
        if op == OP_ADD:
            dsum[:] = a + b
            a_sat.next = dsum
        elif op == OP_SUB:
            dsum[:] = a - b
            a_sat.next = dsum
        elif op == OP_SHL:
            a_sat.next = lsh

        res[:] = 0
        if op == OP_MAX:
            if a > b:
                res[:] = a
            else:
                res[:] = b
        elif op == OP_MIN:
            if a < b:
                res[:] = a
            else:
                res[:] = b
        elif op == OP_RELU:
            if a > 0:
                res[:] = a
        elif op == OP_SEL:
            if flag_in:
                res[:] = a
            else:
                res[:] = b
        elif op == OP_MOV:
            res[:] = a
        a_res.next = res

        if op == OP_CMPGT:
            a_flag.next = a > b
        elif op == OP_CMPGE:
            a_flag.next = a >= b
        elif op == OP_CMPEQ:
            a_flag.next = a == b
        else:
            a_flag.next = flag_in
        a_acc.next = acc_in
        a_op.next = op
        a_sh.next = sh

    @always(clk.posedge)
    def stage_b():
        rsrc = intbv(0, min=-(1 << (RW - 1)), max=1 << (RW - 1))
        rnd = intbv(0, min=-(1 << RW), max=1 << RW)
        sumw = intbv(0, min=-(1 << (SW - 1)), max=1 << (SW - 1))

        # round-half-up right shift: (x >> s) + bit s-1 of x
        if a_rnd_prod:
            rsrc[:] = a_prod
        else:
            rsrc[:] = a_rsrc
        if a_sh == 0:
            rnd[:] = rsrc
        else:
            rnd[:] = (rsrc >> a_sh) + ((rsrc >> (a_sh - 1)) & 1)
        if a_rnd_res:
            b_sat.next = rnd
        else:
            b_sat.next = a_sat
        if a_op == OP_ADD or a_op == OP_SUB or a_op == OP_MUL or a_op == OP_ASR \
                or a_op == OP_SHL or a_op == OP_ACCR:
            b_do_sat.next = True
        else:
            b_do_sat.next = False
        b_res.next = a_res

        # accumulator: wraps modulo 2**AW
        if a_op == OP_MAC:
            sumw[:] = a_acc + a_prod
            b_acc.next = sumw[AW:].signed()
        elif a_op == OP_MACZ:
            b_acc.next = a_prod
        elif a_op == OP_ACCADD:
            sumw[:] = a_acc + a_lsh
            b_acc.next = sumw[AW:].signed()
        elif a_op == OP_ACCSET:
            sumw[:] = a_lsh
            b_acc.next = sumw[AW:].signed()
        else:
            b_acc.next = a_acc
        b_flag.next = a_flag

    @always(clk.posedge)
    def stage_c():
        if b_do_sat:
            if b_sat > DMAX:
                result.next = DMAX
            elif b_sat < DMIN:
                result.next = DMIN
            else:
                result.next = b_sat
        else:
            result.next = b_res
        acc_out.next = b_acc
        flag_out.next = b_flag

    return stage_a, stage_b, stage_c


def lane_signals(width=16, acc_width=32):
    """The port signals of a lane, in port order."""
    sw = shift_bits_for(acc_width)
    return dict(
        clk=Signal(bool(0)),
        op=Signal(intbv(0)[OP_BITS:]),
        a=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        b=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        acc_in=Signal(intbv(0, min=-(1 << (acc_width - 1)), max=1 << (acc_width - 1))),
        flag_in=Signal(bool(0)),
        sh=Signal(intbv(0)[sw:]),
        result=Signal(intbv(0, min=-(1 << (width - 1)), max=1 << (width - 1))),
        acc_out=Signal(intbv(0, min=-(1 << (acc_width - 1)), max=1 << (acc_width - 1))),
        flag_out=Signal(bool(0)),
    )


def module_name(width=16, acc_width=32):
    if (width, acc_width) == (16, 32):
        return MODULE_NAME
    return f"{MODULE_NAME}_{width}_{acc_width}"


def generate_verilog(build_dir, width=16, acc_width=32):
    """Convert the lane to Verilog in ``build_dir``; returns the file path.

    The file is regenerated only if missing or older than this source."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    name = module_name(width, acc_width)
    path = build_dir / f"{name}.v"
    if path.exists() and path.stat().st_mtime >= Path(__file__).stat().st_mtime \
            and path.stat().st_mtime >= Path(pcore_isa.__file__).stat().st_mtime:
        return path
    sig = lane_signals(width, acc_width)
    inst = pcore_lane(**sig, width=width, acc_width=acc_width)
    inst.convert(hdl="Verilog", path=str(build_dir), name=name, testbench=False,
                 timescale="1ns/1ps")
    return path
