"""Stimulus and expected values for the lane datapath tests.

``expected`` is the lane's contract: the vector operations of vector_ops.py,
which the ISS executes too, restricted to what the PCORE writes back: the
accumulator only after an operation of ``ACC_WRITE_OPS``, the flag only
after one of ``FLAG_WRITE_OPS`` (cores/pcore/pcore.py), so the lane's
``acc_out`` and ``flag_out`` are undefined after the others.  ``stimulus``
builds the exhaustive input space of one operation at small widths, or
random inputs (biased towards the extremes) at full width.
"""

import itertools

import numpy as np

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.lane import shift_bits_for
from tensorsoc.verification.golden import fixedpoint as fx
from tensorsoc.verification.pcore.vector_ops import execute, inputs

INPUTS = {op: inputs(op) for op in isa.OP}    # which inputs each operation depends on


def expected(op, a, b, acc, flag, sh, width, acc_width):
    """The lane's contract: (result, acc_out, flag_out), None where the lane's
    output is undefined (not written back after ``op``)."""
    res, acc_out, flag_out = execute(op, a, b, acc, flag, sh, width, acc_width)
    return (res, acc_out if op in isa.ACC_WRITE_OPS else None,
            flag_out if op in isa.FLAG_WRITE_OPS else None)


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
