"""One PCORE vector lane: the arithmetic datapath, written in MyHDL.

Every lane of every PCORE is an instance of this block, converted to Verilog
(``generate_verilog``) and instantiated from Migen (``cores/pcore/array.py``).
It is purely arithmetic: operands come in, one registered result goes out a
clock later.  State (accumulator, flag) lives outside, in the per-thread
memories of the PCORE, so one lane serves all threads in turn.

Arithmetic is exactly ``verification/golden/fixedpoint.py``: saturating data
results, round-half-up arithmetic right shifts, wrapping accumulator.  The
round-half-up shift uses ``(x + 2**(s-1)) >> s == (x >> s) + bit(x, s-1)``,
so it needs no wider adder than the truncating shift.

Ports (all outputs registered, latency 1):

=========== ====== =========================================================
``op``      in     operation code (``cores.pcore.isa.OP``)
``a``,``b`` in     signed data operands (``width`` bits)
``acc_in``  in     signed accumulator (``acc_width`` bits)
``flag_in`` in     lane flag (for ``sel``)
``sh``      in     shift amount (unsigned)
``result``  out    signed data result
``acc_out`` out    new accumulator value (= ``acc_in`` for non-acc ops)
``flag_out``out    new flag (= ``flag_in`` for non-compare ops)
=========== ====== =========================================================
"""

import os
from pathlib import Path

from myhdl import Signal, always, block, intbv, toVerilog  # noqa: F401

from cores.pcore.isa import OP, OP_BITS

MODULE_NAME = "tsoc_pcore_lane"


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
    SW = max(AW, LW) + 2           # accumulator-add width

    OP_MOV, OP_ADD, OP_SUB, OP_MUL = OP["mov"], OP["add"], OP["sub"], OP["mul"]
    OP_MAX, OP_MIN, OP_RELU, OP_ASR = OP["max"], OP["min"], OP["relu"], OP["asr"]
    OP_SHL, OP_SEL, OP_CMPGT, OP_CMPGE = OP["shl"], OP["sel"], OP["cmpgt"], OP["cmpge"]
    OP_CMPEQ, OP_MAC, OP_MACZ = OP["cmpeq"], OP["mac"], OP["macz"]
    OP_ACCADD, OP_ACCSET, OP_ACCR = OP["accadd"], OP["accset"], OP["accr"]

    @always(clk.posedge)
    def step():
        prod = intbv(0, min=-(1 << (PW - 1)), max=1 << (PW - 1))
        prnd = intbv(0, min=-(1 << PW), max=1 << PW)
        arnd = intbv(0, min=-(1 << AW), max=1 << AW)
        drnd = intbv(0, min=-(1 << W), max=1 << W)
        lsh = intbv(0, min=-(1 << (LW - 1)), max=1 << (LW - 1))
        sumw = intbv(0, min=-(1 << (SW - 1)), max=1 << (SW - 1))
        dsum = intbv(0, min=-(1 << W), max=1 << W)
        sat_in = intbv(0, min=-(1 << (SW - 1)), max=1 << (SW - 1))
        res = intbv(0, min=DMIN, max=DMAX + 1)
        do_sat = False

        prod[:] = a * b
        lsh[:] = a << sh
        # round-half-up right shifts: (x >> s) + bit s-1 of x
        if sh == 0:
            prnd[:] = prod
            arnd[:] = acc_in
            drnd[:] = a
        else:
            prnd[:] = (prod >> sh) + ((prod >> (sh - 1)) & 1)
            arnd[:] = (acc_in >> sh) + ((acc_in >> (sh - 1)) & 1)
            drnd[:] = (a >> sh) + ((a >> (sh - 1)) & 1)

        sat_in[:] = 0
        res[:] = 0
        if op == OP_ADD:
            dsum[:] = a + b
            sat_in[:] = dsum
            do_sat = True
        elif op == OP_SUB:
            dsum[:] = a - b
            sat_in[:] = dsum
            do_sat = True
        elif op == OP_MUL:
            sat_in[:] = prnd
            do_sat = True
        elif op == OP_ASR:
            sat_in[:] = drnd
            do_sat = True
        elif op == OP_SHL:
            sat_in[:] = lsh
            do_sat = True
        elif op == OP_ACCR:
            sat_in[:] = arnd
            do_sat = True
        elif op == OP_MAX:
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

        if do_sat:
            if sat_in > DMAX:
                res[:] = DMAX
            elif sat_in < DMIN:
                res[:] = DMIN
            else:
                res[:] = sat_in
        result.next = res

        # accumulator: wraps modulo 2**AW
        if op == OP_MAC:
            sumw[:] = acc_in + prod
            acc_out.next = sumw[AW:].signed()
        elif op == OP_MACZ:
            acc_out.next = prod
        elif op == OP_ACCADD:
            sumw[:] = acc_in + lsh
            acc_out.next = sumw[AW:].signed()
        elif op == OP_ACCSET:
            sumw[:] = lsh
            acc_out.next = sumw[AW:].signed()
        else:
            acc_out.next = acc_in

        if op == OP_CMPGT:
            flag_out.next = a > b
        elif op == OP_CMPGE:
            flag_out.next = a >= b
        elif op == OP_CMPEQ:
            flag_out.next = a == b
        else:
            flag_out.next = flag_in

    return step


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
            and path.stat().st_mtime >= Path(__file__).with_name("isa.py").stat().st_mtime:
        return path
    sig = lane_signals(width, acc_width)
    inst = pcore_lane(**sig, width=width, acc_width=acc_width)
    inst.convert(hdl="Verilog", path=str(build_dir), name=name, testbench=False,
                 timescale="1ns/1ps")
    return path
