"""The PCORE's vector operations, written once with the golden fixed-point
functions: the ISS (iss.py) executes them on whole threads and PCOREs, the
lane bench (lane_model.py, test_lane.py) checks the MyHDL lane against them.

Which inputs each operation reads and what it writes come from the
instruction set's signatures (``tensorsoc.spec.pcore_isa.VOPS``)."""

import numpy as np

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.verification.golden import fixedpoint as fx


def inputs(op):
    """The inputs ``op`` reads: a, b (its sources), h (the shift), c (the accumulator), f (the flag)."""
    return ("ab"[:isa.NUM_SRCS[op]] + ("h" if op in isa.USES_SHIFT else "")
            + ("c" if op in isa.ACC_READ_OPS else "") + ("f" if op in isa.FLAG_READ_OPS else ""))


def execute(op, a, b, acc, flag, sh, width=fx.DATA_BITS, acc_width=fx.ACC_BITS):
    """One vector operation on one lane or on arrays of lanes: (result,
    acc_out, flag_out); result is None for operations whose result is not
    written anywhere.  Inputs an operation does not read may be None."""
    W, AW = width, acc_width
    res = None
    acc_out = np.asarray(acc, np.int64)
    flag_out = np.asarray(flag, np.int64)
    if op == "mov":
        res = fx._i64(a)
    elif op == "add":
        res = fx.add(a, b, W)
    elif op == "sub":
        res = fx.sub(a, b, W)
    elif op == "mul":
        res = fx.mul(a, b, sh, W)
    elif op == "max":
        res = fx.maximum(a, b)
    elif op == "min":
        res = fx.minimum(a, b)
    elif op == "relu":
        res = fx.relu(a)
    elif op == "asr":
        res = fx.asr(a, sh, W)
    elif op == "shl":
        res = fx.shl(a, sh, W)
    elif op == "sel":
        res = fx.select(flag, a, b)
    elif op == "accr":
        res = fx.requantize(acc, sh, W)
    elif op == "cmpgt":
        flag_out = fx.cmpgt(a, b)
    elif op == "cmpge":
        flag_out = fx.cmpge(a, b)
    elif op == "cmpeq":
        flag_out = fx.cmpeq(a, b)
    elif op == "mac":
        acc_out = fx.mac(acc, a, b, AW)
    elif op == "macz":
        acc_out = fx.mac(0, a, b, AW)
    elif op == "accadd":
        acc_out = fx.acc_add(acc, a, sh, AW)
    elif op == "accset":
        acc_out = fx.acc_shift_in(a, sh, AW)
    return res, acc_out, flag_out
