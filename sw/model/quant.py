"""The compiler's side of ``tensorsoc.spec.numbers``: quantisation to Q.frac
and the stream processor's tanh table, implemented here from the
specification (the golden model, verification/golden/cnn.py, has its own
implementation; tests/test_spec_numbers.py checks that the two agree)."""

import math

import numpy as np

from tensorsoc.spec import numbers as N

_LO = -(1 << (N.DATA_BITS - 1))
_HI = (1 << (N.DATA_BITS - 1)) - 1


def quantize(real, frac):
    """Real values -> Q.frac integers (int64 array): round half up, then saturate."""
    scaled = np.asarray(real, dtype=np.float64) * math.ldexp(1.0, frac)
    return np.clip(np.floor(scaled + 0.5), _LO, _HI).astype(np.int64)


def tanh_shift(frac):
    """Left shift applied before the tanh table on Q.frac data."""
    return max(0, N.DATA_BITS - 1 - N.TANH_RANGE_LOG2 - frac)


def tanh_table(frac):
    """The SPU_LOOKUP_SIZE entries of the tanh stream program for Q.frac data."""
    s = tanh_shift(frac)
    inputs = _LO + np.arange(N.SPU_LOOKUP_SIZE, dtype=np.int64) * (1 << N.SPU_SEGMENT_SHIFT)
    return quantize(np.tanh(inputs / math.ldexp(1.0, frac + s)), frac)
