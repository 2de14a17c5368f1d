"""YAML model -> what the host sends and what the golden model expects.

Data flows one way: YAML -> sw.model (check, compile) -> model image, input
bytes (WTensor) and golden output bytes (RTensor).  The sequences send the
first two; the scoreboard's firmware model uses the third only once the
firmware runs layers (firmware_model.FIRMWARE_RUNS_LAYERS)."""

from dataclasses import dataclass

import numpy as np

from sw.model import layout as L
from sw.model.compiler import compile_model
from sw.model.frontend import load_model


@dataclass
class ModelTraffic:
    name: str
    image: bytes
    input: bytes
    output: bytes            # golden, bit-exact
    n_layers: int
    output_bytes: int


def _host_bytes(items, total, tensor_of, offset_of, padding_of, values):
    buf = bytearray(total)
    for item in items:
        t = tensor_of(item)
        host = L.device_to_host(values[t], t.layout, padding_of(item))
        data = np.asarray(host, dtype=np.int64).astype("<i2").tobytes()
        buf[offset_of(item):offset_of(item) + len(data)] = data
    return bytes(buf)


def from_model(model, name=None):
    from verification.golden.cnn import run
    image = compile_model(model)
    g = run(model)
    inp = _host_bytes(model.inputs, model.input_bytes, lambda op: op.h2c, lambda op: op.h2c_offset,
                      lambda op: op.h2c_padding, g.fixed)
    out = _host_bytes(model.outputs, model.output_bytes, lambda op: op.c2h, lambda op: op.c2h_offset,
                      lambda op: op.c2h_padding, g.fixed)
    return ModelTraffic(name or str(model.file), image, inp, out, model.n_layers, model.output_bytes)


def from_yaml(path, config=None):
    return from_model(load_model(path, config), name=str(path))


class GoldenTable:
    """The scoreboard's golden callable: output bytes of (image, input) pairs
    the sequences registered."""

    def __init__(self):
        self.outputs = {}

    def register(self, traffic):
        self.outputs[(traffic.image, traffic.input)] = traffic.output

    def __call__(self, image, tensor):
        try:
            return self.outputs[(image, tensor)]
        except KeyError:
            raise AssertionError("inference of a model/input pair no sequence registered: "
                                 "no golden output to compare with") from None
