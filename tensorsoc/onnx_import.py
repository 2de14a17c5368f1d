"""`tsoc model import`: a trained ONNX network to the project's YAML model.

The graph must be a chain of layers from one input (N, C, H, W) or (N, F) to
one output (N, K).  What each ONNX op becomes:

| ONNX | YAML |
|---|---|
| Conv (+ its bias) | TENS_CONV, weights (KH, KW, C_in, C_out), bias replicated |
| Gemm, MatMul (+ an Add of a constant: the bias) | TENS_LIN, weights (n_out, n_in) |
| BatchNormalization after a Conv/Gemm/MatMul | folded into its weights and bias |
| Relu, Tanh after a Conv/Gemm/MatMul (or after the MaxPool that follows one: max commutes with both) | its activation |
| MaxPool | TENS_MAXPOOL |
| Flatten, Reshape to (N, F) | nothing: the next TENS_LIN reads (H, W, C) flattened, its weight columns permuted from C-H-W order |
| Identity, Dropout | nothing (inference) |

Layout: ONNX's NCHW feature maps become (H, W, C) col_first tensors.
Channels, features and outputs are padded to a multiple of the vector width
VW with zero weights and biases (the padded lanes stay 0 through every layer):
a 1-channel image becomes (H, W, VW) with ``res_stream_padding: VW-1`` (the
host still sends one value per pixel), 10 classes 16 outputs of which the
model's ``io: output_count`` says 10 are real (the host drops the rest).
Constants go to ``.npy`` files beside the YAML (``h2c_data_source:
DIR/name.npy``).  ``frac_bits`` is chosen by calibration: every candidate
format is run in the golden model over the calibration samples and the one
with the smallest output error wins (docs/models.md, "Importing ONNX").

Anything else -- another op type, an attribute value the hardware does not
have (group, dilation, ceil_mode, ...), a branch, a shape -- is an
:class:`OnnxImportError` naming the node, its op type and what is supported.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model import dataset as D
from tensorsoc.verification.golden import dataset as GD
from tensorsoc.sw.model.frontend import DEFAULT_FRAC_BITS, parse_model
from tensorsoc.sw.model.yamlsrc import ModelError

SUPPORTED = ("Conv, Gemm, MatMul (+ Add of a constant bias), BatchNormalization (after Conv/Gemm/MatMul), "
             "Relu, Tanh, MaxPool, Flatten, Reshape (to [N, features]), Identity, Dropout")
FRAC_CANDIDATES = range(2, 15)
TANH_MAX_FRAC = 12            # docs/models.md: the SPU tanh table needs f <= 12
FLOAT_TOLERANCE = 1e-4        # relative: the float model against onnx.reference
HEADROOM = 1 << 14            # calibration keeps every value below half the int16 range (one bit of headroom)


class OnnxImportError(ValueError):
    """What cannot be imported: ``file: node 'name' (OpType): message``."""

    def __init__(self, message, file=None, node=None):
        where = f"node '{node.name or node.output[0]}' ({node.op_type}): " if node is not None else ""
        self.message = f"{where}{message}"
        super().__init__(f"{file}: {self.message}" if file else self.message)


@dataclass
class Layer:
    kind: str                     # "conv", "lin", "maxpool"
    nodes: list                   # ONNX node names it came from
    w: np.ndarray = None          # conv (Cout, Cin, KH, KW), lin (n_out, n_in) in ONNX order
    b: np.ndarray = None
    act: str = "identity"
    kernel: tuple = (1, 1)
    stride: tuple = (1, 1)
    pad: tuple = (0, 0, 0, 0)     # top, bottom, left, right
    in_shape: tuple = None        # ("chw", C, H, W) or ("vec", F, origin (C, H, W) or None)
    out_shape: tuple = None


@dataclass
class Network:
    """The chain of layers read from the graph (real sizes, ONNX layouts)."""
    file: str
    input_name: str
    input_shape: tuple            # ("chw", C, H, W) or ("vec", F, None)
    output_name: str
    layers: list = field(default_factory=list)
    model: object = None          # the onnx ModelProto


def _attrs(node):
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _dims(value_info):
    t = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]


def read_onnx(path):
    """The ONNX file, checked (onnx.checker) and shape-inferred."""
    import onnx
    from google.protobuf.message import DecodeError
    path = Path(path)
    if not path.is_file():
        raise OnnxImportError(f"no such file: {path}")
    try:
        model = onnx.load(str(path))
    except (DecodeError, ValueError, OSError, RuntimeError) as e:
        raise OnnxImportError(f"not a readable ONNX model ({type(e).__name__}: {e})", path) from None
    try:
        onnx.checker.check_model(model)
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, ValueError, RuntimeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OnnxImportError(f"the ONNX checker rejects the model: {first}", path) from None
    return model


def parse_network(model, file="<onnx>"):
    """The chain of layers of an ONNX ModelProto, or OnnxImportError."""
    from onnx import numpy_helper
    g = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes = []
    for node in g.node:
        if node.op_type == "Constant":
            a = _attrs(node)
            if "value" not in a:
                raise OnnxImportError("only a Constant with a 'value' tensor is supported", file, node)
            consts[node.output[0]] = numpy_helper.to_array(a["value"])
        else:
            nodes.append(node)
    inputs = [i for i in g.input if i.name not in consts]
    if len(inputs) != 1:
        raise OnnxImportError(f"the graph has {len(inputs)} data inputs ({', '.join(i.name for i in inputs)}); "
                              "the importer takes exactly one", file)
    if len(g.output) != 1:
        raise OnnxImportError(f"the graph has {len(g.output)} outputs; the importer takes exactly one", file)
    inp = inputs[0]
    dims = _dims(inp)
    if dims is None or len(dims) not in (2, 4) or any(d is None for d in dims[1:]) or dims[0] not in (None, 1):
        raise OnnxImportError(f"input '{inp.name}' has shape {dims}; expected [N, C, H, W] or [N, features] "
                              "with N = 1 or symbolic and the other sizes fixed", file)
    shape = ("chw", *dims[1:]) if len(dims) == 4 else ("vec", dims[1], None)
    net = Network(str(file), inp.name, shape, g.output[0].name, model=model)
    readers = {}
    for node in nodes:
        for name in node.input:
            if name and name not in consts:
                readers.setdefault(name, []).append(node)
    cur = inp.name
    last = None                  # the layer whose activation/bias/BN may still be set
    pool_after = None            # a maxpool directly after `last`
    for node in nodes:
        data = [n for n in node.input if n and n not in consts]
        if data != [cur]:
            raise OnnxImportError(f"reads {data or 'only constants'}, not the previous layer's output '{cur}': the "
                                  "importer takes a chain of layers (no branches, no second data input)", file, node)
        if len(readers.get(cur, [])) > 1:
            others = ", ".join(f"'{n.name}'" for n in readers[cur])
            raise OnnxImportError(f"'{cur}' is read by several nodes ({others}): the importer takes a chain of "
                                  "layers without branches", file, node)
        op = node.op_type
        a = _attrs(node)
        if op == "Conv":
            last, pool_after = _conv(node, a, consts, shape, file), None
            net.layers.append(last)
        elif op in ("Gemm", "MatMul"):
            last, pool_after = _linear(node, a, consts, shape, file), None
            net.layers.append(last)
        elif op == "Add":
            _bias_add(node, consts, last, pool_after, net, file)
        elif op == "BatchNormalization":
            _batch_norm(node, a, consts, last, pool_after, net, file)
        elif op in ("Relu", "Tanh"):
            # max commutes with ReLU and tanh (both monotonic): after conv -> maxpool
            # the activation still belongs to the conv.
            if last is None or last.act != "identity" or not (net.layers[-1] is last or net.layers[-1] is pool_after):
                raise OnnxImportError(f"{op} must follow a Conv, Gemm or MatMul (or the MaxPool right after one) "
                                      "that has no activation yet", file, node)
            last.act = op.lower()
        elif op == "MaxPool":
            pool = _maxpool(node, a, shape, file)
            if last is not None and net.layers[-1] is last:
                pool_after = pool
            else:
                last = pool_after = None
            net.layers.append(pool)
        elif op in ("Flatten", "Reshape"):
            shape = _flatten(node, a, consts, shape, file)
            last, pool_after = (None, None) if shape[2] is not None else (last, pool_after)
            cur = node.output[0]
            continue
        elif op in ("Identity", "Dropout"):
            if op == "Dropout" and len([o for o in node.output if o]) > 1 and node.output[1] in readers:
                raise OnnxImportError("the Dropout mask output is used; only the data output is supported", file,
                                      node)
        else:
            hint = (" (a final Softmax does not change the argmax: export the network without it, its logits)"
                    if op in ("Softmax", "LogSoftmax") else "")
            raise OnnxImportError(f"op type {op} is not supported{hint}; supported: {SUPPORTED}", file, node)
        if op not in ("Identity", "Dropout", "Add", "BatchNormalization", "Relu", "Tanh"):
            shape = net.layers[-1].out_shape
        cur = node.output[0]
    if cur != net.output_name:
        raise OnnxImportError(f"the graph's output '{net.output_name}' is not the end of the layer chain ('{cur}')",
                              file)
    if shape[0] != "vec":
        raise OnnxImportError(f"the output '{cur}' is a {shape[1]}x{shape[2]}x{shape[3]} feature map; the importer "
                              "takes networks that end in a vector [N, K] (Flatten, Gemm/MatMul)", file)
    if not any(l.kind in ("conv", "lin") for l in net.layers):
        raise OnnxImportError("the graph has no Conv, Gemm or MatMul: nothing to run", file)
    return net


def _const(node, consts, i, what, file):
    if len(node.input) <= i or not node.input[i]:
        return None
    if node.input[i] not in consts:
        raise OnnxImportError(f"{what} '{node.input[i]}' must be a constant (an initializer or a Constant node)",
                              file, node)
    return np.asarray(consts[node.input[i]], dtype=np.float64)


def _ints(a, key, n, default):
    v = a.get(key, default)
    return tuple(int(x) for x in v) if v is not None else None


def _pads(node, a, hw, kernel, stride, file):
    """(top, bottom, left, right) from ONNX pads / auto_pad."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("NOTSET", ""):
        p = _ints(a, "pads", 4, [0, 0, 0, 0])
        if len(p) != 4 or min(p) < 0:
            raise OnnxImportError(f"pads {list(p)}: expected 4 values >= 0 [top, left, bottom, right]", file, node)
        return (p[0], p[2], p[1], p[3])
    if auto == "VALID":
        return (0, 0, 0, 0)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for n, k, s in zip(hw, kernel, stride):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if auto == "SAME_UPPER" else (big, small))
        return (out[0][0], out[0][1], out[1][0], out[1][1])
    raise OnnxImportError(f"auto_pad {auto!r} is not supported; supported: NOTSET, VALID, SAME_UPPER, SAME_LOWER",
                          file, node)


