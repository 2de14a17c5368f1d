"""The CNN golden model against independent references written with Python
integers and explicit loops; tanh against math.tanh; the fixed-point network
against the float network within the documented error bound
(docs/models.md, "Numbers")."""

import math

import numpy as np
import pytest

from tensorsoc.sw.model import layout as L
from tensorsoc.verification.golden import cnn
from test_model_common import base_model, build, op

MIN, MAX = -32768, 32767


# -- independent scalar reference (the rules of docs/fixedpoint.md, spelled out) --------

def sat(v):
    return max(MIN, min(MAX, v))


def rnd(v, s):
    return (v + (1 << (s - 1))) >> s if s else v        # Python >> is floor: arithmetic shift


def wrap32(v):
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def ref_tanh(y, f):
    s = cnn.tanh_shift(f)
    table = [sat(math.floor(math.tanh((-32768 + k * 1024) / 2 ** (f + s)) * 2 ** f + 0.5)) for k in range(64)]
    u = sat(y << s) + 32768
    k, frac = u >> 10, u & 1023
    y0, y1 = table[k], table[min(k + 1, 63)]
    return y0 + (((y1 - y0) * frac) >> 10)


def ref_epilogue(acc, f, bias, scale, offset, act):
    if bias is not None:
        acc = wrap32(acc + (bias << f))
    y = sat(rnd(acc, f))
    if scale is not None:
        y = sat(sat(rnd(y * scale, f)) + offset)
    if act == "relu":
        y = max(y, 0)
    if act == "tanh":
        y = ref_tanh(y, f)
    return y


def ref_conv(x, w, f, bias, scale, offset, act, stride, pad):
    H, W, C = x.shape
    KH, KW, _, CO = w.shape
    t, b, l, r = pad
    Ho, Wo = (H + t + b - KH) // stride[0] + 1, (W + l + r - KW) // stride[1] + 1
    out = np.zeros((Ho, Wo, CO), np.int64)
    for oy in range(Ho):
        for ox in range(Wo):
            for co in range(CO):
                acc = 0
                for ky in range(KH):
                    for kx in range(KW):
                        iy, ix = oy * stride[0] + ky - t, ox * stride[1] + kx - l
                        if 0 <= iy < H and 0 <= ix < W:
                            for ci in range(C):
                                acc = wrap32(acc + int(x[iy, ix, ci]) * int(w[ky, kx, ci, co]))
                bv = None if bias is None else int(bias[co] if bias.ndim == 1 else bias[oy, ox, co])
                out[oy, ox, co] = ref_epilogue(acc, f, bv, None if scale is None else int(scale[co]),
                                               None if offset is None else int(offset[co]), act)
    return out


def ref_linear(x, w, f, bias, scale, offset, act):
    n_out, n_in = w.shape
    out = np.zeros((n_out, x.shape[1]), np.int64)
    for o in range(n_out):
        for j in range(x.shape[1]):
            acc = 0
            for i in range(n_in):
                acc = wrap32(acc + int(w[o, i]) * int(x[i, j]))
            bv = None if bias is None else int(bias[o, 0] if bias.shape[1] == 1 else bias[o, j])
            out[o, j] = ref_epilogue(acc, f, bv, None if scale is None else int(scale[o, 0]),
                                     None if offset is None else int(offset[o, 0]), act)
    return out


def ref_maxpool(x, k, stride, pad):
    H, W, C = x.shape
    t, b, l, r = pad
    Ho, Wo = (H + t + b - k[0]) // stride[0] + 1, (W + l + r - k[1]) // stride[1] + 1
    out = np.zeros((Ho, Wo, C), np.int64)
    for oy in range(Ho):
        for ox in range(Wo):
            for c in range(C):
                vals = [int(x[iy, ix, c]) for ky in range(k[0]) for kx in range(k[1])
                        for iy, ix in [(oy * stride[0] + ky - t, ox * stride[1] + kx - l)]
                        if 0 <= iy < H and 0 <= ix < W]
                out[oy, ox, c] = max(vals)            # padding never wins: it is minus infinity
    return out


def rand(rng, shape, lo, hi):
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64)


