"""`tsoc model import`: ONNX graphs (built with onnx.helper, and the shipped
digits CNN) to YAML models whose float side matches onnx.reference and
whose fixed-point side runs on the accelerator; every unsupported or
malformed input is one clear error line, never a traceback."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import onnx_graphs as G
from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.model import dataset as D
from tensorsoc.verification.golden import dataset as GD
from tensorsoc import onnx_import as OI
from tensorsoc.sw.model.compiler import compile_report
from tensorsoc.verification.golden.cnn import quantize, run, run_batch

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits"


TSOC = Path(sys.executable).parent / "tsoc"


def tsoc(*argv, cwd=None):
    """The installed command in a process of its own."""
    return subprocess.run([str(TSOC), *map(str, argv)], cwd=cwd or ROOT, capture_output=True, text=True)


@pytest.fixture
def tsoc_in(capsys):
    """The command in this process (sw.cli.main): an exception other than
    the CLI's own user error escapes and fails the test (a traceback)."""
    from types import SimpleNamespace
    from tensorsoc.cli import main

    def call(*argv):
        code = main([str(a) for a in argv])
        cap = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=cap.out, stderr=cap.err)
    return call


def imported(tmp_path, model, name, calib=None, **kw):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return OI.import_onnx(path, tmp_path / f"{name}.yaml", SoCConfig(), calibrate=calib, **kw)


def lenet_samples(n, seed=3):
    return np.random.default_rng(seed).uniform(0, 1, (n, 1, 16, 16))


def mlp_samples(n, seed=4):
    return np.random.default_rng(seed).normal(0, 1, (n, 20))


CASES = {"lenet": (G.lenet, lenet_samples), "mlp_tanh": (G.mlp_tanh, mlp_samples)}


@pytest.mark.parametrize("name", list(CASES))
def test_import_matches_onnx_reference_and_runs_on_the_accelerator(tmp_path, name):
    build, samples = CASES[name]
    r = imported(tmp_path, build(), name, calib=samples(48))
    m = r.model
    assert r.reference_error <= OI.FLOAT_TOLERANCE * r.reference_scale
    _, report = compile_report(m, require_accel=True)          # every layer accelerated
    assert not report.software
    # The float model on new samples against ONNX's own reference evaluator.
    x = samples(10, seed=9)
    ref = OI.reference_outputs(OI.parse_network(onnx.load(str(tmp_path / f"{name}.onnx"))), x)
    got = GD.golden(m, x)["float"]
    assert got.shape == ref.shape and np.max(np.abs(got - ref)) < 1e-4 * max(1, np.max(np.abs(ref)))
    # Fixed point close to float: the calibrated format's error is small.
    assert GD.golden(m, x)["error"]["max_abs"] < 0.05


def test_lenet_layout_and_padding(tmp_path):
    r = imported(tmp_path, G.lenet(), "lenet", calib=lenet_samples(16))
    m = r.model
    ops = [op for op in m.ops if op.kind != "stream"]
    assert [op.kind for op in ops] == ["conv", "maxpool", "conv", "maxpool", "lin", "lin"]
    conv0, conv2, lin4, lin5 = ops[0], ops[2], ops[4], ops[5]
    assert m.io.tensor.dims == (16, 16, 8) and m.io.input.h2c_padding == 7      # 1 channel sent per pixel
    assert conv0.act == "relu" and conv2.act == "relu"                       # ReLU after MaxPool moved up
    assert conv0.a.dims == (5, 5, 8, 8) and conv2.a.dims == (3, 3, 8, 16)     # 6 -> 8, 12 -> 16 channels
    assert lin4.a.dims == (32, 3 * 3 * 16) and lin5.a.dims == (16, 32)        # 30 -> 32, 10 -> 16 outputs
    assert m.io.output_count == 10 and m.io.output.c2h.dims == (16, 1)
    # Zero weights wherever a padded channel or output is involved.
    w = conv2.a.real
    assert not w[:, :, 6:, :].any() and not w[:, :, :, 12:].any() and w[:, :, :6, :12].all()
    assert not lin5.a.real[10:].any() and not lin4.a.real[:, np.arange(144) % 16 >= 12].any()
    text = (tmp_path / "lenet.yaml").read_text()
    assert "h2c_data_source: lenet_data/conv0_w.npy" in text and (tmp_path / "lenet_data" / "conv0_w.npy").is_file()


