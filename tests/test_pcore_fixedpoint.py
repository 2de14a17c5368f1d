"""The golden fixed-point arithmetic against plain Python integers."""

import numpy as np
from hypothesis import given, strategies as st

from tensorsoc.verification.golden import fixedpoint as fx

I16 = st.integers(-32768, 32767)
I32 = st.integers(-(1 << 31), (1 << 31) - 1)


def py_round_shift(x, s):
    return x if s == 0 else (x + 2 ** (s - 1)) // 2 ** s


def py_sat(x, bits=16):
    return max(-(1 << (bits - 1)), min((1 << (bits - 1)) - 1, x))


def py_wrap(x, bits=32):
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def test_round_half_up_examples():
    # 2.5 -> 3, -2.5 -> -2, 1.5 -> 2, -1.5 -> -1, 1.25 -> 1, -1.75 -> -2 (in units of 1/4)
    x = np.array([10, -10, 6, -6, 5, -7])
    assert list(fx.rshift_round(x, 2)) == [3, -2, 2, -1, 1, -2]
    assert list(fx.rshift_round(x, 0)) == list(x)


def test_saturation_and_wrap_limits():
    assert list(fx.add([32767, -32768], [1, -1])) == [32767, -32768]
    assert fx.mul(-32768, -32768, 0) == 32767
    assert fx.mac((1 << 31) - 1, 1, 1) == -(1 << 31)
    assert fx.requantize(-(1 << 31), 8) == -32768
    assert fx.shl(1, 20) == 32767 and fx.shl(-1, 20) == -32768
    assert fx.relu(-5) == 0 and fx.relu(7) == 7


@given(I32, st.integers(0, 31))
def test_rshift_round(x, s):
    assert fx.rshift_round(x, s) == py_round_shift(x, s)


@given(I16, I16, st.integers(0, 31))
def test_mul(a, b, s):
    assert fx.mul(a, b, s) == py_sat(py_round_shift(a * b, s))


@given(I32, I16, I16)
def test_mac(acc, a, b):
    assert fx.mac(acc, a, b) == py_wrap(acc + a * b)


@given(I32, I16, st.integers(0, 31))
def test_acc_add_and_requantize(acc, a, s):
    assert fx.acc_add(acc, a, s) == py_wrap(acc + (a << s))
    assert fx.requantize(acc, s) == py_sat(py_round_shift(acc, s))


@given(st.lists(st.tuples(I16, I16), min_size=1, max_size=40))
def test_dot_is_a_mac_chain(pairs):
    acc = 0
    for a, b in pairs:
        acc = py_wrap(acc + a * b)
    a, b = np.array(pairs).T
    assert fx.dot(a, b) == acc


@given(I32, I16, I16, I16, st.booleans())
def test_epilogue_order(acc, bias, scale, offset, relu):
    f = 8
    y = py_sat(py_round_shift(py_wrap(acc + (bias << f)), f))
    y = py_sat(py_sat(py_round_shift(y * scale, f)) + offset)
    if relu:
        y = max(y, 0)
    got = fx.epilogue(acc, f, bias, scale, offset, fx.ACT_RELU if relu else fx.ACT_IDENTITY)
    assert got == y


def test_small_widths():
    assert list(fx.saturate([9, -9], bits=4)) == [7, -8]
    assert fx.wrap(128, bits=8) == -128
    assert fx.add(7, 1, bits=4) == 7