def _window_attrs(node, a, shape, kernel, file, what):
    if shape[0] != "chw":
        raise OnnxImportError(f"{what} needs a feature map [N, C, H, W], its input is a vector of {shape[1]}", file,
                              node)
    if len(kernel) != 2:
        raise OnnxImportError(f"kernel_shape {list(kernel)}: only 2-D windows are supported", file, node)
    if any(d != 1 for d in _ints(a, "dilations", 2, [1, 1])):
        raise OnnxImportError(f"dilations {list(a['dilations'])} are not supported; supported: dilations 1", file,
                              node)
    stride = _ints(a, "strides", 2, [1, 1])
    if len(stride) != 2 or min(stride) < 1:
        raise OnnxImportError(f"strides {list(stride)}: expected 2 values >= 1", file, node)
    pad = _pads(node, a, shape[2:], kernel, stride, file)
    h, w = shape[2], shape[3]
    ho = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    wo = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    if ho < 1 or wo < 1:
        raise OnnxImportError(f"the {kernel[0]}x{kernel[1]} window does not fit the {h}x{w} input with pads "
                              f"{list(pad)}", file, node)
    return stride, pad, ho, wo


def _conv(node, a, consts, shape, file):
    w = _const(node, consts, 1, "the weight input", file)
    if a.get("group", 1) != 1:
        raise OnnxImportError(f"group = {a['group']} is not supported; supported: group = 1 (no grouped or depthwise "
                              "convolution)", file, node)
    if w is None or w.ndim != 4:
        raise OnnxImportError(f"weights of shape {list(w.shape) if w is not None else None}: only 2-D convolutions "
                              "(weights [C_out, C_in, KH, KW]) are supported", file, node)
    kernel = tuple(w.shape[2:])
    if "kernel_shape" in a and tuple(a["kernel_shape"]) != kernel:
        raise OnnxImportError(f"kernel_shape {list(a['kernel_shape'])} differs from the weights' {list(kernel)}",
                              file, node)
    stride, pad, ho, wo = _window_attrs(node, a, shape, kernel, file, "Conv")
    if w.shape[1] != shape[1]:
        raise OnnxImportError(f"weights take {w.shape[1]} input channels, the input has {shape[1]}", file, node)
    b = _const(node, consts, 2, "the bias input", file)
    b = np.zeros(w.shape[0]) if b is None else b.reshape(-1)
    if b.size != w.shape[0]:
        raise OnnxImportError(f"bias of {b.size} values for {w.shape[0]} output channels", file, node)
    return Layer("conv", [node.name], w, b, kernel=kernel, stride=stride, pad=pad, in_shape=shape,
                 out_shape=("chw", w.shape[0], ho, wo))


