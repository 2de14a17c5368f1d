"""Fixed-point arithmetic of tensorsoc, defined once.

Every arithmetic rule the hardware implements lives here as a numpy function:
the PCORE lane datapath (``cores/pcore/lane.py``), the PCORE instruction-set
simulator (``verification/pcore/iss.py``) and the CNN golden model all call these, and
the hardware is tested bit-exact against them.  ``docs/fixedpoint.md`` explains
the choices.

Rules (``bits`` = data width, 16 by default; ``acc_bits`` = accumulator width,
32 by default):

* Data values are signed two's complement ``bits``-bit integers (Q8.8 by
  default: the fractional bit count is a model parameter, not an arithmetic one).
* Data results **saturate** to ``[-2**(bits-1), 2**(bits-1)-1]``.
* Accumulators are ``acc_bits`` wide and **wrap** (two's complement modulo
  ``2**acc_bits``); a product of two data values always fits.
* Right shifts are arithmetic and **round half up**:
  ``rshift_round(x, s) = (x + (1 << (s-1))) >> s`` for ``s > 0``, ``x`` for
  ``s == 0``; the sum is formed one bit wider than ``x`` so it never overflows.
* Left shifts of data saturate; left shifts into the accumulator wrap.

All functions accept scalars or numpy arrays of any integer dtype and return
``int64`` arrays (wide enough for every intermediate at the default widths).
"""

import numpy as np

from tensorsoc.spec.numbers import DATA_BITS
ACC_BITS = 32


def _i64(x):
    return np.asarray(x, dtype=np.int64)


def data_min(bits=DATA_BITS):
    return -(1 << (bits - 1))


def data_max(bits=DATA_BITS):
    return (1 << (bits - 1)) - 1


def saturate(x, bits=DATA_BITS):
    """Clamp to the signed ``bits``-bit range."""
    return np.clip(_i64(x), data_min(bits), data_max(bits))


def wrap(x, bits=ACC_BITS):
    """Two's complement wrap-around to ``bits`` bits (accumulator overflow)."""
    x = _i64(x)
    m = np.int64(1) << bits
    h = np.int64(1) << (bits - 1)
    return ((x + h) & (m - 1)) - h


def rshift_round(x, s):
    """Arithmetic right shift by ``s`` >= 0 with round-half-up.

    ``(x + 2**(s-1)) >> s``: ties go towards +infinity (2.5 -> 3, -2.5 -> -2).
    """
    x = _i64(x)
    s = _i64(s)
    if np.any(s < 0):
        raise ValueError("shift amount must be >= 0")
    half = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    return np.right_shift(x + half, s)


def shift_left_sat(x, s, bits=DATA_BITS):
    """Data left shift by ``s`` >= 0, saturated to ``bits`` bits."""
    x = _i64(x)
    s = _i64(s)
    # Beyond bits the result is saturated anyway; cap to keep int64 exact.
    s = np.minimum(s, bits)
    return saturate(np.left_shift(x, s), bits)


# -- data (16-bit) operations -------------------------------------------------

def add(a, b, bits=DATA_BITS):
    return saturate(_i64(a) + _i64(b), bits)


def sub(a, b, bits=DATA_BITS):
    return saturate(_i64(a) - _i64(b), bits)


def mul(a, b, s=0, bits=DATA_BITS):
    """Fixed-point multiply: ``saturate(rshift_round(a*b, s))``.

    With Q.f operands and ``s = f`` the result is Q.f again."""
    return saturate(rshift_round(_i64(a) * _i64(b), s), bits)


def asr(a, s, bits=DATA_BITS):
    """Rounded arithmetic right shift of data.  For an in-range input the
    result is always in range (the saturation only documents the width)."""
    return saturate(rshift_round(a, s), bits)


def shl(a, s, bits=DATA_BITS):
    return shift_left_sat(a, s, bits)


def maximum(a, b):
    return np.maximum(_i64(a), _i64(b))


def minimum(a, b):
    return np.minimum(_i64(a), _i64(b))


def relu(a):
    return np.maximum(_i64(a), 0)


def cmpgt(a, b):
    """Per-lane compare: 1 where a > b, else 0 (sets the lane flag)."""
    return (_i64(a) > _i64(b)).astype(np.int64)


def cmpge(a, b):
    return (_i64(a) >= _i64(b)).astype(np.int64)


def cmpeq(a, b):
    return (_i64(a) == _i64(b)).astype(np.int64)


def select(flag, a, b):
    """Per-lane select: ``a`` where ``flag`` is set, else ``b``."""
    return np.where(_i64(flag) != 0, _i64(a), _i64(b))


# -- accumulator (32-bit) operations ------------------------------------------

def mac(acc, a, b, acc_bits=ACC_BITS):
    """Multiply-accumulate: ``wrap(acc + a*b)``."""
    return wrap(_i64(acc) + _i64(a) * _i64(b), acc_bits)


def acc_shift_in(a, s, acc_bits=ACC_BITS):
    """Data value moved into accumulator precision: ``wrap(a << s)``."""
    return wrap(np.left_shift(_i64(a), _i64(s)), acc_bits)


def acc_add(acc, a, s, acc_bits=ACC_BITS):
    """``wrap(acc + (a << s))``: adds e.g. a Q.f bias to a Q.2f accumulator."""
    return wrap(_i64(acc) + acc_shift_in(a, s, acc_bits), acc_bits)


def requantize(acc, s, bits=DATA_BITS):
    """Accumulator to data: ``saturate(rshift_round(acc, s))``."""
    return saturate(rshift_round(acc, s), bits)


def dot(a, b, axis=-1, acc_bits=ACC_BITS):
    """Sum of products along ``axis`` in the wrapping accumulator.

    Equal to a chain of :func:`mac` starting from 0 (wrap-around is modular,
    so the order of accumulation does not matter)."""
    return wrap(np.sum(_i64(a) * _i64(b), axis=axis), acc_bits)


# -- the CNN epilogue -----------------------------------------------------------

ACT_IDENTITY = "identity"
ACT_RELU = "relu"


def epilogue(acc, frac, bias=None, scale=None, offset=None, act=ACT_IDENTITY,
             bits=DATA_BITS, acc_bits=ACC_BITS):
    """The bias + batch-norm + activation epilogue applied to an accumulator.

    This is the order the PCORE kernels execute (and the CNN golden model
    must follow):

    1. ``acc = wrap(acc + (bias << frac))``            (bias, if given)
    2. ``y = saturate(rshift_round(acc, frac))``       (requantise to Q.frac)
    3. ``y = saturate(rshift_round(y*scale, frac))``   (batch norm, if given)
       ``y = saturate(y + offset)``
    4. ``y = max(y, 0)``                               (ReLU, if act == "relu")

    ``tanh`` is not a PCORE operation: it is applied by the stream processor
    (a lookup table) while the result is transferred out.
    """
    acc = _i64(acc)
    if bias is not None:
        acc = acc_add(acc, bias, frac, acc_bits)
    y = requantize(acc, frac, bits)
    if (scale is None) != (offset is None):
        raise ValueError("batch norm needs both scale and offset")
    if scale is not None:
        y = mul(y, scale, frac, bits)
        y = add(y, offset, bits)
    if act == ACT_RELU:
        y = relu(y)
    elif act != ACT_IDENTITY:
        raise ValueError(f"activation {act!r}: the PCOREs apply identity or relu")
    return y
