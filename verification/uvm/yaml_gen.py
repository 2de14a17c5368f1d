"""Constrained-random YAML models (cnn_instructions.md op sequences), valid by
construction and reproducible from a seed.

The generator walks a feature map through random ops, choosing each
parameter inside the rules sw/model checks (SIMD-width divisibility of
channels and features, windows that fit the padded input, maxpool padding
smaller than the kernel, bias/batch-norm shapes, memory limits), then
checks the result with ``tensorsoc.sw.model``'s own API (load + compile): a model the
checker refuses is a generator bug and raises.

``random_model(seed)`` returns the YAML text; the same seed gives the same
text.  ``layerless_model(seed)`` gives a model without compute ops (streams
only) -- what the device runs today.
"""

import random
import tempfile
from pathlib import Path

import yaml

from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import load_model

ACTS = ("NLIN_F_IDENTITY", "NLIN_F_RELU", "NLIN_F_TANH")


class _Builder:
    def __init__(self, rng, vw):
        self.rng, self.vw = rng, vw
        self.load, self.infer = [], []
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, dims, layout, std=0.2, mean=0.0):
        n = self.name("c")
        self.load.append({"tens_trans_type": "TENS_STREAM", "res_name": n, "layout": layout,
                          "res_dim": list(dims), "h2c_data_source": f"rand_gauss({mean}, {std})"})
        return n

    def epilogue(self, op, n_out, general_dims, act=None, epilogue=None):
        """Activation and bias / batch norm of a conv or lin op: random, or
        ``act`` (coverage.ACTS: identity, relu, tanh) and ``epilogue`` (a
        coverage.EPILOGUES name)."""
        r = self.rng
        op["nlin_f_type"] = f"NLIN_F_{act.upper()}" if act else r.choice(ACTS)
        if epilogue is None:
            bias = "" if r.random() >= 0.6 else ("bias_general" if r.random() < 0.3 else "bias")
            bn = r.random() < 0.4
        else:
            bias = epilogue.split("+")[0] if epilogue.startswith("bias") else ""
            bn = "batch_norm" in epilogue
        if bias:
            op["bias_en"] = True
            if bias == "bias_general":
                op["repl_bias"] = False
                op["bias_name"] = self.const(general_dims, "col_first", 0.1)
            else:
                op["bias_name"] = self.const((n_out, 1), "col_first", 0.1)
        if bn:
            op["batch_norm_en"] = True
            op["batch_name"] = self.const((n_out, 2), "col_first", 0.2, 0.5)


def _channels(rng, vw):
    return vw * rng.choice((1, 1, 2))


# Concrete shapes of the coverage classes (coverage.py KERNELS, STRIDES,
# PADDINGS): "other" windows are non-square or larger, "other" strides 3 or
# non-square.
KERNEL_OF = {"1x1": [(1, 1)], "2x2": [(2, 2)], "3x3": [(3, 3)],
             "other": [(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2)]}
STRIDE_OF = {"1x1": [(1, 1)], "2x2": [(2, 2)], "other": [(3, 3), (1, 2), (2, 1), (3, 1), (1, 3)]}


def _padding(rng, kh, kw, cls, maxpool):
    """Padding (top, bottom, left, right) of class ``cls`` (none, symmetric,
    asymmetric), or None when the window cannot have it (maxpool padding
    must stay below the kernel on each side)."""
    lim_h, lim_w = (kh - 1, kw - 1) if maxpool else (max(kh - 1, 1), max(kw - 1, 1))
    if cls == "none":
        return [0, 0, 0, 0]
    for _ in range(50):
        t, b, l, r = (rng.randint(0, lim_h), rng.randint(0, lim_h), rng.randint(0, lim_w), rng.randint(0, lim_w))
        if cls == "symmetric":
            b, r = t, l
        if not any((t, b, l, r)):
            continue
        if (cls == "symmetric") == (t == b and l == r):
            return [t, b, l, r]
    return None


def _window(rng, h, w, maxpool, target=None):
    """Kernel, stride, padding and output size of a window on an h x w map.
    ``target``: (kernel class, stride class, padding class) to produce;
    None: a random one (mostly the common 1x1/2x2/3x3 cases)."""
    for _ in range(100):
        if target:
            kcls, scls, pcls = target
        else:
            kcls = rng.choice(("1x1", "2x2", "3x3", "3x3")) if rng.random() < 0.8 else "other"
            scls = rng.choice(("1x1", "1x1", "2x2")) if rng.random() < 0.9 else "other"
            pcls = "none" if rng.random() < 0.5 else ("symmetric" if rng.random() < 0.7 else "asymmetric")
        kh, kw = rng.choice(KERNEL_OF[kcls])
        sh, sw = rng.choice(STRIDE_OF[scls])
        pad = _padding(rng, kh, kw, pcls, maxpool)
        if pad is None:
            if target:
                raise ValueError(f"no {'maxpool' if maxpool else 'conv'} window of class {target}")
            continue
        if h + pad[0] + pad[1] < kh or w + pad[2] + pad[3] < kw:
            continue
        ho = (h + pad[0] + pad[1] - kh) // sh + 1
        wo = (w + pad[2] + pad[3] - kw) // sw + 1
        return (kh, kw), (sh, sw), pad, (ho, wo)
    raise RuntimeError(f"no window fits a {h}x{w} map" + (f" for {target}" if target else ""))


