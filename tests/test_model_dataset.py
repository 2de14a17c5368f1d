"""Data sets through a model: the .npy data source, the model's `io`, the
golden model over a batch (bit-exact with one image at a time) and
`tsoc model golden --input`."""

import json
from pathlib import Path

import numpy as np
import pytest

from tensorsoc.cli import main
from tensorsoc.sw.model import dataset as D
from tensorsoc.verification.golden import dataset as GD
from tensorsoc.sw.model.frontend import load_model, parse_model
from tensorsoc.sw.model.yamlsrc import ModelError
from tensorsoc.verification.golden.cnn import quantize, run, run_batch

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits"

MODEL = """
frac_bits: 8
{io}
tens_trans_seq:
  - name: load
    predecessor: []
    tens_trans:
      - {{tens_trans_type: TENS_STREAM, res_name: w, layout: row_first, res_dim: [8, 16], h2c_data_source: '{w}'}}
      - {{tens_trans_type: TENS_STREAM, res_name: b, layout: col_first, res_dim: [8, 1], h2c_data_source: '{b}'}}
  - name: inference
    predecessor: [load]
    tens_trans:
      - {{tens_trans_type: TENS_STREAM, res_name: x, layout: col_first, res_dim: [16, 1], h2c_data_source: rand_gauss}}
      - {{tens_trans_type: TENS_LIN, src_a_name: w, src_b_name: x, bias_en: True, bias_name: b, res_name: y}}
      - {{tens_trans_type: TENS_STREAM, src_name: y}}
"""


def model(tmp_path, w="w.npy", b="b.npy", io=""):
    return parse_model(MODEL.format(w=w, b=b, io=io), str(tmp_path / "m.yaml"), tmp_path)


def error(tmp_path, **kw):
    with pytest.raises(ModelError) as e:
        model(tmp_path, **kw)
    return str(e.value)


@pytest.fixture
def arrays(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "w.npy", rng.normal(0, 0.3, (8, 16)))
    np.save(tmp_path / "b.npy", np.arange(8) / 8)
    np.save(tmp_path / "rows.npy", np.arange(24, dtype=np.float32).reshape(3, 8) / 4)
    return tmp_path


def test_npy_source_values(arrays):
    m = model(arrays)
    w = next(t for t in m.tensors if t.name == "w")
    assert np.array_equal(w.real, np.load(arrays / "w.npy"))
    assert np.array_equal(w.raw, quantize(np.load(arrays / "w.npy"), 8))
    m = model(arrays, b="rows.npy\\2")
    b = next(t for t in m.tensors if t.name == "b")
    assert np.array_equal(b.real[:, 0], np.arange(16, 24) / 4)


@pytest.mark.parametrize("source, setup, expected", [
    ("none.npy", None, "npy file 'none.npy' not found"),
    ("w.npy", None, None),
    ("rows.npy\\3", None, "has no row 3: rows 0..2"),
    ("rows.npy\\x", None, "expected a row number"),
    ("rows.npy", None, "(shape [3, 8]) has 24 values, the stream needs 8"),
    ("obj.npy", lambda p: np.save(p / "obj.npy", np.array([{"a": 1}] * 8, dtype=object), allow_pickle=True),
     "cannot be read as a numpy array"),
    ("txt.npy", lambda p: (p / "txt.npy").write_text("1,2,3"), "cannot be read as a numpy array"),
    ("str.npy", lambda p: np.save(p / "str.npy", np.array(["a"] * 8)), "holds <U1 values; expected real numbers"),
    ("nan.npy", lambda p: np.save(p / "nan.npy", np.array([0, 1, np.nan, 3, 4, 5, 6, 7.0])),
     "value 2 (C order) is not finite"),
])
def test_npy_source_errors(arrays, source, setup, expected):
    if setup:
        setup(arrays)
    if expected is None:
        msg = error(arrays, b=source)
        assert "(shape [8, 16]) has 128 values, the stream needs 8" in msg
        expected = "field 'h2c_data_source'"
    else:
        msg = error(arrays, b=source)
    assert expected in msg and "m.yaml:" in msg and "sequence 'load', op 2" in msg, msg


