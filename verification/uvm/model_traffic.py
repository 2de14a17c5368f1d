"""YAML model -> what the host sends and what the golden model expects.

Data flows one way: YAML -> sw.model (check, compile) -> model image, input
bytes (WTensor) and golden output bytes (RTensor).  The sequences send the
first two; the scoreboard's firmware model uses the third only once the
firmware runs layers (firmware_model.FIRMWARE_RUNS_LAYERS)."""

from dataclasses import dataclass

import numpy as np

from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.golden.cnn import run
from tensorsoc.verification.golden.cnn import dequantize


@dataclass
class ModelTraffic:
    model: object            # sw.model.frontend.Model
    name: str
    image: bytes
    input: bytes
    output: bytes            # golden, bit-exact
    n_layers: int
    output_bytes: int
    float_error: float = 0.0  # max |golden fixed point - float model| over the outputs (quantisation error)


def from_model(model, name=None):
    """The traffic of ``model``.  With an accelerator in the configuration
    every compute op must get an accelerator program (compile_model's
    require_accel, as `tsoc model compile --require-accel`): the regression
    runs no model with a layer left on the MCORE software path."""
    image = compile_model(model, require_accel=bool(model.config.accelerator))
    g = run(model)
    inp = L.host_input(model, g.fixed)
    out = L.host_output(model, g.fixed)
    err = max((float(np.max(np.abs(dequantize(fixed, model.frac_bits) - real))) for _, fixed, real in g.outputs
               if np.size(fixed)), default=0.0)
    return ModelTraffic(model, name or str(model.file), image, inp, out, model.n_layers, model.output_bytes, err)


def from_yaml(path, config=None):
    return from_model(load_model(path, config), name=str(path))


def golden_output(model, tensor):
    """Golden output bytes of ``model`` for any input tensor bytes (what the
    host wrote with WTensor or the sensor delivered): the input tensors'
    values are taken from ``tensor``, then the golden model runs."""
    saved = [(op.h2c, op.h2c.raw) for op in model.inputs]
    try:
        for op in model.inputs:
            t = op.h2c
            n = t.host_elements(op.h2c_padding)
            vals = np.frombuffer(tensor[op.h2c_offset:op.h2c_offset + 2 * n], dtype="<i2").astype(np.int64)
            t.raw = L.host_to_device(vals, t.dims, t.layout, op.h2c_padding)
        g = run(model)
        return L.host_output(model, g.fixed)
    finally:
        for t, raw in saved:
            t.raw = raw


class GoldenTable:
    """The scoreboard's golden callable (image bytes, input bytes) -> output
    bytes, for the models the sequences registered."""

    def __init__(self):
        self.models = {}
        self.cache = {}
        self.float_errors = {}    # model name -> float model's max |error| (reported, not a pass criterion)

    def register(self, traffic):
        self.models[traffic.image] = traffic.model
        self.float_errors[traffic.name] = traffic.float_error
        self.cache[(traffic.image, traffic.input)] = traffic.output

    def __call__(self, image, tensor):
        key = (image, bytes(tensor))
        if key not in self.cache:
            if image not in self.models:
                raise AssertionError("inference of a model image no sequence registered: no golden model")
            self.cache[key] = golden_output(self.models[image], key[1])
        return self.cache[key]


def traffic_of(text, name, config=None):
    """Traffic of YAML text (checked with the SoC's configuration: the one the
    simulation runs, when called inside it)."""
    import tempfile
    from pathlib import Path
    if config is None:
        from tensorsoc.verification.soc.host_env import soc_config
        config = soc_config()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{name}.yaml"
        path.write_text(text)
        t = from_yaml(path, config)
    t.name = name
    return t
