"""Golden model of the YAML CNN ops: bit-exact fixed point, and float.

The fixed-point functions compute what the TensorEngine + PCOREs must produce,
bit for bit, using only the rules of :mod:`tensorsoc.verification.golden.fixedpoint`:

* conv / linear: exact products summed in the wrapping 32-bit accumulator
  (``fx.wrap`` of the exact sum == ``fx.dot``, which is order-independent),
  then ``fx.epilogue`` (bias << frac, requantise, batch norm
  ``x*scale+offset``, ReLU) in the kernels' order;
* tanh: after the epilogue (activation identity), :func:`tanh_fx` -- the
  stream processor's piecewise-linear table (``tensor_exec.spu_eval``) on the
  value shifted left (saturating) by :func:`tanh_shift`;
* maxpool: maximum over the window, the padding reading as -32768 (minus
  infinity: it never wins against a real element).

The float functions compute the same network in float64 with ``np.tanh`` and
-inf padding; :func:`run` executes a checked model (``tensorsoc.sw.model.frontend``) in
both and returns every tensor.  docs/models.md states the error bounds.
"""

from dataclasses import dataclass, field

import numpy as np

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.golden import fixedpoint as fx
from tensorsoc.verification.golden.tensor_exec import spu_eval

from tensorsoc.spec.numbers import TANH_RANGE_LOG2          # the tanh table spans [-4, 4)


def quantize(real, frac):
    """Real values -> Q.frac int16: round half up, saturate (in float first:
    casting a value beyond the int64 range, e.g. 1e30 or inf, to an integer
    would wrap instead of saturating)."""
    rounded = np.floor(np.asarray(real, dtype=np.float64) * (1 << frac) + 0.5)
    return fx.saturate(np.clip(rounded, fx.data_min() - 1, fx.data_max() + 1))


def dequantize(raw, frac):
    return np.asarray(raw, dtype=np.float64) / (1 << frac)


# -- tanh on the stream processor ----------------------------------------------

def tanh_shift(frac, bits=fx.DATA_BITS):
    """Left shift that maps the Q.frac range [-4, 4) onto the whole int16
    range the SPU table covers (0 when Q.frac spans less than that)."""
    return max(0, bits - 1 - TANH_RANGE_LOG2 - frac)


def tanh_table(frac):
    """The SPU program (SPU_LOOKUP_SIZE int16 words) for tanh on Q.frac data:
    entry k holds ``quantize(tanh(x_k))`` at ``x_k = (-32768 + k*1024) / 2**(frac+s)``,
    ``s = tanh_shift(frac)``."""
    s = tanh_shift(frac)
    k = np.arange(isa.SPU_LOOKUP_SIZE, dtype=np.int64)
    x = (-32768 + (k << isa.SPU_SEGMENT_SHIFT)) / float(1 << (frac + s))
    return quantize(np.tanh(x), frac)


def tanh_fx(y, frac):
    """Fixed-point tanh of Q.frac data, exactly as the hardware computes it."""
    return spu_eval(tanh_table(frac), fx.shl(y, tanh_shift(frac)))


# -- fixed-point ops ----------------------------------------------------------------

def _pad4(pad):
    pad = tuple(int(p) for p in pad)
    return pad if len(pad) == 4 else (pad[0], pad[0], pad[1], pad[1])


def out_size(n, k, stride, before, after):
    return (n + before + after - k) // stride + 1


def _windows(xp, kh, kw, stride, ho, wo):
    """(..., Ho, Wo, KH, KW, C) windows of a padded (..., H, W, C) array (any
    leading batch axes)."""
    v = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(-3, -2))   # (..., H', W', C, KH, KW)
    v = v[..., ::stride[0], ::stride[1], :, :, :][..., :ho, :wo, :, :, :]
    return np.moveaxis(v, -3, -1)


def _pad_hw(x, t, b, l, r, value=0):
    """Pad the H and W axes of (..., H, W, C)."""
    return np.pad(x, [(0, 0)] * (x.ndim - 3) + [(t, b), (l, r), (0, 0)], constant_values=value)