def _build(rng, vw, max_layers):
    b = _Builder(rng, vw)
    x = b.name("x")
    if rng.random() < 0.7:            # a feature map: conv / maxpool layers, then maybe linear
        h, w, c = rng.randint(2, 6), rng.randint(2, 6), _channels(rng, vw)
        b.infer.append({"tens_trans_type": "TENS_STREAM", "res_name": x, "layout": "col_first",
                        "res_dim": [h, w, c], "h2c_data_source": "rand_gauss"})
        cur, dims = x, (h, w, c)
    else:                              # a batch of vectors: linear layers only
        n, nb = vw * rng.choice((1, 2, 4)), rng.randint(1, 3)
        b.infer.append({"tens_trans_type": "TENS_STREAM", "res_name": x, "layout": "col_first",
                        "res_dim": [n, nb], "h2c_data_source": "rand_gauss"})
        cur, dims = x, (n, nb)
    for _ in range(rng.randint(1, max_layers)):
        res = b.name("t")
        if len(dims) == 3:
            h, w, c = dims
            kind = rng.choice(("conv", "conv", "maxpool", "lin"))
            if kind == "lin" and h * w * c > 512:
                kind = "conv"
        else:
            kind = "lin"
        if kind == "conv":
            (kh, kw), (sh, sw), pad, (ho, wo) = _window(rng, h, w, False)
            cout = _channels(rng, vw)
            wt = b.const((kh, kw, c, cout), "row_first", 0.15)
            op = {"tens_trans_type": "TENS_CONV", "src_a_name": wt, "src_b_name": cur, "res_name": res,
                  "stride": [sh, sw], "padding": pad}
            b.epilogue(op, cout, (ho, wo, cout))
            new = (ho, wo, cout)
        elif kind == "maxpool":
            (kh, kw), (sh, sw), pad, (ho, wo) = _window(rng, h, w, True)
            op = {"tens_trans_type": "TENS_MAXPOOL", "src_name": cur, "res_name": res, "kern_size": [kh, kw],
                  "stride": [sh, sw], "padding": pad}
            new = (ho, wo, c)
        else:
            n_in = dims[0] * dims[1] * dims[2] if len(dims) == 3 else dims[0]
            nb = 1 if len(dims) == 3 else dims[1]
            n_out = vw * rng.choice((1, 2))
            wt = b.const((n_out, n_in), "row_first", 0.15)
            op = {"tens_trans_type": "TENS_LIN", "src_a_name": wt, "src_b_name": cur, "res_name": res}
            b.epilogue(op, n_out, (n_out, nb))
            new = (n_out, nb)
        op["dealloc"] = [cur]
        b.infer.append(op)
        cur, dims = res, new
    b.infer.append({"tens_trans_type": "TENS_STREAM", "src_name": cur, "dealloc": [cur]})
    return b


def _document(seed, b, description):
    seqs = []
    if b.load:
        seqs.append({"name": "load", "description": "constants (model image)", "tens_trans": b.load})
    infer = {"name": "infer", "description": "inference", "tens_trans": b.infer}
    if b.load:
        infer["predecessor"] = ["load"]
    seqs.append(infer)
    return {"description": description, "seed": seed, "tens_trans_seq": seqs}


def _dump(doc):
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)