def _linear(node, a, consts, shape, file):
    if shape[0] != "vec":
        raise OnnxImportError(f"{node.op_type} needs a vector input [N, features]; its input is a "
                              f"{shape[1]}x{shape[2]}x{shape[3]} feature map (add a Flatten before it)", file, node)
    if node.op_type == "Gemm":
        if a.get("transA", 0):
            raise OnnxImportError("transA = 1 is not supported; supported: transA = 0 (the data input is [N, K])",
                                  file, node)
        wb = _const(node, consts, 1, "the weight input B", file)
        if wb is None or wb.ndim != 2:
            raise OnnxImportError("the weight input B must be a 2-D constant", file, node)
        w = (wb if a.get("transB", 0) else wb.T) * float(a.get("alpha", 1.0))
        c = _const(node, consts, 2, "the bias input C", file)
        b = np.zeros(w.shape[0]) if c is None else np.broadcast_to(c * float(a.get("beta", 1.0)),
                                                                   (1, w.shape[0])).reshape(-1)
        if c is not None and c.size not in (1, w.shape[0]):
            raise OnnxImportError(f"bias C of shape {list(c.shape)}: expected {w.shape[0]} values (or one)", file,
                                  node)
    else:
        wb = _const(node, consts, 1, "the second input of MatMul", file)
        if wb is None or wb.ndim != 2:
            raise OnnxImportError("the second input of MatMul must be a 2-D constant [features, outputs]", file,
                                  node)
        w, b = wb.T, np.zeros(wb.shape[1])
    if w.shape[1] != shape[1]:
        raise OnnxImportError(f"weights take {w.shape[1]} inputs, the input has {shape[1]} features", file, node)
    return Layer("lin", [node.name], w, np.array(b, dtype=np.float64), in_shape=shape,
                 out_shape=("vec", w.shape[0], None))