def _finish(acc, frac, bias, scale, offset, act):
    y = fx.epilogue(acc, frac, bias, scale, offset, fx.ACT_RELU if act == "relu" else fx.ACT_IDENTITY)
    return tanh_fx(y, frac) if act == "tanh" else y


def conv_fx(x, w, frac, bias=None, scale=None, offset=None, act="identity", stride=(1, 1), pad=(0, 0)):
    """x (H, W, Cin) -- or (N, H, W, Cin), a batch -- and w (KH, KW, Cin, Cout)
    int16 -> (Ho, Wo, Cout) (or (N, Ho, Wo, Cout)).  ``bias`` broadcasts
    against the output: (Cout,) replicated or (Ho, Wo, Cout); ``scale``/``offset``
    (Cout,).  ``pad``: (h, w) or (top, bottom, left, right), zeros."""
    x = np.asarray(x, dtype=np.int64)
    kh, kw, _, _ = w.shape
    t, b, l, r = _pad4(pad)
    ho = out_size(x.shape[-3], kh, stride[0], t, b)
    wo = out_size(x.shape[-2], kw, stride[1], l, r)
    win = _windows(_pad_hw(x, t, b, l, r), kh, kw, stride, ho, wo)
    acc = fx.wrap(np.tensordot(win, np.asarray(w, dtype=np.int64), axes=([-3, -2, -1], [0, 1, 2])))
    return _finish(acc, frac, bias, scale, offset, act)


def linear_fx(x, w, frac, bias=None, scale=None, offset=None, act="identity"):
    """x (n_in, n_b) -- or (N, n_in, n_b) --, w (n_out, n_in) -> (n_out, n_b)
    (or (N, n_out, n_b)); bias (n_out, 1) or (n_out, n_b); scale/offset (n_out, 1)."""
    acc = fx.wrap(np.asarray(w, dtype=np.int64) @ np.asarray(x, dtype=np.int64))
    return _finish(acc, frac, bias, scale, offset, act)


def maxpool_fx(x, kernel, stride=(1, 1), pad=(0, 0)):
    """x (H, W, C) or (N, H, W, C)."""
    x = np.asarray(x, dtype=np.int64)
    t, b, l, r = _pad4(pad)
    ho = out_size(x.shape[-3], kernel[0], stride[0], t, b)
    wo = out_size(x.shape[-2], kernel[1], stride[1], l, r)
    xp = _pad_hw(x, t, b, l, r, fx.data_min())
    return _windows(xp, kernel[0], kernel[1], stride, ho, wo).max(axis=(-3, -2))


# -- float ops (same network, real arithmetic) -----------------------------------

def _finish_float(y, bias, scale, offset, act):
    if bias is not None:
        y = y + bias
    if scale is not None:
        y = y * scale + offset
    if act == "relu":
        return np.maximum(y, 0.0)
    return np.tanh(y) if act == "tanh" else y


def conv_float(x, w, bias=None, scale=None, offset=None, act="identity", stride=(1, 1), pad=(0, 0)):
    kh, kw, _, _ = w.shape
    t, b, l, r = _pad4(pad)
    x = np.asarray(x, dtype=np.float64)
    ho = out_size(x.shape[-3], kh, stride[0], t, b)
    wo = out_size(x.shape[-2], kw, stride[1], l, r)
    y = np.tensordot(_windows(_pad_hw(x, t, b, l, r), kh, kw, stride, ho, wo), w, axes=([-3, -2, -1], [0, 1, 2]))
    return _finish_float(y, bias, scale, offset, act)


def linear_float(x, w, bias=None, scale=None, offset=None, act="identity"):
    return _finish_float(np.asarray(w, dtype=np.float64) @ x, bias, scale, offset, act)