def test_batch_norm_is_folded_exactly():
    """conv -> BN equals the folded conv in onnx.reference's own arithmetic."""
    net = OI.parse_network(G.lenet())
    conv = net.layers[0]
    assert conv.nodes == ["conv1", "bn1"] and conv.act == "relu"
    x = lenet_samples(4)
    from onnx.reference import ReferenceEvaluator
    full = ReferenceEvaluator(G.lenet())
    mid = helper.make_tensor_value_info("r1", onnx.TensorProto.FLOAT, None)
    m = G.lenet()
    m.graph.output.append(mid)
    ref = ReferenceEvaluator(m).run(["r1"], {"x": x.astype(np.float32)})[0]
    from tensorsoc.verification.golden.cnn import conv_float
    got = np.stack([conv_float(s.transpose(1, 2, 0), conv.w.transpose(2, 3, 1, 0), bias=conv.b, act="relu")
                    for s in x]).transpose(0, 3, 1, 2)
    assert np.max(np.abs(got - ref)) < 1e-5
    assert full.run(None, {"x": x.astype(np.float32)})[0].shape == (4, 10)


def test_golden_batch_is_bit_exact_with_single_runs(tmp_path):
    r = imported(tmp_path, G.lenet(), "lenet", calib=lenet_samples(16))
    m = r.model
    x = lenet_samples(5, seed=11)
    xs = D.samples(m, x)
    fixed = quantize(xs, m.frac_bits)
    g = run_batch(m, {m.io.tensor: (fixed, xs)})
    out = m.io.output.c2h
    for i in range(len(x)):
        m.io.tensor.raw, m.io.tensor.real = fixed[i], xs[i]
        one = run(m)
        assert np.array_equal(one.fixed[out], g.fixed[out][i])
        assert np.allclose(one.real[out], g.real[out][i])


def test_calibration_picks_the_format_with_headroom(tmp_path):
    r = imported(tmp_path, G.lenet(), "lenet", calib=lenet_samples(32))
    best = min((c for c in r.candidates if c["headroom"]), key=lambda c: c["rms"])
    assert r.frac_bits == best["frac_bits"] and best["peak"] < OI.HEADROOM
    assert all(c["frac_bits"] > r.frac_bits for c in r.candidates if not c["headroom"])
    assert len(r.layers) == 6 and all(l["saturated"] == 0 for l in r.layers)
    # Without samples: the format given (default 8), error measured on random samples.
    r2 = imported(tmp_path, G.mlp_tanh(), "mlp", frac_bits=10)
    assert r2.frac_bits == 10 and not r2.candidates


def test_import_cli_report(tmp_path):
    onnx.save(G.mlp_tanh(), str(tmp_path / "m.onnx"))
    np.save(tmp_path / "cal.npy", mlp_samples(16))
    p = tsoc("model", "import", tmp_path / "m.onnx", "-o", tmp_path / "m.yaml", "--calibrate", tmp_path / "cal.npy",
             "--require-accel")
    assert p.returncode == 0, p.stderr
    assert "float model vs onnx.reference on 16 sample(s)" in p.stdout
    assert "<- chosen" in p.stdout and "per layer, float vs fixed" in p.stdout
    assert "2 of 2 layer(s) on the accelerator" in p.stdout
    assert "output 'lin1_out' [8, 1]: 5 real value(s)" in p.stdout


def test_digits_example_is_shipped_and_accurate(tmp_path):
    """The committed example: its ONNX imports (every layer on the
    accelerator) and the golden model is within 1 point of float on the
    whole held-out split."""
    x, y = np.load(DIGITS / "test_x.npy"), np.load(DIGITS / "test_y.npy")
    assert x.shape == (360, 1, 8, 8) and y.shape == (360,)
    r = OI.import_onnx(DIGITS / "digits_cnn.onnx", tmp_path / "digits_cnn.yaml", SoCConfig(),
                       calibrate=np.load(DIGITS / "calib_x.npy"))
    compile_report(r.model, require_accel=True)
    res = GD.golden(r.model, x, y)
    assert res["float_accuracy"] > 0.95
    assert abs(res["accuracy"] - res["float_accuracy"]) <= 0.01
    # The committed YAML is what the importer writes today.
    assert (tmp_path / "digits_cnn.yaml").read_text() == (DIGITS / "digits_cnn.yaml").read_text()
    for f in (tmp_path / "digits_cnn_data").iterdir():
        assert np.array_equal(np.load(f), np.load(DIGITS / "digits_cnn_data" / f.name)), f.name