def _fresh(last, pool_after, net):
    """The conv/linear layer an Add or BatchNormalization can fold into."""
    return last if last is not None and last.kind in ("conv", "lin") and pool_after is None \
        and net.layers and net.layers[-1] is last and last.act == "identity" else None


def _bias_add(node, consts, last, pool_after, net, file):
    target = _fresh(last, pool_after, net)
    c = next((np.asarray(consts[n], dtype=np.float64) for n in node.input if n in consts), None)
    if target is None or c is None:
        raise OnnxImportError("Add is supported only as the bias of the Conv/Gemm/MatMul right before it (a "
                              "constant), before any activation", file, node)
    n = target.w.shape[0]
    if target.kind == "conv" and c.size == n and c.ndim >= 3:
        c = c.reshape(-1)
    if c.size not in (1, n) or (c.ndim >= 2 and c.shape[-1] != n and c.size != 1 and target.kind == "lin"):
        raise OnnxImportError(f"a bias of shape {list(c.shape)} for {n} outputs: expected {n} values (one per "
                              "output channel) or one", file, node)
    target.b = target.b + np.broadcast_to(c.reshape(-1), (n,))
    target.nodes.append(node.name)


def _batch_norm(node, a, consts, last, pool_after, net, file):
    target = _fresh(last, pool_after, net)
    if target is None:
        raise OnnxImportError("BatchNormalization is supported only right after a Conv, Gemm or MatMul (it is "
                              "folded into its weights and bias)", file, node)
    if a.get("training_mode", 0):
        raise OnnxImportError("training_mode = 1 is not supported (inference only)", file, node)
    gamma, beta, mean, var = (_const(node, consts, i, what, file)
                              for i, what in ((1, "scale"), (2, "B"), (3, "mean"), (4, "var")))
    n = target.w.shape[0]
    if any(v is None or v.size != n for v in (gamma, beta, mean, var)):
        raise OnnxImportError(f"scale, B, mean and var must hold {n} values (one per output channel)", file, node)
    s = gamma.reshape(-1) / np.sqrt(var.reshape(-1) + float(a.get("epsilon", 1e-5)))
    target.w = target.w * s.reshape((-1,) + (1,) * (target.w.ndim - 1))
    target.b = (target.b - mean.reshape(-1)) * s + beta.reshape(-1)
    target.nodes.append(node.name)