@pytest.mark.parametrize("io, expected", [
    ("io: {inputs: x}", "field 'io', 'inputs': unknown field"),
    ("io: {input: y}", "'y' is not an input (H2C stream) of the inference; inputs: x"),
    ("io: {output: x}", "'x' is not an output (C2H stream) of the inference; outputs: y"),
    ("io: {output_count: 9}", "expected an integer 1..8"),
    ("io: {sample_layout: nchw}", "expected one of stream, chw, features"),
    ("io: {sample_layout: chw, sample_shape: [1, 4, 4]}", "needs the input 'x' to be (H, W, C')"),
    ("io: {sample_layout: features, sample_shape: [17]}", "a sample of 17 features needs the input 'x'"),
    ("io: {sample_shape: [3, 5]}", "[3, 5] is 15 values; the stream of 'x' takes 16"),
])
def test_io_errors(arrays, io, expected):
    assert expected in error(arrays, io=io)


def test_io_features_and_outputs(arrays):
    m = model(arrays, io="io: {sample_layout: features, sample_shape: [12], output_count: 5}")
    xs = D.samples(m, np.ones((4, 12)))
    assert xs.shape == (4, 16, 1) and xs[:, :12].all() and not xs[:, 12:].any()
    with pytest.raises(D.DatasetError, match=r"shape \[4, 13\]; the model takes samples of shape \[12\]"):
        D.samples(m, np.ones((4, 13)))
    res = GD.golden(m, np.random.default_rng(1).normal(size=(6, 12)), np.arange(6) % 5)
    assert res["fixed"].shape == (6, 5) and res["float"].shape == (6, 5) and 0 <= res["accuracy"] <= 1
    with pytest.raises(D.DatasetError, match="expected 6 integer class labels"):
        GD.golden(m, np.zeros((6, 12)), np.zeros(5, dtype=int))


@pytest.mark.parametrize("name", ["cnn_instructions", "mlp", "relu_cnn3", "lenet5"])
def test_run_batch_is_bit_exact_with_run(name):
    m = load_model(ROOT / "examples" / f"{name}.yaml")
    n = m.io.input.h2c.host_elements(m.io.input.h2c_padding)
    x = np.random.default_rng(2).normal(0, 1, (3, n))
    xs = D.samples(m, x)
    fixed = quantize(xs, m.frac_bits)
    g = run_batch(m, {m.io.tensor: (fixed, xs)})
    for i in range(3):
        m.io.tensor.raw, m.io.tensor.real = fixed[i], xs[i]
        one = run(m)
        for op in m.ops:
            if op.kind != "stream":
                assert np.array_equal(one.fixed[op.res], g.fixed[op.res][i]), (name, op.res.name, i)
                assert np.allclose(one.real[op.res], g.real[op.res][i]), (name, op.res.name, i)


def test_golden_cli_over_the_digits_test_split(tmp_path, capsys):
    assert main(["model", "golden", str(DIGITS / "digits_cnn.yaml"), "--input", str(DIGITS / "test_x.npy"),
                 "--labels", str(DIGITS / "test_y.npy"), "--json", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert "360 image(s), output 'lin3_out' (10 values), Q7.9" in out and "images/s" in out
    r = json.loads((tmp_path / "g.json").read_text())
    assert len(r["predictions"]) == 360 and abs(r["accuracy"] - r["float_accuracy"]) <= 0.01
    assert r["float_accuracy"] > 0.95 and len(r["layers"]) == 4
    assert main(["model", "golden", str(DIGITS / "digits_cnn.yaml"), "--input", str(DIGITS / "test_y.npy")]) == 1
    assert "--input: shape [360]; the model takes samples of shape [1, 8, 8]" in capsys.readouterr().err
    assert main(["model", "golden", str(DIGITS / "digits_cnn.yaml"), "--input", str(DIGITS / "test_x.npy"),
                 "--labels", str(DIGITS / "test_x.npy")]) == 1
    assert "holds float32 values; expected integers (class labels)" in capsys.readouterr().err
    np.save(tmp_path / "y.npy", np.zeros(359, dtype=np.int64))
    assert main(["model", "golden", str(DIGITS / "digits_cnn.yaml"), "--input", str(DIGITS / "test_x.npy"),
                 "--labels", str(tmp_path / "y.npy")]) == 1
    assert "--labels: shape [359] (int64); expected 360 integer class labels" in capsys.readouterr().err