# -- errors: one line naming the node, its op type and what is supported --------

def _conv_then(op, attrs=None, inputs=(), **kw):
    return G.single(op, attrs, inputs, **kw)


def _graph(nodes, inits, in_shape, out_shape, in_name="x", out_name="y"):
    return G.make_model(nodes, inits, in_name, in_shape, out_name, out_shape)


def _w(name, shape):
    return G._init(name, np.ones(shape))


ERRORS = {
    "unsupported_op": (lambda: _conv_then("Sigmoid", out_shape=["N", 8, 6, 6]),
                       ["node 'bad' (Sigmoid)", "op type Sigmoid is not supported; supported: Conv, Gemm"]),
    "softmax": (lambda: G.make_model([helper.make_node("Gemm", ["x", "w"], ["g"], name="fc", transB=1),
                                      helper.make_node("Softmax", ["g"], ["y"], name="prob")],
                                     [_w("w", (4, 8))], "x", ["N", 8], "y", ["N", 4]),
                ["node 'prob' (Softmax)", "export the network without it"]),
    "average_pool": (lambda: _conv_then("AveragePool", {"kernel_shape": [2, 2]}, out_shape=["N", 8, 5, 5]),
                     ["node 'bad' (AveragePool)", "not supported"]),
    "grouped_conv": (lambda: _graph([helper.make_node("Conv", ["x", "w"], ["y"], name="gconv", group=2,
                                                       kernel_shape=[3, 3])],
                                    [_w("w", (8, 1, 3, 3))], ["N", 2, 8, 8], ["N", 8, 6, 6]),
                     ["node 'gconv' (Conv)", "group = 2 is not supported; supported: group = 1"]),
    "dilated_conv": (lambda: _graph([helper.make_node("Conv", ["x", "w"], ["y"], name="dconv", dilations=[2, 2],
                                                       kernel_shape=[3, 3])],
                                    [_w("w", (8, 1, 3, 3))], ["N", 1, 8, 8], ["N", 8, 4, 4]),
                     ["node 'dconv' (Conv)", "dilations [2, 2] are not supported"]),
    "ceil_mode": (lambda: _conv_then("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
                                     out_shape=["N", 8, 3, 3]),
                  ["node 'bad' (MaxPool)", "ceil_mode = 1 is not supported; supported: ceil_mode = 0"]),
    "feature_map_output": (lambda: _conv_then("Relu", out_shape=["N", 8, 6, 6]),
                           ["6x6 feature map", "end in a vector"]),
    "trans_a": (lambda: _graph([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transA=1)],
                               [_w("w", (1, 8))], [1, 4], [4, 8]),
                ["node 'fc' (Gemm)", "transA = 1 is not supported"]),
    "matmul_on_feature_map": (lambda: _conv_then("MatMul", inputs=("gw",), extra_inits=[_w("gw", (1, 4))],
                                                 in_shape=(1, 3, 3, 3), out_shape=[1, 8, 1, 4]),
                              ["node 'bad' (MatMul)", "add a Flatten before it"]),
    "branch": (lambda: _graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
                               helper.make_node("Relu", ["c"], ["r"], name="relu"),
                               helper.make_node("Add", ["c", "r"], ["a"], name="residual"),
                               helper.make_node("Flatten", ["a"], ["y"], name="flat")],
                              [_w("w", (8, 8, 1, 1))], ["N", 8, 4, 4], ["N", 128]),
               ["'c' is read by several nodes", "chain of layers"]),
    "relu_first": (lambda: _graph([helper.make_node("Relu", ["x"], ["r"], name="relu0"),
                                   helper.make_node("Gemm", ["r", "w"], ["y"], name="fc", transB=1)],
                                  [_w("w", (8, 8))], ["N", 8], ["N", 8]),
                   ["node 'relu0' (Relu)", "must follow a Conv, Gemm or MatMul"]),
    "batch_norm_alone": (lambda: _graph([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"],
                                                          name="bn0"),
                                         helper.make_node("Flatten", ["n"], ["y"], name="flat")],
                                        [_w(k, (2,)) for k in "sbmv"], ["N", 2, 4, 4], ["N", 32]),
                         ["node 'bn0' (BatchNormalization)", "only right after a Conv, Gemm or MatMul"]),
    "weights_not_constant": (lambda: _graph([helper.make_node("Gemm", ["x", "x"], ["y"], name="fc", transB=1)],
                                            [], [1, 8], [1, 1]),
                             ["node 'fc' (Gemm)", "the importer takes a chain of layers"]),
    "two_inputs": (lambda: _two_inputs(), ["2 data inputs", "exactly one"]),
    "reshape_other": (lambda: _graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                                     [G.numpy_helper.from_array(np.array([2, 4], dtype=np.int64), "s")],
                                     [1, 8], [2, 4]),
                      ["node 'rs' (Reshape)", "only a reshape to [N, features]"]),
    "no_compute": (lambda: _graph([helper.make_node("Flatten", ["x"], ["y"], name="flat")], [], ["N", 1, 4, 4],
                                  ["N", 16]), ["no Conv, Gemm or MatMul"]),
    "batch_of_4": (lambda: _graph([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)],
                                  [_w("w", (4, 8))], [4, 8], [4, 4]),
                   ["input 'x' has shape [4, 8]", "N = 1 or symbolic"]),
    "conv_3d": (lambda: _graph([helper.make_node("Conv", ["x", "w"], ["c"], name="c3", kernel_shape=[3]),
                                helper.make_node("Flatten", ["c"], ["y"], name="flat")],
                               [_w("w", (8, 1, 3))], ["N", 1, 8], ["N", 48]),
                ["input 'x' has shape [None, 1, 8]"]),
}


