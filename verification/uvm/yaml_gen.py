"""Constrained-random YAML models (cnn_instructions.md op sequences), valid by
construction and reproducible from a seed.

The generator walks a feature map through random ops, choosing each
parameter inside the rules sw/model checks (SIMD-width divisibility of
channels and features, windows that fit the padded input, maxpool padding
smaller than the kernel, bias/batch-norm shapes, memory limits), then
checks the result with ``sw.model``'s own API (load + compile): a model the
checker refuses is a generator bug and raises.

``random_model(seed)`` returns the YAML text; the same seed gives the same
text.  ``layerless_model(seed)`` gives a model without compute ops (streams
only) -- what the device runs today.
"""

import random
import tempfile
from pathlib import Path

import yaml

from soc.config import SoCConfig

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

    def epilogue(self, op, n_out, general_dims):
        r = self.rng
        op["nlin_f_type"] = r.choice(ACTS)
        if r.random() < 0.6:
            op["bias_en"] = True
            if r.random() < 0.3:
                op["repl_bias"] = False
                op["bias_name"] = self.const(general_dims, "col_first", 0.1)
            else:
                op["bias_name"] = self.const((n_out, 1), "col_first", 0.1)
        if r.random() < 0.4:
            op["batch_norm_en"] = True
            op["batch_name"] = self.const((n_out, 2), "col_first", 0.2, 0.5)


def _channels(rng, vw):
    return vw * rng.choice((1, 1, 2))


def _window(rng, h, w, maxpool):
    for _ in range(100):
        k = rng.choice((1, 2, 3))
        kh, kw = (k, k) if rng.random() < 0.8 else (rng.choice((1, 2, 3)), rng.choice((1, 2, 3)))
        s = rng.choice((1, 1, 2))
        sh, sw = s, s
        if rng.random() < 0.5:
            pad = [0, 0, 0, 0]
        elif rng.random() < 0.7:
            pad = [(kh - 1) // 2, (kh - 1) // 2, (kw - 1) // 2, (kw - 1) // 2]
        else:
            pad = [rng.randint(0, kh - 1), rng.randint(0, kh - 1), rng.randint(0, kw - 1), rng.randint(0, kw - 1)]
        if maxpool and (max(pad[:2]) >= kh or max(pad[2:]) >= kw):
            continue
        if h + pad[0] + pad[1] < kh or w + pad[2] + pad[3] < kw:
            continue
        ho = (h + pad[0] + pad[1] - kh) // sh + 1
        wo = (w + pad[2] + pad[3] - kw) // sw + 1
        return (kh, kw), (sh, sw), pad, (ho, wo)
    raise RuntimeError("no window fits")  # unreachable for h, w >= 1 (1x1, stride 1, no padding fits)


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
    from sw.model.compiler import compile_model
    from sw.model.frontend import load_model
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