def _maxpool(node, a, shape, file):
    if len([o for o in node.output if o]) > 1:
        raise OnnxImportError("the Indices output is not supported", file, node)
    if a.get("ceil_mode", 0):
        raise OnnxImportError("ceil_mode = 1 is not supported; supported: ceil_mode = 0", file, node)
    if a.get("storage_order", 0):
        raise OnnxImportError("storage_order = 1 is not supported", file, node)
    kernel = _ints(a, "kernel_shape", 2, None)
    if kernel is None:
        raise OnnxImportError("kernel_shape is required", file, node)
    stride, pad, ho, wo = _window_attrs(node, a, shape, kernel, file, "MaxPool")
    if max(pad[0], pad[1]) >= kernel[0] or max(pad[2], pad[3]) >= kernel[1]:
        raise OnnxImportError(f"pads {list(pad)} must be smaller than the {kernel[0]}x{kernel[1]} kernel on each side",
                              file, node)
    return Layer("maxpool", [node.name], kernel=kernel, stride=stride, pad=pad, in_shape=shape,
                 out_shape=("chw", shape[1], ho, wo))


def _flatten(node, a, consts, shape, file):
    n = shape[1] if shape[0] == "vec" else shape[1] * shape[2] * shape[3]
    if node.op_type == "Flatten":
        if a.get("axis", 1) != 1:
            raise OnnxImportError(f"axis = {a['axis']} is not supported; supported: axis = 1 ([N, C, H, W] -> "
                                  "[N, C*H*W])", file, node)
    else:
        target = _const(node, consts, 1, "the shape input", file)
        t = [int(v) for v in target.reshape(-1)] if target is not None else []
        ok = len(t) == 2 and t[0] in (-1, 0, 1) and t[1] in (-1, n) and not (t[0] == -1 and t[1] == -1)
        if not ok:
            raise OnnxImportError(f"shape {t}: only a reshape to [N, features] ({n} features) is supported", file,
                                  node)
    if shape[0] == "vec":
        return shape
    return ("vec", n, shape[1:])