def check(text, config=None):
    """Checks YAML text with sw.model's API (the same checks as `tsoc model
    check`); returns the Model.  Raises sw.model.yamlsrc.ModelError."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.yaml"
        path.write_text(text)
        model = load_model(path, config)
        compile_model(model)
    return model


def macs(model):
    """Multiply-accumulates of one inference (what the simulation pays for)."""
    total = 0
    for op in model.ops:
        if op.kind == "conv":
            total += op.res.elements * op.kernel[0] * op.kernel[1] * op.a.dims[2]
        elif op.kind == "lin":
            total += op.res.elements * op.a.dims[1]
        elif op.kind == "maxpool":
            total += op.res.elements * op.kernel[0] * op.kernel[1]
    return total


def random_model(seed, config=None, max_layers=4, max_macs=20000):
    """YAML text of a random valid model with compute layers, at most
    ``max_macs`` multiply-accumulates per inference (candidates over the
    budget are redrawn from the same seed, so the result stays
    reproducible)."""
    config = config or SoCConfig()
    for attempt in range(1000):
        rng = random.Random(f"tsoc-yaml-{seed}-{attempt}")
        b = _build(rng, config.vw, max_layers)
        text = f"# generated by verification/uvm/yaml_gen.py, seed {seed}\n" + _dump(
            _document(seed, b, f"random model, seed {seed}"))
        if macs(check(text, config)) <= max_macs:
            return text
    raise RuntimeError(f"no model of seed {seed} within {max_macs} MACs")


def sweep_model(seed, windows=(), epilogues=(), lin_layouts=(), config=None, size=(5, 5)):
    """YAML text of a model made to hit given coverage bins (coverage.py):
    one input feature map (``size`` x VW channels) read by one op per entry
    of ``windows`` -- (op, kernel class, stride class, padding class), op
    "conv" or "maxpool" -- each result streamed out; the conv ops take the
    (activation, epilogue) pairs of ``epilogues`` in turn, and one linear op
    per entry of ``lin_layouts`` ("2D": on a second input, a batch of
    vectors; "3D": on the flattened feature map) takes them from the end.  Shapes,
    activations and constants are random from ``seed``; the model is
    checked like random_model's."""
    config = config or SoCConfig()
    vw = config.vw
    rng = random.Random(f"tsoc-sweep-{seed}")
    b = _Builder(rng, vw)
    h, w = size
    x = b.name("x")
    b.infer.append({"tens_trans_type": "TENS_STREAM", "res_name": x, "layout": "col_first",
                    "res_dim": [h, w, vw], "h2c_data_source": "rand_gauss"})
    epis = list(epilogues)
    if lin_layouts and epis:               # the lin ops' pairs, from the end
        lin_epis, epis = epis[len(epis) - len(lin_layouts):], epis[:len(epis) - len(lin_layouts)]
    else:
        lin_epis = []
    outs = []
    for op_kind, *target in windows:
        (kh, kw), (sh, sw), pad, (ho, wo) = _window(rng, h, w, op_kind == "maxpool", tuple(target))
        res = b.name("t")
        if op_kind == "conv":
            wt = b.const((kh, kw, vw, vw), "row_first", 0.15)
            op = {"tens_trans_type": "TENS_CONV", "src_a_name": wt, "src_b_name": x, "res_name": res,
                  "stride": [sh, sw], "padding": pad}
            act, epi = epis.pop(0) if epis else (None, None)
            b.epilogue(op, vw, (ho, wo, vw), act, epi)
        else:
            op = {"tens_trans_type": "TENS_MAXPOOL", "src_name": x, "res_name": res, "kern_size": [kh, kw],
                  "stride": [sh, sw], "padding": pad}
        b.infer.append(op)
        outs.append(res)
    for layout in lin_layouts:
        if layout == "2D":
            v = b.name("v")
            n_in, nb = vw * rng.choice((1, 2)), rng.randint(1, 3)
            b.infer.append({"tens_trans_type": "TENS_STREAM", "res_name": v, "layout": "col_first",
                            "res_dim": [n_in, nb], "h2c_data_source": "rand_gauss"})
            src = v
        else:
            n_in, nb, src = h * w * vw, 1, x
        res = b.name("t")
        op = {"tens_trans_type": "TENS_LIN", "src_a_name": b.const((vw, n_in), "row_first", 0.15),
              "src_b_name": src, "res_name": res}
        act, epi = lin_epis.pop(0) if lin_epis else (None, None)
        b.epilogue(op, vw, (vw, nb), act, epi)
        b.infer.append(op)
        outs.append(res)
        if src != x:
            op["dealloc"] = [src]
    if not outs:
        raise ValueError("sweep_model: no op asked for")
    b.infer[-1].setdefault("dealloc", []).append(x)
    for res in outs:
        b.infer.append({"tens_trans_type": "TENS_STREAM", "src_name": res, "dealloc": [res]})
    text = f"# generated by verification/uvm/yaml_gen.py (coverage sweep), seed {seed}\n" + _dump(
        _document(seed, b, f"coverage sweep model, seed {seed}"))
    check(text, config)
    return text


def layerless_model(seed, config=None):
    """YAML text of a random valid model without compute ops: inputs
    streamed in, some streamed straight back out."""
    config = config or SoCConfig()
    rng = random.Random(f"tsoc-layerless-{seed}")
    vw = config.vw
    ops, names = [], []
    for i in range(rng.randint(1, 3)):
        n = f"x{i}"
        if rng.random() < 0.5:
            dims, lay = [vw * rng.randint(1, 4), rng.randint(1, 3)], rng.choice(("col_first", "row_first"))
            if lay == "row_first":
                dims = [rng.randint(1, 3), vw * rng.randint(1, 4)]
        else:
            dims, lay = [rng.randint(1, 4), rng.randint(1, 4), vw], "col_first"
        ops.append({"tens_trans_type": "TENS_STREAM", "res_name": n, "layout": lay, "res_dim": dims,
                    "h2c_data_source": rng.choice(("rand_gauss", "lin_index"))})
        names.append(n)
    # At least one tensor goes back out: a sequence of H2C streams only is a
    # load sequence (constants), not an inference (sw/model/frontend.py).
    back = [n for n in names if rng.random() < 0.6] or [rng.choice(names)]
    for n in back:
        ops.append({"tens_trans_type": "TENS_STREAM", "src_name": n, "dealloc": [n]})
    doc = {"description": f"layer-less model, seed {seed}", "seed": seed,
           "tens_trans_seq": [{"name": "infer", "tens_trans": ops}]}
    text = f"# generated by verification/uvm/yaml_gen.py, seed {seed}\n" + _dump(doc)
    check(text, config)
    return text
