"""Data sets through a model: the samples a user has (``X.npy``) to the bytes
the host sends, and what the host reads back to the values the network
really outputs.

A model's optional top-level ``io`` mapping (docs/models.md, "Data sets")
says how a sample of a data set maps onto the inference's input tensor and
which part of the output stream is real (the rest is the padding to the
vector width, added by ``tsoc model import``)::

    io:
      input: x               # H2C tensor of the inference (default: the only one)
      sample_shape: [1, 8, 8]
      sample_layout: chw     # chw | features | stream (default stream)
      output: scores         # C2H tensor (default: the last one)
      output_count: 10       # real values at the start of its stream (default: all)

* ``chw``: a sample is (C, H, W), channel first (ONNX, PyTorch); the input
  tensor is (H, W, C') col_first with C <= C': transposed, the channels past
  C zero.
* ``features``: a sample is (F,); the input tensor is (F', 1) col_first with
  F <= F', the features past F zero.
* ``stream``: a sample holds the tensor's host stream (memory order, padded
  lanes left out), in any shape with that many values.

Without ``io`` a model with one input and its last output reads data sets in
``stream`` order and reports every output value.
"""

from dataclasses import dataclass

import numpy as np

from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.yamlsrc import ModelError, YMap

LAYOUTS = ("stream", "chw", "features")
IO_FIELDS = ("input", "sample_shape", "sample_layout", "output", "output_count")


@dataclass
class IO:
    input: object                 # the H2C stream op of the inference
    output: object                # the C2H stream op
    sample_shape: tuple
    sample_layout: str
    output_count: int

    @property
    def tensor(self):
        return self.input.h2c


class DatasetError(ValueError):
    """A data set that does not fit the model: what was given, what was expected."""


def parse_io(model, node, file):
    """The model's IO (``node``: the ``io`` mapping or None); ModelError at
    the field that breaks a rule."""
    node = node if node is not None else YMap()
    if not isinstance(node, dict):
        raise ModelError("field 'io': expected a mapping {input, sample_shape, sample_layout, output, "
                         "output_count}", file, getattr(node, "line", None))

    def fail(msg, fld):
        line = node.key_lines.get(fld, node.line) if getattr(node, "key_lines", None) else None
        raise ModelError(f"field 'io', '{fld}': {msg}", file, line)

    for k in node:
        if k not in IO_FIELDS:
            fail(f"unknown field; allowed: {', '.join(IO_FIELDS)}", k)
    ins = {op.h2c.name: op for op in model.inputs}
    outs = {op.c2h.name: op for op in model.outputs}
    if "input" in node:
        if node["input"] not in ins:
            fail(f"{node['input']!r} is not an input (H2C stream) of the inference; inputs: "
                 f"{', '.join(ins) or 'none'}", "input")
        inp = ins[node["input"]]
    else:
        if len(ins) != 1 and node:
            fail(f"the model has {len(ins)} inputs ({', '.join(ins)}): name the one the data set feeds", "input")
        inp = model.inputs[0] if len(ins) == 1 else None
    if "output" in node:
        if node["output"] not in outs:
            fail(f"{node['output']!r} is not an output (C2H stream) of the inference; outputs: "
                 f"{', '.join(outs) or 'none'}", "output")
        out = outs[node["output"]]
    else:
        out = model.outputs[-1] if model.outputs else None
    lay = node.get("sample_layout", "stream")
    if lay not in LAYOUTS:
        fail(f"expected one of {', '.join(LAYOUTS)}, got {lay!r}", "sample_layout")
    shape = node.get("sample_shape")
    if shape is not None and (not isinstance(shape, list) or not shape
                              or not all(type(d) is int and d >= 1 for d in shape)):
        fail(f"expected a list of integers >= 1 (one sample's shape), got {shape!r}", "sample_shape")
    if inp is not None:
        t = inp.h2c
        if lay == "chw":
            if shape is None or len(shape) != 3:
                fail("sample_layout chw needs sample_shape [C, H, W]", "sample_shape")
            if len(t.dims) != 3 or tuple(shape[1:]) != t.dims[:2] or shape[0] > t.dims[2]:
                fail(f"a (C, H, W) = {shape} sample needs the input '{t.name}' to be (H, W, C') with C <= C', "
                     f"it is {list(t.dims)}", "sample_shape")
        elif lay == "features":
            if shape is None or len(shape) != 1:
                fail("sample_layout features needs sample_shape [F]", "sample_shape")
            if len(t.dims) != 2 or t.dims[1] != 1 or shape[0] > t.dims[0]:
                fail(f"a sample of {shape[0]} features needs the input '{t.name}' to be (F', 1) with F <= F', "
                     f"it is {list(t.dims)}", "sample_shape")
        else:
            n = t.host_elements(inp.h2c_padding)
            if shape is not None and int(np.prod(shape)) != n:
                fail(f"{shape} is {int(np.prod(shape))} values; the stream of '{t.name}' takes {n}", "sample_shape")
            shape = shape or [n]
    count = node.get("output_count")
    if out is not None:
        full = out.c2h.host_elements(out.c2h_padding)
        if count is None:
            count = full
        elif type(count) is not int or not 1 <= count <= full:
            fail(f"expected an integer 1..{full} (the values '{out.c2h.name}' streams), got {count!r}",
                 "output_count")
    return IO(inp, out, tuple(shape or ()), lay, count)


