"""Model compiler and image: compile/decode round trip, header words, C
header, examples, data sources, layouts, the `tsoc model` commands, and a
fuzz test: random YAML-ish input never ends in a traceback."""

import copy
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorsoc.spec import model_image as mi
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.frontend import load_model, parse_model
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.yamlsrc import ModelError
from tensorsoc.verification.golden import cnn
from test_model_common import base_model, build, op, stream_in, to_yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


# -- round trip ------------------------------------------------------------------------

def test_compile_decode_round_trip():
    m = base_model()
    op(m, "infer", 0).update(res_dim=[6, 6, 8], res_stream_padding=5)      # 3 real channels
    op(m, "infer", 1).update(padding=[1, 0, 2, 1], stride=[1, 2])
    op(m, "infer", 2).update(kern_size=[2, 2], stride=[2, 1], padding=[0, 1, 0, 0])
    model, arranged_only = build(m)
    # --portable: every constant also in its memory layout, where the front
    # end placed it (the default image stores the accelerator's weights
    # arranged only: below).
    image = compile_model(model, portable=True)
    d = mi.decode_image(image)
    h = d["header"]
    assert h["version"] == mi.FORMAT_VERSION and h["n_layers"] == 3
    assert h["input_bytes"] == 6 * 6 * 3 * 2 + 0        # host sends 3 of 8 lanes: 216 bytes, word aligned
    assert h["output_bytes"] == 16
    assert d["model"]["frac_bits"] == 8 and d["model"]["vw"] == 8
    # Tensors: names, dimensions, regions, offsets, sizes as planned.
    assert [t["name"] for t in d["tensors"]] == [t.name for t in model.tensors]
    for t, e in zip(model.tensors, d["tensors"]):
        assert tuple(e[f"dim{i}"] for i in range(len(t.dims))) == t.dims
        assert (e["region"], e["offset"], e["bytes"]) == (mi.REGIONS[t.region], t.offset, t.nbytes)
        assert e["layout"] == mi.LAYOUTS[t.layout] and e["aligned_dim"] == t.aligned
    x = model.ops[0].h2c
    assert x.region == "ARENA" and d["tensors"][x.index]["stream_padding"] == 5
    # Ops: stream in, conv, maxpool, linear, stream out, with every parameter.
    ops = d["ops"]
    assert [o["opcode"] for o in ops] == [mi.OPCODES[k] for k in ("STREAM_IN", "CONV", "MAXPOOL", "LIN", "STREAM_OUT")]
    sin, conv, pool, lin, sout = ops
    assert (sin["res"], sin["io_offset"], sin["io_bytes"], sin["stream_padding"]) == (x.index, 0, 216, 5)
    assert (conv["stride_h"], conv["stride_w"], conv["pad_top"], conv["pad_bottom"], conv["pad_left"],
            conv["pad_right"]) == (1, 2, 1, 0, 2, 1)
    assert conv["flags"] == mi.FLAGS["BIAS"] | mi.FLAGS["REPL_BIAS"] | mi.FLAGS["BATCH_NORM"]
    assert conv["act"] == mi.ACTS["relu"] and conv["layer"] == 0 and conv["tanh_table"] == mi.NONE
    assert (pool["kernel_h"], pool["stride_h"], pool["stride_w"], pool["pad_bottom"]) == (2, 2, 1, 1)
    assert lin["act"] == mi.ACTS["tanh"] and lin["tanh_shift"] == cnn.tanh_shift(8) and lin["bias"] == mi.NONE
    assert sout["src_a"] == model.ops[-1].c2h.index and sout["layer"] == mi.NONE
    # Constants: every constant in its memory layout; the tanh table.
    consts = d["consts"]
    for t in model.tensors:
        if t.region == "CONST":
            got = np.frombuffer(consts[t.offset:t.offset + t.nbytes], "<i2")
            assert np.array_equal(got, L.to_memory(t.raw, t.layout))
    tab = np.frombuffer(consts[lin["tanh_table"]:lin["tanh_table"] + 128], "<i2")
    assert np.array_equal(tab, cnn.tanh_table(8))
    # Each constant once: the accelerator reads every weight, so the default
    # image has none in memory layout (offset NONE), the tanh table stays
    # (the engine's stream program reads it in place) and the rest is equal.
    a = mi.decode_image(arranged_only)
    assert all(e["offset"] == mi.NONE for t, e in zip(model.tensors, a["tensors"]) if t.region == "CONST")
    assert a["consts"] == consts[:len(a["consts"])] and len(a["consts"]) < len(consts)
    assert a["ops"] == d["ops"] and a["accel"]["data"] == d["accel"]["data"]