def _two_inputs():
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [1, 8]),
                               helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _check_error(p, expected):
    assert p.returncode != 0
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tsoc: error: "), p.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])


@pytest.mark.parametrize("case", list(ERRORS))
def test_unsupported_graph_is_a_clear_error(tmp_path, case, tsoc_in):
    build, expected = ERRORS[case]
    onnx.save(build(), str(tmp_path / "bad.onnx"))
    _check_error(tsoc_in("model", "import", tmp_path / "bad.onnx", "-o", tmp_path / "bad.yaml"), expected)


def test_unsupported_graph_from_the_installed_command(tmp_path):
    onnx.save(ERRORS["grouped_conv"][0](), str(tmp_path / "bad.onnx"))
    _check_error(tsoc("model", "import", tmp_path / "bad.onnx", "-o", tmp_path / "bad.yaml"),
                 ERRORS["grouped_conv"][1])


def test_malformed_files_are_clear_errors(tmp_path, tsoc_in):
    tsoc = tsoc_in
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x01this is not a protobuf \xff\xfe" * 10)
    _check_error(tsoc("model", "import", tmp_path / "junk.onnx", "-o", tmp_path / "o.yaml"),
                 ["junk.onnx", "ONNX"])
    _check_error(tsoc("model", "import", tmp_path / "missing.onnx", "-o", tmp_path / "o.yaml"), ["no such file"])
    # Valid protobuf, broken graph: a node reads a tensor nobody defines.
    g = helper.make_graph([helper.make_node("Relu", ["nowhere"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
              str(tmp_path / "broken.onnx"))
    _check_error(tsoc("model", "import", tmp_path / "broken.onnx", "-o", tmp_path / "o.yaml"),
                 ["the ONNX checker rejects the model"])
    # Calibration samples of the wrong shape.
    onnx.save(G.mlp_tanh(), str(tmp_path / "m.onnx"))
    np.save(tmp_path / "cal.npy", np.zeros((4, 21)))
    _check_error(tsoc("model", "import", tmp_path / "m.onnx", "-o", tmp_path / "o.yaml", "--calibrate",
                      tmp_path / "cal.npy"), ["--calibrate: samples of shape [4, 21]", "[N, 20]"])
    (tmp_path / "cal2.npy").write_bytes(b"not numpy")
    _check_error(tsoc("model", "import", tmp_path / "m.onnx", "-o", tmp_path / "o.yaml", "--calibrate",
                      tmp_path / "cal2.npy"), ["--calibrate", "cannot be read as a numpy array"])
