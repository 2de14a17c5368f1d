"""Stimulus and expected values for the lane datapath tests.

``expected`` is the lane's contract written with the golden fixed-point
functions; ``stimulus`` builds the exhaustive input space of one operation at
small widths, or random inputs (biased towards the extremes) at full width.
"""

import itertools

import numpy as np

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.lane import shift_bits_for
from tensorsoc.verification.golden import fixedpoint as fx

INPUTS = {  # which inputs each operation depends on
    "mov": "a", "add": "ab", "sub": "ab", "mul": "abh", "max": "ab", "min": "ab", "relu": "a",
    "asr": "ah", "shl": "ah", "sel": "abf", "cmpgt": "ab", "cmpge": "ab", "cmpeq": "ab",
    "mac": "abc", "macz": "ab", "accadd": "ahc", "accset": "ah", "accr": "hc",
}


def expected(op, a, b, acc, flag, sh, width, acc_width):
    """(result, acc_out, flag_out); result is None for operations whose
    result is not written anywhere."""
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


def _ranges(width, acc_width):
    sb = shift_bits_for(acc_width)
    return {"a": (fx.data_min(width), fx.data_max(width)), "b": (fx.data_min(width), fx.data_max(width)),
            "c": (fx.data_min(acc_width), fx.data_max(acc_width)), "h": (0, (1 << sb) - 1), "f": (0, 1)}


def stimulus(op, width, acc_width, rng=None, n=None):
    """dict of int64 arrays a, b, acc, flag, sh.  Exhaustive over the inputs
    ``op`` depends on when ``rng`` is None, else ``n`` random vectors
    (one in four taken from the extremes of each range)."""
    rngs = _ranges(width, acc_width)
    keys = {"a": "a", "b": "b", "c": "acc", "f": "flag", "h": "sh"}
    used = INPUTS[op]
    cols = {}
    if rng is None:
        axes = [np.arange(rngs[k][0], rngs[k][1] + 1) for k in used]
        grid = np.array(list(itertools.product(*axes)), np.int64).reshape(-1, len(used))
        for i, k in enumerate(used):
            cols[keys[k]] = grid[:, i]
        count = len(grid)
    else:
        count = n
        for k in used:
            lo, hi = rngs[k]
            v = rng.integers(lo, hi + 1, size=n, dtype=np.int64)
            edge = np.array([lo, lo + 1, -1, 0, 1, hi - 1, hi], np.int64).clip(lo, hi)
            pick = rng.random(n) < 0.25
            v[pick] = rng.choice(edge, size=int(pick.sum()))
            cols[keys[k]] = v
    for k in keys.values():
        cols.setdefault(k, np.zeros(count, np.int64))
    cols["op"] = np.full(count, isa.OP[op], np.int64)
    return cols
