"""The CNN kernels as runnable workloads: data laid out the way the
TensorEngine lays it out, plus the expected result from an independent numpy
reference (direct convolution / matrix product / pooling in the golden
fixed-point arithmetic).

Used by the tests (ISS and hardware against the reference, hardware against
the ISS) and by ``tsoc bench pcore``.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.pcore import KERNEL_DIR
from tensorsoc.sw.pcore.asm import assemble
from tensorsoc.verification.golden import fixedpoint as fx

KERNELS = KERNEL_DIR
DMIN, DMAX = fx.data_min(), fx.data_max()


@dataclass
class Workload:
    name: str
    source: Path
    cls: str
    func: str
    defines: dict
    config: SoCConfig
    private: np.ndarray            # (NP, NT, private_words): inputs, one process space
    shared: np.ndarray             # (NP, shared_words)
    expected: dict                 # variable -> (NP, NT, size) expected contents
    useful_macs: int = 0           # MACs of the mathematical operation
    vector_outputs: int = 0        # output vectors (for non-MAC kernels)
    program: object = field(default=None, repr=False)

    def assemble(self):
        if self.program is None:
            self.program = assemble([self.source], self.config, self.defines)
        return self.program

    @property
    def entry(self):
        return self.assemble().function(self.cls, self.func)

    def var(self, name):
        return self.assemble().variable(self.cls, name)

    def mismatches(self, private):
        """Compare a private image (NP, NT, words) with the expectation;
        returns a list of messages (empty when bit-exact)."""
        out = []
        for name, exp in self.expected.items():
            v = self.var(name)
            got = private[:, :, v.addr:v.addr + v.size]
            bad = np.argwhere(got != exp)
            if len(bad):
                p, t, i = bad[0]
                out.append(f"{self.name}: {len(bad)} element(s) of {name} differ; first at pcore {p} "
                           f"thread {t} element {i}: got {got[p, t, i]}, expected {exp[p, t, i]}")
        return out


def _images(config):
    return (np.zeros((config.np, config.nt, config.pcore_private_words), np.int64),
            np.zeros((config.np, config.pcore_shared_words), np.int64))


def _put_private(priv, var, data):
    """data: (NP, NT, ...) flattened into the variable."""
    priv[:, :, var.addr:var.addr + var.size] = data.reshape(priv.shape[0], priv.shape[1], -1)


def _put_shared(shr, var, data):
    """data replicated to every PCORE."""
    shr[:, var.addr:var.addr + var.size] = np.asarray(data).reshape(-1)


def _rand(rng, shape, lo, hi):
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64)


def _act(relu):
    return fx.ACT_RELU if relu else fx.ACT_IDENTITY


def convolution(config=None, rng=None, H=6, W=6, CIN=8, COUT=16, KH=3, KW=3, stride=(1, 1),
                pad=(1, 1), NPIX=2, FRAC=8, BIAS=1, BN=1, RELU=1, full_range=False):
    """``full_range``: inputs and weights over the whole int16 range, so the
    accumulator wraps and every saturation is exercised."""
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(1)
    defines = dict(KH=KH, KW=KW, CIN=CIN, COUT=COUT, NPIX=NPIX, FRAC=FRAC, BIAS=BIAS, BN=BN, RELU=RELU)
    wl = Workload("convolution", KERNELS / "convolution.pcore", "convolution", "exe", defines, c, *_images(c), {})
    Ho = (H + 2 * pad[0] - KH) // stride[0] + 1
    Wo = (W + 2 * pad[1] - KW) // stride[1] + 1
    slots = c.np * c.nt * NPIX
    if Ho * Wo > slots:
        raise ValueError(f"{Ho}x{Wo} output pixels do not fit {slots} thread slots")
    xr, wr = ((DMIN, DMAX), (DMIN, DMAX)) if full_range else ((-1024, 1024), (-256, 256))
    x = _rand(rng, (H, W, CIN), *xr)
    w = _rand(rng, (KH, KW, CIN, COUT), *wr)
    bias = _rand(rng, (COUT,) if BIAS == 1 else (Ho, Wo, COUT), -2048, 2048)
    scale = _rand(rng, (COUT,), -512, 512)
    offset = _rand(rng, (COUT,), -2048, 2048)

    # Reference: direct convolution over the zero-padded input.
    xp = np.zeros((H + 2 * pad[0], W + 2 * pad[1], CIN), np.int64)
    xp[pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    K = KH * KW * CIN
    patches = np.zeros((slots, K), np.int64)
    ref = np.zeros((slots, COUT), np.int64)
    bias_slots = np.zeros((slots, COUT), np.int64)
    for oy in range(Ho):
        for ox in range(Wo):
            n = oy * Wo + ox
            win = xp[oy * stride[0]:oy * stride[0] + KH, ox * stride[1]:ox * stride[1] + KW]
            patches[n] = win.reshape(-1)
            acc = np.array([fx.dot(win, w[:, :, :, co], axis=None) for co in range(COUT)])
            b = None if not BIAS else (bias if BIAS == 1 else bias[oy, ox])
            if BIAS == 2:
                bias_slots[n] = bias[oy, ox]
            ref[n] = fx.epilogue(acc, FRAC, b, scale if BN else None, offset if BN else None, _act(RELU))
    # Unused slots compute on zero patches.
    for n in range(Ho * Wo, slots):
        b = None if not BIAS else (bias if BIAS == 1 else bias_slots[n])
        ref[n] = fx.epilogue(np.zeros(COUT, np.int64), FRAC, b, scale if BN else None,
                             offset if BN else None, _act(RELU))

    G = COUT // c.vw
    _put_private(wl.private, wl.var("patch"), patches)
    coef = w.reshape(K, G, c.vw).transpose(1, 0, 2)          # [g][k][lane]
    _put_shared(wl.shared, wl.var("coef"), coef)
    if BIAS == 1:
        _put_shared(wl.shared, wl.var("bias"), bias)
    elif BIAS == 2:
        _put_private(wl.private, wl.var("bias"), bias_slots)
    if BN:
        _put_shared(wl.shared, wl.var("scale"), scale)
        _put_shared(wl.shared, wl.var("offset"), offset)
    wl.expected["out"] = ref.reshape(c.np, c.nt, NPIX * COUT)
    wl.useful_macs = slots * K * COUT
    return wl


def linear(config=None, rng=None, NIN=32, OB=1, NB=1, FRAC=8, BIAS=1, BN=1, RELU=1, full_range=False):
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(2)
    defines = dict(NIN=NIN, OB=OB, NB=NB, FRAC=FRAC, BIAS=BIAS, BN=BN, RELU=RELU)
    name = "linear_mv" if NB == 1 else "linear_mm"
    wl = Workload(name, KERNELS / "linear.pcore", "linear", "exe", defines, c, *_images(c), {})
    blocks = c.np * c.nt
    NOUT = blocks * OB * c.vw
    W = _rand(rng, (NOUT, NIN), *((DMIN, DMAX) if full_range else (-256, 256)))
    X = _rand(rng, (NIN, NB), *((DMIN, DMAX) if full_range else (-1024, 1024)))
    bias = _rand(rng, (NOUT,) if BIAS == 1 else (NOUT, NB), -2048, 2048)
    scale = _rand(rng, (NOUT,), -512, 512)
    offset = _rand(rng, (NOUT,), -2048, 2048)
    Y = np.zeros((NOUT, NB), np.int64)
    for o in range(NOUT):
        for b in range(NB):
            acc = fx.dot(W[o], X[:, b])
            bb = None if not BIAS else (bias[o] if BIAS == 1 else bias[o, b])
            Y[o, b] = fx.epilogue(acc, FRAC, bb, scale[o] if BN else None, offset[o] if BN else None,
                                  _act(RELU))
    # Thread block = pcore*NT + thread; its outputs o = (block*OB + ob)*VW + lane.
    wt = W.reshape(blocks, OB, c.vw, NIN).transpose(0, 1, 3, 2)      # [block][ob][i][lane]
    _put_private(wl.private, wl.var("w"), wt)
    _put_shared(wl.shared, wl.var("x"), X.T)                          # [b][i]
    if BIAS == 1:
        _put_private(wl.private, wl.var("bias"), bias.reshape(blocks, OB, c.vw))
    elif BIAS == 2:
        _put_private(wl.private, wl.var("bias"), bias.reshape(blocks, OB, c.vw, NB).transpose(0, 3, 1, 2))
    if BN:
        _put_private(wl.private, wl.var("scale"), scale.reshape(blocks, OB, c.vw))
        _put_private(wl.private, wl.var("offset"), offset.reshape(blocks, OB, c.vw))
    yexp = Y.reshape(blocks, OB, c.vw, NB).transpose(0, 3, 1, 2)      # [block][b][ob][lane]
    wl.expected["y"] = yexp.reshape(c.np, c.nt, -1)
    wl.useful_macs = NOUT * NIN * NB
    return wl


def maxpool(config=None, rng=None, H=8, W=8, C=16, KH=3, KW=3, stride=(2, 2), pad=(1, 1), NPIX=2):
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(3)
    KK = KH * KW
    wl = Workload("maxpool", KERNELS / "maxpool.pcore", "maxpool", "exe",
                  dict(KK=KK, C=C, NPIX=NPIX), c, *_images(c), {})
    Ho = (H + 2 * pad[0] - KH) // stride[0] + 1
    Wo = (W + 2 * pad[1] - KW) // stride[1] + 1
    slots = c.np * c.nt * NPIX
    if Ho * Wo > slots:
        raise ValueError(f"{Ho}x{Wo} output pixels do not fit {slots} thread slots")
    x = _rand(rng, (H, W, C), DMIN, DMAX)
    xp = np.full((H + 2 * pad[0], W + 2 * pad[1], C), DMIN, np.int64)   # padding = -infinity
    xp[pad[0]:pad[0] + H, pad[1]:pad[1] + W] = x
    wins = np.full((slots, KK, C), DMIN, np.int64)
    ref = np.full((slots, C), DMIN, np.int64)
    for oy in range(Ho):
        for ox in range(Wo):
            n = oy * Wo + ox
            win = xp[oy * stride[0]:oy * stride[0] + KH, ox * stride[1]:ox * stride[1] + KW]
            wins[n] = win.reshape(KK, C)
            ref[n] = win.max(axis=(0, 1))
    _put_private(wl.private, wl.var("win"), wins)
    wl.expected["out"] = ref.reshape(c.np, c.nt, -1)
    wl.vector_outputs = slots * C // c.vw
    return wl


def epilogue(config=None, rng=None, C=16, NPIX=8, FRAC=8, BIAS=1, BN=1, RELU=1):
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(4)
    wl = Workload("epilogue", KERNELS / "epilogue.pcore", "epilogue", "exe",
                  dict(C=C, NPIX=NPIX, FRAC=FRAC, BIAS=BIAS, BN=BN, RELU=RELU), c, *_images(c), {})
    x = _rand(rng, (c.np, c.nt, NPIX, C), DMIN, DMAX)
    bias = _rand(rng, (C,), -4096, 4096)
    scale = _rand(rng, (C,), -1024, 1024)
    offset = _rand(rng, (C,), -4096, 4096)
    ref = fx.epilogue(fx.acc_shift_in(x, FRAC), FRAC, bias if BIAS else None,
                      scale if BN else None, offset if BN else None, _act(RELU))
    _put_private(wl.private, wl.var("x"), x)
    if BIAS:
        _put_shared(wl.shared, wl.var("bias"), bias)
    if BN:
        _put_shared(wl.shared, wl.var("scale"), scale)
        _put_shared(wl.shared, wl.var("offset"), offset)
    wl.expected["y"] = ref.reshape(c.np, c.nt, -1)
    wl.vector_outputs = c.np * c.nt * NPIX * C // c.vw
    return wl


def eltwise_add(config=None, rng=None, N=128, RELU=0):
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(5)
    wl = Workload("eltwise_add", KERNELS / "eltwise.pcore", "eltwise", "add",
                  dict(N=N, RELU=RELU), c, *_images(c), {})
    a = _rand(rng, (c.np, c.nt, N), DMIN, DMAX)
    b = _rand(rng, (c.np, c.nt, N), DMIN, DMAX)
    ref = fx.add(a, b)
    if RELU:
        ref = fx.relu(ref)
    _put_private(wl.private, wl.var("a"), a)
    _put_private(wl.private, wl.var("b"), b)
    wl.expected["out"] = ref
    wl.vector_outputs = c.np * c.nt * N // c.vw
    return wl


def mac_stream(config=None, rng=None, N=1000):
    c = config or SoCConfig()
    rng = rng or np.random.default_rng(6)
    wl = Workload(f"mac_stream{N}", KERNELS / "stream.pcore", "stream", "mac", dict(N=N), c, *_images(c), {})
    x = _rand(rng, (c.np, c.nt, c.vw), -300, 300)
    w = _rand(rng, (c.vw,), -300, 300)
    _put_private(wl.private, wl.var("x"), x)
    _put_shared(wl.shared, wl.var("w"), w)
    wl.expected["out"] = fx.requantize(fx.wrap(N * x[:, :, :1] * w), 0)
    wl.useful_macs = c.np * c.nt * c.vw * N
    return wl


def fit(make, H, W, **kw):
    """Largest input (up to H x W) whose output fits the thread slots."""
    while True:
        try:
            return make(H=H, W=W, **kw)
        except ValueError:
            if H <= 1 and W <= 1:
                raise
            H, W = max(1, H - 1), max(1, W - 1)


def standard(config=None):
    """One workload per CNN kernel (the test set); sizes shrink to fit small
    geometries."""
    c = config or SoCConfig()
    return [
        fit(lambda **k: convolution(c, **k), 6, 6),
        fit(lambda **k: convolution(c, rng=np.random.default_rng(11), **k), 5, 5,
             stride=(2, 1), pad=(0, 1), BIAS=2, BN=0, RELU=0),
        fit(lambda **k: convolution(c, rng=np.random.default_rng(15), **k), 4, 4,
            FRAC=4, BN=1, RELU=0, full_range=True),
        linear(c),
        linear(c, rng=np.random.default_rng(16), NIN=16, FRAC=16, BIAS=1, BN=0, RELU=0, full_range=True),
        linear(c, rng=np.random.default_rng(12), NIN=24, OB=2, NB=3, BIAS=2, BN=0, RELU=1),
        fit(lambda **k: maxpool(c, **k), 8, 8),
        epilogue(c),
        epilogue(c, rng=np.random.default_rng(13), BIAS=0, BN=1, RELU=0),
        eltwise_add(c),
        eltwise_add(c, rng=np.random.default_rng(14), RELU=1),
    ]


def bench_set(config=None):
    """Larger problems for ``tsoc bench pcore`` (steady state dominates)."""
    c = config or SoCConfig()
    return [
        convolution(c, H=8, W=8, CIN=16, COUT=8, NPIX=2, BN=0, RELU=1),
        linear(c, NIN=48, OB=1, NB=1, BN=0),
        linear(c, NIN=24, OB=2, NB=4, BN=0),
        maxpool(c, H=8, W=8, C=32, NPIX=1),
        epilogue(c, C=32, NPIX=8),
        eltwise_add(c, N=160),
        mac_stream(c, N=1000),
        mac_stream(c, N=2000),
    ]