CONV_CASES = [
    # (H, W, C, CO, KH, KW, stride, pad, bias, bn, act, frac, full_range)
    (5, 6, 8, 8, 3, 3, (1, 1), (1, 1, 1, 1), "repl", True, "relu", 8, False),
    (6, 5, 8, 16, 3, 2, (2, 1), (0, 2, 1, 0), "full", False, "identity", 8, False),
    (4, 4, 8, 8, 2, 3, (1, 2), (1, 0, 0, 2), None, True, "tanh", 8, False),
    (5, 5, 8, 8, 3, 3, (1, 1), (1, 1, 1, 1), "repl", True, "identity", 4, True),   # wraps and saturates
    (3, 7, 16, 8, 1, 1, (1, 3), (0, 0, 0, 0), "repl", False, "tanh", 12, False),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_matches_reference(case):
    H, W, C, CO, KH, KW, stride, pad, bias_kind, bn, act, f, full = case
    rng = np.random.default_rng(hash(case) & 0xFFFF)
    xr, wr = ((MIN, MAX), (MIN, MAX)) if full else ((-600, 600), (-200, 200))
    x, w = rand(rng, (H, W, C), *xr), rand(rng, (KH, KW, C, CO), *wr)
    Ho, Wo = (H + pad[0] + pad[1] - KH) // stride[0] + 1, (W + pad[2] + pad[3] - KW) // stride[1] + 1
    bias = None if bias_kind is None else rand(rng, (CO,) if bias_kind == "repl" else (Ho, Wo, CO), -3000, 3000)
    scale = rand(rng, (CO,), -600, 600) if bn else None
    offset = rand(rng, (CO,), -3000, 3000) if bn else None
    got = cnn.conv_fx(x, w, f, bias, scale, offset, act, stride, pad)
    assert np.array_equal(got, ref_conv(x, w, f, bias, scale, offset, act, stride, pad))
    if full:
        assert np.any(np.abs(got) == 32767) or np.any(got == MIN)


@pytest.mark.parametrize("n_out,n_in,n_b,bias_kind,bn,act,f", [
    (8, 16, 1, "repl", True, "relu", 8), (16, 24, 3, "full", False, "tanh", 8), (8, 8, 2, None, True, "identity", 6)])
def test_linear_matches_reference(n_out, n_in, n_b, bias_kind, bn, act, f):
    rng = np.random.default_rng(n_out * 100 + n_in)
    x, w = rand(rng, (n_in, n_b), -2000, 2000), rand(rng, (n_out, n_in), -300, 300)
    bias = None if bias_kind is None else rand(rng, (n_out, 1) if bias_kind == "repl" else (n_out, n_b), -999, 999)
    scale = rand(rng, (n_out, 1), -600, 600) if bn else None
    offset = rand(rng, (n_out, 1), -999, 999) if bn else None
    got = cnn.linear_fx(x, w, f, bias, scale, offset, act)
    assert np.array_equal(got, ref_linear(x, w, f, bias, scale, offset, act))


@pytest.mark.parametrize("k,stride,pad", [((3, 3), (2, 2), (1, 1, 1, 1)), ((2, 3), (1, 2), (0, 1, 2, 0)),
                                          ((1, 1), (1, 1), (0, 0, 0, 0))])
def test_maxpool_matches_reference_with_minus_infinity_padding(k, stride, pad):
    rng = np.random.default_rng(5)
    x = rand(rng, (5, 6, 8), MIN, -1)          # all negative: zero padding would show up as 0
    got = cnn.maxpool_fx(x, k, stride, pad)
    assert np.array_equal(got, ref_maxpool(x, k, stride, pad))
    assert np.all(got < 0)


def test_tanh_matches_reference_and_is_monotonic():
    x = np.arange(MIN, MAX + 1, 37)
    for f in (0, 5, 8, 13, 15):
        got = cnn.tanh_fx(x, f)
        assert [int(v) for v in got[::50]] == [ref_tanh(int(v), f) for v in x[::50]]
    full = cnn.tanh_fx(np.arange(MIN, MAX + 1), 8)
    assert np.all(np.diff(full) >= 0) and full[0] == -256 and full[-1] == 256


@pytest.mark.parametrize("f,bound_ulp", [(4, 0.75), (8, 1.5), (10, 3.0), (12, 7.0)])
def test_tanh_error_bound(f, bound_ulp):
    """Exhaustively over int16: |tanh_fx(x) - tanh(x)| <= bound (docs/models.md)."""
    x = np.arange(MIN, MAX + 1)
    err = np.abs(cnn.tanh_fx(x, f) - np.tanh(x / 2 ** f) * 2 ** f)
    assert err.max() <= bound_ulp


def test_quantize_rounds_half_up_and_saturates():
    assert list(cnn.quantize([0.5 / 256, -0.5 / 256, 1.0, 200.0, -200.0, -1.5 / 256], 8)) == \
        [1, 0, 256, 32767, -32768, -1]


# -- the whole network: float vs fixed within the error bound ----------------------------

def layer_bound(op, g, e_in, f):
    """Sup-norm error bound of a layer's result given the bound of its input.

    Weights, biases, BN parameters and the input are Q.f quantisations of the
    float values (|error| <= q/2, q = 2**-f); every requantisation and BN
    product rounds once more (<= q/2); ReLU, tanh (<= the table bound) and max
    are 1-Lipschitz.  Valid while nothing saturates."""
    q = 2.0 ** -f
    if op.kind == "maxpool":
        return e_in[op.a]
    xin = cnn.dequantize(g.fixed[op.b], f)
    if op.kind == "lin":
        xin = L.to_memory(xin, "col_first").reshape(-1, 1) if xin.ndim == 3 else xin
        wabs = np.abs(g.real[op.a]).sum(axis=1).max()
        xabs = np.abs(xin).sum(axis=0).max()
    else:
        wabs = np.abs(g.real[op.a]).sum(axis=(0, 1, 2)).max()
        kh, kw = op.kernel
        xabs = kh * kw * np.abs(xin).max() * xin.shape[2]
    e = wabs * e_in[op.b] + xabs * q / 2 + q / 2 + (q / 2 if op.bias_en else 0)
    if op.bn_en:
        # |y s' - y' s| <= |s| e + |y'| q/2, plus the product's rounding and the offset's quantisation
        bn = g.real[op.batch]
        bias = g.fixed[op.bias] if op.bias_en else None
        if bias is not None and op.repl_bias:
            bias = bias[:, 0] if op.kind == "conv" else bias[:, :1]
        if op.kind == "conv":
            pre = cnn.conv_fx(g.fixed[op.b], g.fixed[op.a], f, bias, stride=op.stride, pad=op.pad)
        else:
            pre = cnn.linear_fx(L.to_memory(g.fixed[op.b], "col_first").reshape(-1, 1)
                                if op.b.dims.__len__() == 3 else g.fixed[op.b], g.fixed[op.a], f, bias)
        e = np.abs(bn[:, 0]).max() * e + np.abs(cnn.dequantize(pre, f)).max() * q / 2 + q / 2 + q / 2
    if op.act == "tanh":
        e += 1.5 * q
    return e


@pytest.mark.parametrize("variant", ["base", "bias_general_bn_identity"])
def test_fixed_vs_float_within_bound(variant):
    m = base_model()
    if variant != "base":
        op(m, "infer", 1).update(repl_bias=False, nlin_f_type="NLIN_F_IDENTITY")
        op(m, "load", 1)["res_dim"] = [6, 6, 8]
    model, _ = build(m)
    g = cnn.run(model)
    f = model.frac_bits
    e = {}
    for o in model.exec_ops:
        if o.kind == "stream":
            if o.h2c is not None:
                e[o.h2c] = 2.0 ** -f / 2
            continue
        assert np.all(np.abs(g.fixed[o.res]) < 32767), "saturation: the bound does not apply"
        e[o.res] = layer_bound(o, g, e, f)
        err = np.abs(g.error(o.res)).max()
        assert err <= e[o.res], f"{o.res.name}: error {err} above the bound {e[o.res]}"
    assert len(g.outputs) == 1 and g.outputs[0][1].shape == (8, 1)


def test_golden_run_feeds_the_data_sources():
    model, _ = build(base_model())
    g = cnn.run(model)
    x = model.ops[0].h2c
    assert np.array_equal(g.fixed[x], x.raw)
    assert np.allclose(cnn.dequantize(x.raw, 8), x.real, atol=2 ** -9)


def test_fixed_vs_float_on_quantised_values_only_rounding():
    """With the float model fed the dequantised constants and inputs, the
    only differences are the roundings: <= q/2 per requantisation and per BN
    product (scaled by |scale|), propagated through |W| row sums; tanh adds
    its table error."""
    model, _ = build(base_model())
    f, q = model.frac_bits, 2.0 ** -model.frac_bits
    for t in model.tensors:
        if t.raw is not None:
            t.real = cnn.dequantize(t.raw, f)
    g = cnn.run(model)
    conv, pool, lin = [o for o in model.ops if o.kind != "stream"]
    s = np.abs(g.real[conv.batch][:, 0]).max()
    e_conv = s * q / 2 + q / 2
    assert np.abs(g.error(conv.res)).max() <= e_conv
    assert np.abs(g.error(pool.res)).max() <= e_conv
    e_lin = np.abs(g.real[lin.a]).sum(axis=1).max() * e_conv + q / 2 + 1.5 * q
    err = np.abs(g.error(lin.res)).max()
    assert 0 < err <= e_lin
