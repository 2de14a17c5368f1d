"""The compiler and the golden model implement tensorsoc.spec.numbers each
on its own (sw/model/quant.py, verification/golden/cnn.py): they agree."""

import numpy as np
import pytest

from tensorsoc.spec import numbers as N
from tensorsoc.sw.model import quant
from tensorsoc.verification.golden import cnn


@pytest.mark.parametrize("frac", range(0, 16))
def test_tanh_table_and_shift_agree(frac):
    assert quant.tanh_shift(frac) == cnn.tanh_shift(frac)
    mine, golden = quant.tanh_table(frac), cnn.tanh_table(frac)
    assert len(mine) == N.SPU_LOOKUP_SIZE and np.array_equal(mine, golden)


def test_quantize_agrees_on_ties_saturation_and_random_values():
    rng = np.random.default_rng(5)
    for frac in range(0, 16):
        step = 2.0 ** -frac
        ties = (np.arange(-40, 40) + 0.5) * step               # exactly half-way: rounds up
        big = np.array([1e9, -1e9, 2.0 ** (15 - frac), -(2.0 ** (15 - frac)) - step, np.inf, -np.inf])
        vals = np.concatenate([ties, big, rng.normal(0, 2.0 ** (14 - frac), 1000)])
        assert np.array_equal(quant.quantize(vals, frac), cnn.quantize(vals, frac)), frac
    assert quant.quantize([0.5, -0.5, 1.5], 0).tolist() == [1, 0, 2]
    assert quant.quantize([1e9, -1e9], 8).tolist() == [32767, -32768]
