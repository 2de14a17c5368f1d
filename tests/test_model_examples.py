"""The shipped example models (examples/*.yaml): each passes the rules, fits
the default memory plan, compiles, and runs in the golden model with a small
float-vs-fixed error and nothing saturated; the real networks (LeNet-5 class,
wide conv stack) have the shapes they claim.  Pure Python, no simulation."""

from pathlib import Path

import numpy as np
import pytest

from tensorsoc.spec.config import DEFAULT
from tensorsoc.spec import model_image as mi
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.sw.model.yamlsrc import ModelError
from tensorsoc.verification.golden import cnn

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

# Float-vs-Q8.8 error of each output, rms relative to the output's float rms:
# the examples' weight scales keep it at a few percent (quantised weights).
MAX_RELATIVE_RMS_ERROR = 0.06


def compute_ops(model):
    return [o for o in model.ops if o.kind != "stream"]


@pytest.fixture(scope="module", params=EXAMPLES, ids=lambda p: p.name)
def example(request):
    model = load_model(request.param)
    return model, compile_model(model), cnn.run(model)


def test_examples_are_found():
    names = {p.name for p in EXAMPLES}
    assert {"lenet5.yaml", "wide_cnn.yaml", "cnn_instructions.yaml"} <= names


def test_example_checks_and_fits_the_memory_plan(example):
    model, image, _ = example
    assert not model.warnings, model.warnings
    cfg = model.config
    assert cfg == DEFAULT
    assert len(image) <= cfg.model_window_size
    assert model.input_bytes <= cfg.tensor_window_size
    assert model.arena_peak + model.output_bytes <= model.arena_size
    h = mi.parse_header(image)
    assert (h["n_layers"], h["input_bytes"], h["output_bytes"]) == \
        (model.n_layers, model.input_bytes, model.output_bytes)


def test_example_golden_model_is_close_to_float(example):
    model, _, g = example
    for op in compute_ops(model):
        assert np.all(np.abs(g.fixed[op.res]) < 32767), f"{op.res.name} saturates"
    assert g.outputs
    for op, fixed, real in g.outputs:
        err = cnn.dequantize(fixed, model.frac_bits) - real
        rel = np.sqrt(np.mean(err ** 2)) / np.sqrt(np.mean(real ** 2))
        assert rel < MAX_RELATIVE_RMS_ERROR, f"{op.c2h.name}: relative rms error {rel:.3f}"


def const(model, name):
    return next(t for t in model.tensors if t.name == name)


def test_lenet5_shapes():
    model = load_model(ROOT / "examples" / "lenet5.yaml")
    ops = compute_ops(model)
    assert [o.kind for o in ops] == ["conv", "maxpool", "conv", "maxpool", "lin", "lin", "lin"]
    assert [o.res.dims for o in ops] == [(28, 28, 8), (14, 14, 8), (10, 10, 16), (5, 5, 16),
                                         (120, 1), (88, 1), (16, 1)]
    assert [o.a.dims for o in ops if o.kind == "lin"] == [(120, 400), (88, 120), (16, 88)]
    assert all(o.bias_en for o in ops if o.kind != "maxpool")
    x = model.inputs[0].h2c
    assert x.dims == (32, 32, 8) and x.stream_padding == 7          # one real channel
    assert len(model.load_ops) == 10 and len(model.inputs) == 1


def test_wide_cnn_shapes_and_size():
    model = load_model(ROOT / "examples" / "wide_cnn.yaml")
    ops = compute_ops(model)
    convs = [o for o in ops if o.kind == "conv"]
    lins = [o for o in ops if o.kind == "lin"]
    assert any(o.a.dims == (3, 3, 64, 64) and o.pad == (1, 1, 1, 1) and o.bias_en and o.act == "relu"
               for o in convs)
    assert "maxpool" in [o.kind for o in ops]
    assert any(o.a.dims[1] >= 1000 for o in lins)
    assert 200 * 1024 <= model.const_bytes <= 2 * 1024 * 1024


def test_wide_cnn_needs_the_large_model_window():
    """The sizing this example exists for: its 600 KB of constants do not fit
    the old 64 KiB model window."""
    old = DEFAULT.with_overrides(main_ram_size=256 * 1024, model_window_size=64 * 1024,
                                 tensor_window_size=32 * 1024)
    with pytest.raises(ModelError, match="memory exhausted"):
        load_model(ROOT / "examples" / "wide_cnn.yaml", old)