def maxpool_float(x, kernel, stride=(1, 1), pad=(0, 0)):
    t, b, l, r = _pad4(pad)
    x = np.asarray(x, dtype=np.float64)
    ho = out_size(x.shape[-3], kernel[0], stride[0], t, b)
    wo = out_size(x.shape[-2], kernel[1], stride[1], l, r)
    xp = _pad_hw(x, t, b, l, r, -np.inf)
    return _windows(xp, kernel[0], kernel[1], stride, ho, wo).max(axis=(-3, -2))


# -- a whole model -------------------------------------------------------------------

@dataclass
class GoldenRun:
    frac: int
    fixed: dict = field(default_factory=dict)       # Tensor -> int64 logical array
    real: dict = field(default_factory=dict)        # Tensor -> float64 logical array
    outputs: list = field(default_factory=list)     # (stream op, fixed, real), C2H order

    def error(self, tensor):
        """Quantisation error of a tensor: fixed (as real) minus float."""
        return dequantize(self.fixed[tensor], self.frac) - self.real[tensor]


def _operands(op, vals, kind):
    """Bias / scale / offset of a conv or linear op shaped to broadcast."""
    bias = scale = offset = None
    if op.bias_en:
        bias = vals[op.bias]
        if op.repl_bias:
            bias = bias[:, 0] if kind == "conv" else bias[:, :1]
    if op.bn_en:
        bn = vals[op.batch]
        scale, offset = (bn[:, 0], bn[:, 1]) if kind == "conv" else (bn[:, :1], bn[:, 1:2])
    return bias, scale, offset


def _lin_input(t, arr):
    """The linear input: a col_first (h, w, c) tensor flattened to (h*w*c, 1),
    which is its memory order (C order); leading batch axes kept."""
    return arr.reshape(arr.shape[:arr.ndim - 3] + (-1, 1)) if len(t.dims) == 3 else arr


def _execute(model, g, inputs=None):
    """Every op of ``model`` in fixed point and in float into ``g``.  Inputs
    come from their data sources, or from ``inputs`` ({Tensor: (fixed, real)},
    arrays with a leading batch axis)."""
    f = model.frac_bits
    for op in model.exec_ops:
        if op.kind == "stream":
            if op.c2h is not None:
                g.outputs.append((op, g.fixed[op.c2h], g.real[op.c2h]))
            if op.h2c is not None:
                g.fixed[op.h2c], g.real[op.h2c] = (inputs or {}).get(op.h2c, (op.h2c.raw, op.h2c.real))
            continue
        for vals, fixed in ((g.fixed, True), (g.real, False)):
            if op.kind == "conv":
                bias, scale, offset = _operands(op, vals, "conv")
                fn = (lambda *a, **k: conv_fx(*a, f, **k)) if fixed else conv_float
                y = fn(vals[op.b], vals[op.a], bias=bias, scale=scale, offset=offset, act=op.act,
                       stride=op.stride, pad=op.pad)
            elif op.kind == "lin":
                bias, scale, offset = _operands(op, vals, "lin")
                x = _lin_input(op.b, vals[op.b])
                y = (linear_fx(x, vals[op.a], f, bias, scale, offset, op.act) if fixed
                     else linear_float(x, vals[op.a], bias, scale, offset, op.act))
            else:
                y = (maxpool_fx if fixed else maxpool_float)(vals[op.a], op.kernel, op.stride, op.pad)
            vals[op.res] = y
    return g


def run(model):
    """Execute a checked model (``tensorsoc.sw.model.frontend.Model``) in fixed point and
    in float.  Constants and inputs come from their data sources (the float
    model uses the real values before quantisation)."""
    return _execute(model, GoldenRun(model.frac_bits))


def run_batch(model, inputs):
    """The model over a batch at once (numpy, vectorised across images):
    ``inputs`` {input Tensor: (fixed int array, real float array)}, each
    (N, *dims); other inputs come from their data sources.  Every activation
    in the returned GoldenRun has the leading axis N (constants do not);
    bit for bit what :func:`run` gives for each image."""
    return _execute(model, GoldenRun(model.frac_bits), inputs)