# -- the YAML model ---------------------------------------------------------------

def _ceil(n, vw):
    return -(-n // vw) * vw


def _name(text):
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or "t"


@dataclass
class Plan:
    """The network laid out for the SoC: padded tensors and their constants."""
    consts: dict = field(default_factory=dict)     # name -> (dims, layout, stream-order float array)
    ops: list = field(default_factory=list)        # YAML op dicts of the inference, in order
    input: dict = None                             # the input stream op
    io: dict = None


def plan_network(net, vw):
    """Pads every channel / feature count to VW and converts the constants."""
    p = Plan()
    s = net.input_shape
    if s[0] == "chw":
        c, h, w = s[1:]
        cp = _ceil(c, vw)
        dims, pad = [h, w, cp], (cp - c if cp == vw else 0)
        io = {"sample_shape": [c, h, w], "sample_layout": "chw"}
    else:
        f = s[1]
        fp = _ceil(f, vw)
        dims, pad = [fp, 1], (fp - f if fp == vw else 0)
        io = {"sample_shape": [f], "sample_layout": "features"}
    cur = "input"
    p.input = {"tens_trans_type": "TENS_STREAM", "res_name": cur, "layout": "col_first", "res_dim": dims,
               "res_stream_padding": pad}
    cur_dims = dims
    for i, lay in enumerate(net.layers):
        tag = f"{lay.kind}{i}"
        res = f"{tag}_out"
        if lay.kind == "maxpool":
            op = {"tens_trans_type": "TENS_MAXPOOL", "src_name": cur, "kern_size": list(lay.kernel),
                  "stride": list(lay.stride), "padding": list(lay.pad), "res_name": res}
            cur_dims = [lay.out_shape[2], lay.out_shape[3], cur_dims[2]]
        elif lay.kind == "conv":
            co, ci, kh, kw = lay.w.shape
            cip, cop = cur_dims[2], _ceil(co, vw)
            w = np.zeros((kh, kw, cip, cop))
            w[:, :, :ci, :co] = lay.w.transpose(2, 3, 1, 0)
            b = np.zeros((cop, 1))
            b[:co, 0] = lay.b
            p.consts[f"{tag}_w"] = ([kh, kw, cip, cop], "row_first", L.to_memory(w, "row_first"))
            p.consts[f"{tag}_b"] = ([cop, 1], "col_first", L.to_memory(b, "col_first"))
            op = {"tens_trans_type": "TENS_CONV", "nlin_f_type": f"NLIN_F_{lay.act.upper()}", "bias_en": True,
                  "repl_bias": True, "src_a_name": f"{tag}_w", "src_b_name": cur, "bias_name": f"{tag}_b",
                  "stride": list(lay.stride), "padding": list(lay.pad), "res_name": res}
            cur_dims = [lay.out_shape[2], lay.out_shape[3], cop]
        else:
            no, ni = lay.w.shape
            nop = _ceil(no, vw)
            n_in = int(np.prod(cur_dims)) if len(cur_dims) == 3 else cur_dims[0]
            w = np.zeros((nop, n_in))
            origin = lay.in_shape[2]
            if origin is not None:           # flattened (C, H, W): ONNX column c*H*W + y*W + x
                c, h, wd = origin
                cp = cur_dims[2]
                cc, yy, xx = np.meshgrid(np.arange(c), np.arange(h), np.arange(wd), indexing="ij")
                cols = ((yy * wd + xx) * cp + cc).reshape(-1)
                w[:no, cols] = lay.w
            else:
                w[:no, :ni] = lay.w
            b = np.zeros((nop, 1))
            b[:no, 0] = lay.b
            p.consts[f"{tag}_w"] = ([nop, n_in], "row_first", L.to_memory(w, "row_first"))
            p.consts[f"{tag}_b"] = ([nop, 1], "col_first", L.to_memory(b, "col_first"))
            op = {"tens_trans_type": "TENS_LIN", "nlin_f_type": f"NLIN_F_{lay.act.upper()}", "bias_en": True,
                  "repl_bias": True, "src_a_name": f"{tag}_w", "src_b_name": cur, "bias_name": f"{tag}_b",
                  "res_name": res}
            cur_dims = [nop, 1]
        op["dealloc"] = [cur]
        p.ops.append(op)
        cur = res
    n_out = net.layers and net.layers[-1].out_shape[1]
    out_pad = cur_dims[0] - n_out if cur_dims[0] == vw else 0
    p.ops.append({"tens_trans_type": "TENS_STREAM", "src_name": cur, "src_stream_padding": out_pad,
                  "dealloc": [cur]})
    p.io = {"input": "input", **io, "output": cur, "output_count": n_out}
    return p


def _flow(d):
    def v(x):
        if isinstance(x, list):
            return "[" + ", ".join(v(y) for y in x) + "]"
        if isinstance(x, bool):
            return "True" if x else "False"
        return str(x)
    return "{" + ", ".join(f"{k}: {v(x)}" for k, x in d.items() if not (k.endswith("padding") and x == 0
                                                                      and "stream" in k)) + "}"


def yaml_text(net, plan, frac, data_dir, input_source, note=""):
    """The YAML model (the constants' .npy files are written by the caller)."""
    lines = [f"# Imported from {Path(net.file).name} by `tsoc model import`{note}.",
             "# Layout NCHW -> (H, W, C) col_first; channels, features and outputs padded to the vector",
             "# width with zeros; constants in .npy files (stream order); docs/models.md, 'Importing ONNX'.",
             f"description: {Path(net.file).name}, {len(net.layers)} layers imported from ONNX",
             f"frac_bits: {frac}",
             "io:"]
    lines += [f"  {k}: {v if not isinstance(v, list) else '[' + ', '.join(map(str, v)) + ']'}"
              for k, v in plan.io.items()]
    lines += ["tens_trans_seq:", "  - name: load_weights", "    description: constants (model image, WModel)",
              "    predecessor: []", "    tens_trans:"]
    for name, (dims, layout, _) in plan.consts.items():
        lines.append("      - " + _flow({"tens_trans_type": "TENS_STREAM", "res_name": name, "layout": layout,
                                         "res_dim": dims, "h2c_data_source": f"{data_dir}/{name}.npy"}))
    lines += ["  - name: inference", "    description: one sample in (WTensor), the outputs back (RTensor)",
              "    predecessor: [load_weights]", "    tens_trans:"]
    lines.append("      - " + _flow({**plan.input, "h2c_data_source": input_source}))
    for op in plan.ops:
        lines.append("      - " + _flow(op))
    return "\n".join(lines) + "\n"


def reference_outputs(net, x):
    """onnx.reference.ReferenceEvaluator on samples ``x`` (N, *sample shape)."""
    from onnx.reference import ReferenceEvaluator
    ev = ReferenceEvaluator(net.model)
    dims = _dims(net.model.graph.input[[i.name for i in net.model.graph.input].index(net.input_name)])
    xs = np.asarray(x, dtype=np.float32)
    if dims[0] == 1:
        return np.concatenate([ev.run(None, {net.input_name: xs[i:i + 1]})[0] for i in range(len(xs))])
    return ev.run(None, {net.input_name: xs})[0]


@dataclass
class ImportResult:
    yaml_path: Path
    model: object                 # the checked sw.model.frontend.Model
    frac_bits: int
    candidates: list              # per frac_bits tried: {"frac_bits", "max_abs", "rms", "agreement", "saturated"}
    layers: list                  # per layer float-vs-fixed error at the chosen format (dataset.golden)
    reference_error: float        # max |float model - onnx.reference| over the checked samples
    reference_scale: float
    checked_samples: int
    calibrated: bool


def import_onnx(onnx_path, out_yaml, config, calibrate=None, frac_bits=None, n_check=16, seed=0):
    """ONNX file -> YAML model + .npy constants; ``calibrate``: samples
    (N, *sample shape) that choose frac_bits (else ``frac_bits`` or 8).  The
    float model of the result is checked against onnx.reference."""
    net = parse_network(read_onnx(onnx_path), onnx_path)
    plan = plan_network(net, config.vw)
    out_yaml = Path(out_yaml)
    data_dir = out_yaml.parent / f"{out_yaml.stem}_data"
    data_dir.mkdir(parents=True, exist_ok=True)
    rel = data_dir.name
    for name, (_, _, values) in plan.consts.items():
        np.save(data_dir / f"{name}.npy", np.asarray(values, dtype=np.float32))
    sample_shape = tuple(plan.io["sample_shape"])
    if calibrate is not None:
        xs = np.asarray(calibrate, dtype=np.float64)
        if xs.ndim == len(sample_shape):
            xs = xs[None]
        if xs.shape[1:] != sample_shape or len(xs) == 0:
            raise OnnxImportError(f"--calibrate: samples of shape {list(xs.shape)}; the network takes "
                                  f"[N, {', '.join(map(str, sample_shape))}]", onnx_path)
    else:
        xs = np.random.default_rng(seed).normal(size=(n_check,) + sample_shape)
    has_tanh = any(l.act == "tanh" for l in net.layers)

    def load(frac, source):
        text = yaml_text(net, plan, frac, rel, source, "")
        try:
            return text, parse_model(text, str(out_yaml), out_yaml.parent, config)
        except ModelError as e:       # an importer bug: the YAML it wrote breaks a rule
            raise OnnxImportError(f"the generated model breaks a rule: {e}", onnx_path) from None

    _, m = load(DEFAULT_FRAC_BITS, "rand_gauss")
    first = D.samples(m, xs[:1])[0]
    np.save(data_dir / "input.npy", L.device_to_host(first, m.io.tensor.layout, m.io.input.h2c_padding)
            .astype(np.float32))
    source = f"{rel}/input.npy"
    candidates = []
    if calibrate is not None:
        for f in FRAC_CANDIDATES:
            if has_tanh and f > TANH_MAX_FRAC:
                continue
            _, m = load(f, source)
            r = GD.golden(m, xs, layers=True)
            peak = max([int(np.max(np.abs(t.raw))) for t in m.tensors if t.raw is not None]
                       + [l["peak"] for l in r["layers"]] + [int(np.max(np.abs(np.round(xs * (1 << f)))))])
            candidates.append({"frac_bits": f, "max_abs": r["error"]["max_abs"], "rms": r["error"]["rms"],
                               "agreement": r["agreement"], "saturated": sum(l["saturated"] for l in r["layers"]),
                               "peak": peak, "headroom": peak < HEADROOM})
        pool = [c for c in candidates if c["headroom"]] or candidates
        frac = min(pool, key=lambda c: (c["rms"], c["frac_bits"]))["frac_bits"]
    else:
        frac = DEFAULT_FRAC_BITS if frac_bits is None else frac_bits
    text, m = load(frac, source)
    res = GD.golden(m, xs, layers=True)
    check = xs[:max(n_check, min(len(xs), 64))]
    ref = reference_outputs(net, check).reshape(len(check), -1)
    ours = GD.golden(m, check, layers=False)["float"]
    scale = float(max(1.0, np.max(np.abs(ref))))
    diff = float(np.max(np.abs(ours - ref))) if ref.shape == ours.shape else float("inf")
    if not diff <= FLOAT_TOLERANCE * scale:
        raise OnnxImportError(f"the imported model's float outputs differ from onnx.reference by {diff:g} (shapes "
                              f"{list(ours.shape)} and {list(ref.shape)}): an importer bug, please report it",
                              onnx_path)
    note = (f"; frac_bits {frac} chosen by calibration on {len(xs)} sample(s)" if calibrate is not None
            else f"; frac_bits {frac} (not calibrated)")
    out_yaml.write_text(yaml_text(net, plan, frac, rel, source, note))
    return ImportResult(out_yaml, m, frac, candidates, res["layers"], diff, scale, len(check),
                        calibrate is not None)