def test_image_checks():
    _, image = build(base_model())
    mi.parse_header(image)
    bad = bytearray(image)
    bad[-1] ^= 1
    with pytest.raises(mi.ModelImageError, match="CRC-32"):
        mi.decode_image(bytes(bad))
    with pytest.raises(mi.ModelImageError, match="truncated"):
        mi.decode_image(image[:-4])
    old = bytearray(image)
    old[4:8] = (1).to_bytes(4, "little")
    with pytest.raises(mi.ModelImageError, match="format version 1"):
        mi.decode_image(bytes(old))
    # A payload whose tables point outside it is refused even with a good CRC.
    payload = bytearray(image[mi.HEADER_SIZE:])
    payload[4 * 6:4 * 7] = (10 ** 6).to_bytes(4, "little")        # consts offset
    with pytest.raises(mi.ModelImageError, match="runs past"):
        mi.decode_image(mi.build_image(bytes(payload), 0, 0, 0))


def test_header_counts_of_examples():
    for path in EXAMPLES:
        model = load_model(path)
        from tensorsoc.sw.model.compiler import compile_model
        h = mi.parse_header(compile_model(model))
        assert h["n_layers"] == model.n_layers == sum(o.kind != "stream" for o in model.ops)
        assert h["input_bytes"] == sum(-(-o.h2c.host_elements(o.h2c_padding) * 2 // 4) * 4 for o in model.inputs)
        assert h["output_bytes"] == sum(-(-o.c2h.host_elements(o.c2h_padding) * 2 // 4) * 4 for o in model.outputs)


def test_c_header_describes_every_field():
    text = mi.c_header()
    assert f"#define MODEL_IMAGE_VERSION {mi.FORMAT_VERSION}" in text
    for prefix, fields in (("MODEL_IMAGE_W_", [(f, "") for f in mi.HEADER_FIELDS]),
                           ("MODEL_SECTION_W_", mi.MODEL_FIELDS), ("MODEL_TENSOR_W_", mi.TENSOR_FIELDS),
                           ("MODEL_OP_W_", mi.OP_FIELDS)):
        for i, (name, _) in enumerate(fields):
            assert f"#define {prefix}{name.upper():<15} {i}" in text
    assert f"#define MODEL_OP_WORDS {len(mi.OP_FIELDS)}" in text
    for name, code in mi.OPCODES.items():
        assert f"#define MODEL_OPCODE_{name:<12} {code}" in text


@pytest.mark.skipif(shutil.which("cc") is None, reason="no host C compiler")
def test_c_header_reads_a_compiled_image(tmp_path):
    """A C program using only model_image.h walks the op table of an image."""
    _, image = build(base_model())
    (tmp_path / "model_image.h").write_text(mi.c_header())
    (tmp_path / "walk.c").write_text(r'''
#include <stdio.h>
#include <stdint.h>
#include "model_image.h"
static uint8_t buf[1 << 20];
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb"); size_t n = fread(buf, 1, sizeof buf, f); fclose(f);
    const uint32_t *h = (const uint32_t *)buf, *p = h + MODEL_IMAGE_HEADER_SIZE / 4;
    if (h[MODEL_IMAGE_W_VERSION] != MODEL_IMAGE_VERSION || n < MODEL_IMAGE_HEADER_SIZE) return 1;
    const uint32_t *ops = p + p[MODEL_SECTION_W_OP_TABLE] / 4;
    for (uint32_t i = 0; i < p[MODEL_SECTION_W_N_OPS]; i++) {
        const uint32_t *op = ops + i * MODEL_OP_WORDS;
        const uint32_t *t = p + p[MODEL_SECTION_W_TENSOR_TABLE] / 4 + op[MODEL_OP_W_RES] * MODEL_TENSOR_WORDS;
        if (op[MODEL_OP_W_RES] == MODEL_NONE) { printf("%u -\n", op[MODEL_OP_W_OPCODE]); continue; }
        printf("%u %s\n", op[MODEL_OP_W_OPCODE],
               (const char *)p + p[MODEL_SECTION_W_STRINGS] + t[MODEL_TENSOR_W_NAME]);
    }
    return 0;
}
''')
    (tmp_path / "m.bin").write_bytes(image)
    subprocess.run(["cc", "-std=c99", "-o", str(tmp_path / "walk"), str(tmp_path / "walk.c")], check=True)
    out = subprocess.run([str(tmp_path / "walk"), str(tmp_path / "m.bin")], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:5] == ["1 x", "3 c", "5 p", "4 y", "2 -"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_check_and_compile(path):
    from tensorsoc.sw.model.compiler import compile_model
    model = load_model(path)
    image = compile_model(model)
    assert len(image) <= model.config.model_window_size and model.n_layers >= 3
    assert not model.warnings
    g = cnn.run(model)
    for o in model.ops:                      # realistic scales: nothing saturates
        if o.kind != "stream":
            assert np.all(np.abs(g.fixed[o.res]) < 32767), o.res.name


def test_examples_cover_the_requested_models():
    kinds = {p.name: [o.kind for o in load_model(p).ops if o.kind != "stream"] for p in EXAMPLES}
    assert ["conv", "maxpool", "lin"] in kinds.values()
    assert ["lin", "lin", "lin"] in kinds.values()
    cnn3 = load_model(ROOT / "examples" / "relu_cnn3.yaml")
    assert cnn3.ops[0].h2c.dims == (16, 16, 8) and all(o.act == "relu" for o in cnn3.ops if o.kind == "conv")


# -- data sources and layouts ------------------------------------------------------------

def test_rand_gauss_is_reproducible_and_per_tensor():
    a, _ = build(base_model())
    b, _ = build(base_model())
    assert all(np.array_equal(s.raw, t.raw) for s, t in zip(a.tensors, b.tensors) if s.raw is not None)
    m = base_model()
    m["tens_trans_seq"][0]["tens_trans"].insert(0, stream_in("extra", "col_first", [8, 1]))
    c, _ = build(m)
    get = {t.name: t.raw for t in c.tensors if t.raw is not None}
    assert all(np.array_equal(get[t.name], t.raw) for t in a.tensors if t.raw is not None)
    m = base_model()
    m["seed"] = 99
    d, _ = build(m)
    assert not np.array_equal(d.tensors[0].raw, a.tensors[0].raw)
    w = a.tensors[0].real
    assert abs(w.std() - 0.1) < 0.02 and abs(w.mean()) < 0.02


def test_lin_index_and_stream_padding():
    m = base_model()
    op(m, "infer", 0).update(h2c_data_source="lin_index", res_stream_padding=5)
    model, _ = build(m)
    x = model.ops[0].h2c
    assert np.array_equal(x.raw[..., :3].reshape(-1), np.arange(6 * 6 * 3))      # 3 real lanes, in stream order
    assert np.all(x.raw[..., 3:] == 0)
    assert np.array_equal(L.device_to_host(x.raw, x.layout, 5), np.arange(108))


def test_csv_source_relative_to_the_yaml_file(tmp_path):
    sub = tmp_path / "models"
    sub.mkdir()
    vals = [0.5, -0.25, 1, 2, -3, 0.125, 0.0078125, 0.001]
    (sub / "params.csv").write_text("# bias values\nconv.bias, " + ", ".join(map(str, vals)) + ",\n")
    m = base_model()
    op(m, "load", 1)["h2c_data_source"] = "params.csv\\conv.bias"
    (sub / "net.yaml").write_text(to_yaml(m))
    model = load_model(sub / "net.yaml")
    b = model.tensors[1]
    assert np.allclose(b.real[:, 0], vals)
    assert list(b.raw[:, 0]) == [128, -64, 256, 512, -768, 32, 2, 0]


@pytest.mark.parametrize("dims,layout", [((8, 3), "col_first"), ((2, 3, 8), "col_first"), ((2, 3, 8, 2), "col_first"),
                                         ((3, 8), "row_first"), ((2, 2, 3, 8), "row_first")])
def test_layout_round_trip(dims, layout):
    a = np.arange(int(np.prod(dims))).reshape(dims)
    flat = L.to_memory(a, layout)
    assert np.array_equal(L.from_memory(flat, dims, layout), a)
    ax = L.aligned_dim(len(dims), layout)
    step = [int(np.prod(dims[i + 1:])) for i in range(len(dims))][ax]          # C-order step of the aligned axis
    idx = [0] * len(dims)
    idx[ax] = 1
    assert list(flat).index(a[tuple(idx)]) == 1 and a[tuple(idx)] == step        # aligned dimension is contiguous


def test_col_first_3d_flattens_without_moving_data():
    a = np.arange(2 * 3 * 8).reshape(2, 3, 8)
    assert np.array_equal(L.to_memory(a, "col_first"), a.reshape(-1))


# -- the command line ------------------------------------------------------------------

def tsoc(monkeypatch, *argv):
    import tensorsoc.cli as cli
    if "tensorsoc.commands.model" not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + ["tensorsoc.commands.model"])
    return cli.main(list(argv))


def test_cli_check_compile_golden(monkeypatch, tmp_path, capsys):
    path = ROOT / "examples" / "cnn_instructions.yaml"
    assert tsoc(monkeypatch, "model", "check", str(path)) == 0
    assert "OK" in capsys.readouterr().out
    assert tsoc(monkeypatch, "model", "compile", str(path), "-o", str(tmp_path / "m.bin")) == 0
    image = (tmp_path / "m.bin").read_bytes()
    h = mi.parse_header(image)
    assert tsoc(monkeypatch, "model", "golden", str(path), "-o", str(tmp_path / "g"), "--all") == 0
    inp, out = (tmp_path / "g" / "input.bin").read_bytes(), (tmp_path / "g" / "output.bin").read_bytes()
    assert len(inp) == h["input_bytes"] == 8 * 8 * 3 * 2 and len(out) == h["output_bytes"] == 16
    model = load_model(path)
    g = cnn.run(model)
    assert np.array_equal(np.frombuffer(out, "<i2"), g.outputs[0][1].reshape(-1))
    assert np.array_equal(np.frombuffer(inp, "<i2"), L.device_to_host(model.ops[0].h2c.raw, "col_first", 5))
    rep = (tmp_path / "g" / "golden.json").read_text()
    assert "max_abs_error" in rep and (tmp_path / "g" / "tensors" / "float_lin_out_tens.npy").exists()
    assert tsoc(monkeypatch, "model", "decode", str(tmp_path / "m.bin")) == 0
    assert '"n_layers": 3' in capsys.readouterr().out
    assert tsoc(monkeypatch, "model", "header", "-o", str(tmp_path / "model_image.h")) == 0
    assert (tmp_path / "model_image.h").read_text() == mi.c_header()


def test_cli_errors_without_traceback(monkeypatch, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    m = base_model()
    op(m, "infer", 1)["stride"] = "two"
    bad.write_text(to_yaml(m))
    assert tsoc(monkeypatch, "model", "check", str(bad)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tsoc: error: {bad}:") and "field 'stride'" in err and "Traceback" not in err
    assert tsoc(monkeypatch, "model", "check", str(tmp_path / "missing.yaml")) == 1
    assert "cannot read the model" in capsys.readouterr().err
    assert tsoc(monkeypatch, "model", "check", str(bad), "--set", "vw=3") == 1
    assert "vw=3" in capsys.readouterr().err


def test_cli_vw_override_changes_the_rules(monkeypatch, capsys):
    path = str(ROOT / "examples" / "relu_cnn3.yaml")
    assert tsoc(monkeypatch, "model", "check", path, "--set", "vw=16") == 1
    assert "not divisible by the SIMD vector width VW = 16" in capsys.readouterr().err


# -- fuzz: nothing ends in a traceback -------------------------------------------------------

FIELD_NAMES = sorted({k for s in __import__("tensorsoc.sw.model.fields", fromlist=["SCHEMAS"]).SCHEMAS.values() for k in s})
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=True),
                    st.lists(st.integers(0, 9), min_size=1, max_size=5),
                    st.text(max_size=12), st.sampled_from(["x", "w", "c", "p", "y", "b", "bn", "lw", "col_first",
                                                           "row_first", "TENS_CONV", "NLIN_F_TANH", "lin_index",
                                                           "rand_gauss", "a.csv\\l", "rand_gauss(1, 2)"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                       st.dictionaries(st.sampled_from(FIELD_NAMES), inner,
                                                                       max_size=4)), max_leaves=12)


@st.composite
def mutated_models(draw):
    m = base_model()
    for _ in range(draw(st.integers(1, 4))):
        holders = [m]
        seqs = m.get("tens_trans_seq")
        for seq in seqs if isinstance(seqs, list) else []:
            if isinstance(seq, dict):
                holders.append(seq)
                ops = seq.get("tens_trans")
                holders += [o for o in (ops if isinstance(ops, list) else []) if isinstance(o, dict)]
        holder = draw(st.sampled_from(holders))
        own = sorted(k for k in holder if isinstance(k, str))
        if own and draw(st.integers(0, 3)):          # mostly fields the holder has: reach the semantic rules
            key = draw(st.sampled_from(own))
        else:
            key = draw(st.sampled_from(FIELD_NAMES + ["name", "tens_trans", "predecessor", "tens_trans_seq"]))
        if draw(st.booleans()) and key in holder:
            del holder[key]
        else:
            holder[key] = draw(values)
    return m


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_models())
def test_fuzz_mutated_models_never_traceback(tmp_path_factory, m):
    try:
        text = yaml.safe_dump(copy.deepcopy(m), sort_keys=False)
    except yaml.YAMLError:
        return
    try:
        build(None, tmp_path_factory.getbasetemp(), text=text)
    except ModelError as e:
        assert str(e) and "Traceback" not in str(e)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("abc:-[]{}, \n\t'\"&*!|>#%@`\\") + ["tens_trans_seq", "name", "TENS_LIN"]),
                max_size=40).map("".join))
def test_fuzz_random_text_never_traceback(text):
    try:
        parse_model(text, "m.yaml", ".")
    except ModelError as e:
        assert str(e).startswith("m.yaml")