def model_io(model):
    io = model.io
    if io is None or io.input is None:
        raise DatasetError(f"{model.file}: a data set needs a model with exactly one input (H2C stream of the "
                           f"inference), this one has {len(model.inputs)}: give 'io: {{input: NAME}}'")
    if io.output is None:
        raise DatasetError(f"{model.file}: the model has no output (C2H stream)")
    return io


def load_array(path, what, dtypes="biuf"):
    """An .npy file as an array, or DatasetError (file, what was expected)."""
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise DatasetError(f"{what} {path}: cannot be read as a numpy array (np.save format): {e}") from None
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in dtypes:
        want = "real numbers" if "f" in dtypes else "integers (class labels)"
        raise DatasetError(f"{what} {path}: holds {getattr(arr, 'dtype', type(arr).__name__)} values; expected {want}")
    return arr


def samples(model, x, what="--input"):
    """(N, *input dims) float64 logical arrays of the input tensor from a data
    set ``x`` (N samples of the model's sample shape; a single sample of that
    shape is a data set of one)."""
    io = model_io(model)
    x = np.asarray(x)
    shape = io.sample_shape
    if x.shape == shape or (io.sample_layout == "stream" and x.ndim == 1 and x.size == int(np.prod(shape))):
        x = x.reshape((1,) + shape)
    if x.ndim < 1 or x[0].size != int(np.prod(shape)) or (x.ndim > 2 and x.shape[1:] != shape):
        raise DatasetError(f"{what}: shape {list(x.shape)}; the model takes samples of shape {list(shape)} "
                           f"({io.sample_layout} layout, input '{io.tensor.name}' {list(io.tensor.dims)}): "
                           f"expected [N, {', '.join(map(str, shape))}]")
    if x.dtype.kind not in "biuf":
        raise DatasetError(f"{what}: {x.dtype} values; expected real numbers")
    x = x.astype(np.float64).reshape((x.shape[0],) + shape)
    if not np.all(np.isfinite(x)):
        raise DatasetError(f"{what}: sample {int(np.flatnonzero(~np.isfinite(x).reshape(len(x), -1).all(1))[0])} "
                           "holds a value that is not finite")
    t, n = io.tensor, x.shape[0]
    out = np.zeros((n,) + t.dims)
    if io.sample_layout == "chw":
        out[..., :shape[0]] = x.transpose(0, 2, 3, 1)
    elif io.sample_layout == "features":
        out[:, :shape[0], 0] = x
    else:
        for i in range(n):
            out[i] = L.host_to_device(x[i].reshape(-1), t.dims, t.layout, io.input.h2c_padding)
    return out


def labels(y, n, what="--labels"):
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n or y.dtype.kind not in "biu":
        raise DatasetError(f"{what}: shape {list(y.shape)} ({y.dtype}); expected {n} integer class labels "
                           "(one per sample)")
    return y.astype(np.int64)


def host_input(model, raw):
    """WTensor bytes of one sample (``raw``: the input tensor's int logical array)."""
    return L.host_input(model, {model_io(model).tensor: raw})


def host_values(model, data):
    """The real output values (the first ``output_count`` of the output
    stream, dequantised) from the RTensor bytes."""
    io = model_io(model)
    off = io.output.c2h_offset
    raw = np.frombuffer(bytes(data[off:off + 2 * io.output_count]), dtype="<i2").astype(np.int64)
    return raw / float(1 << model.frac_bits)


def real_outputs(model, arr):
    """(N, output_count) from batched logical arrays of the output tensor."""
    io = model_io(model)
    t, n = io.output.c2h, arr.shape[0]
    flat = np.stack([L.device_to_host(arr[i], t.layout, io.output.c2h_padding) for i in range(n)]) if n else \
        np.zeros((0, io.output_count))
    return flat[:, :io.output_count]
