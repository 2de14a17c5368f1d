"""Every rule of the YAML model format gives a clear error (one test per rule):
the message names the sequence, op and field and the YAML line where there
is one; nothing ends in a traceback."""

import re

import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.model.yamlsrc import ModelError
from test_model_common import base_model, build, op, stream_in, to_yaml


def error_of(model=None, tmp_path=".", config=None, text=None):
    with pytest.raises(ModelError) as e:
        build(model, tmp_path, config, text)
    return str(e.value)


def expect(msg, *parts, line=None):
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"
    if line is not None:
        assert msg.startswith(f"m.yaml:{line}:"), msg


def line_of(text, needle, nth=0):
    lines = [i + 1 for i, ln in enumerate(text.splitlines()) if needle in ln]
    return lines[nth]


def test_base_model_is_valid():
    m, image = build(base_model())
    assert m.n_layers == 3 and len(image) > 0 and not m.warnings


# -- YAML and structure ---------------------------------------------------------------

def test_yaml_syntax_error_has_line():
    msg = error_of(text="tens_trans_seq:\n  - name: a\n    tens_trans: [\n")
    expect(msg, "YAML syntax error")
    assert re.match(r"m\.yaml:\d+: ", msg)


def test_document_must_be_a_mapping():
    expect(error_of(text="- 1\n- 2\n"), "must be a mapping with a 'tens_trans_seq'")


def test_empty_document():
    expect(error_of(text="# nothing\n"), "empty YAML document")


def test_duplicate_key():
    text = to_yaml(base_model()).replace("frac_bits: 8\n", "frac_bits: 8\nfrac_bits: 9\n")
    expect(error_of(text=text), "duplicate key 'frac_bits'", line=2)


def test_unknown_top_level_field():
    m = base_model()
    m["weights"] = 1
    expect(error_of(m), "model, field 'weights'", "unknown top-level field")


def test_frac_bits_range():
    m = base_model()
    m["frac_bits"] = 16
    expect(error_of(m), "field 'frac_bits'", "0..15")


def test_missing_tens_trans_seq():
    expect(error_of({"frac_bits": 8}), "field 'tens_trans_seq'", "required field is missing")


def test_unknown_sequence_field():
    m = base_model()
    m["tens_trans_seq"][0]["ops"] = []
    expect(error_of(m), "sequence 'load'", "field 'ops'", "unknown field")


def test_sequence_without_ops():
    m = base_model()
    m["tens_trans_seq"][1]["tens_trans"] = []
    expect(error_of(m), "sequence 'infer', field 'tens_trans'", "non-empty list of ops")


def test_duplicate_sequence_name():
    m = base_model()
    m["tens_trans_seq"][1]["name"] = "load"
    expect(error_of(m), "sequence 'load': duplicate sequence name")


def test_unknown_predecessor():
    m = base_model()
    m["tens_trans_seq"][1]["predecessor"] = ["lod"]
    expect(error_of(m), "sequence 'infer', field 'predecessor'", "unknown sequence 'lod'", "did you mean 'load'")


def test_predecessor_cycle():
    m = base_model()
    m["tens_trans_seq"].append({"name": "post", "predecessor": ["infer2"], "tens_trans": [
        {"tens_trans_type": "TENS_STREAM", "src_name": "w"}]})
    m["tens_trans_seq"].append({"name": "infer2", "predecessor": ["post"], "tens_trans": [
        {"tens_trans_type": "TENS_STREAM", "src_name": "w"}]})
    expect(error_of(m), "field 'predecessor'", "cycle")


def test_load_sequence_cannot_follow_inference():
    m = base_model()
    m["tens_trans_seq"][0]["predecessor"] = ["infer"]
    m["tens_trans_seq"][1]["predecessor"] = []
    expect(error_of(m), "sequence 'load', field 'predecessor'", "runs at every inference")


def test_tensor_from_a_sequence_that_is_not_a_predecessor():
    m = base_model()
    m["tens_trans_seq"][1]["predecessor"] = []
    expect(error_of(m), "sequence 'infer', op 2 (TENS_CONV), field 'src_a_name'",
           "defined in sequence 'load', which is not a predecessor")


# -- fields and types ---------------------------------------------------------------

def test_unknown_op_type():
    m = base_model()
    op(m, "infer", 1)["tens_trans_type"] = "TENS_CONV2D"
    expect(error_of(m), "sequence 'infer', op 2, field 'tens_trans_type'", "unknown op type 'TENS_CONV2D'")


def test_trans_aliases_are_accepted():
    m = base_model()
    for i, alias in ((1, "TRANS_CONV"), (2, "TRANS_MAXPOOL"), (3, "TRANS_LIN"), (4, "TRANS_STREAM")):
        op(m, "infer", i)["tens_trans_type"] = alias
    assert build(m)[0].n_layers == 3


def test_unknown_op_field_has_line_and_hint():
    m = base_model()
    op(m, "infer", 1)["strides"] = [1, 1]
    text = to_yaml(m)
    expect(error_of(text=text), "sequence 'infer', op 2 (TENS_CONV), field 'strides'", "did you mean 'stride'",
           line=line_of(text, "strides:"))


def test_missing_required_field():
    m = base_model()
    del op(m, "infer", 1)["src_a_name"]
    expect(error_of(m), "op 2 (TENS_CONV), field 'src_a_name'", "required field is missing")


def test_bool_field_type():
    m = base_model()
    op(m, "infer", 1)["bias_en"] = "yes please"
    expect(error_of(m), "field 'bias_en'", "expected True or False")


def test_activation_value():
    m = base_model()
    op(m, "infer", 1)["nlin_f_type"] = "NLIN_F_SIGMOID"
    expect(error_of(m), "field 'nlin_f_type'", "NLIN_F_IDENTITY, NLIN_F_RELU, NLIN_F_TANH")


def test_stride_shape():
    m = base_model()
    op(m, "infer", 1)["stride"] = [1]
    expect(error_of(m), "field 'stride'", "list of 2 integers >= 1")


def test_stride_zero():
    m = base_model()
    op(m, "infer", 2)["stride"] = [0, 2]
    expect(error_of(m), "op 3 (TENS_MAXPOOL), field 'stride'", "integers >= 1")


def test_padding_shape():
    m = base_model()
    op(m, "infer", 1)["padding"] = [1, 1, 1]
    expect(error_of(m), "field 'padding'", "[h, w] or [top, bottom, left, right]")


def test_layout_value():
    m = base_model()
    op(m, "infer", 0)["layout"] = "diagonal"
    expect(error_of(m), "op 1 (TENS_STREAM), field 'layout'", "col_first or row_first")


def test_dimensionality_of_stream():
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [6, 6, 8, 1, 1]
    expect(error_of(m), "field 'res_dim'", "2D, 3D or 4D")


def test_dealloc_type():
    m = base_model()
    op(m, "infer", 1)["dealloc"] = "x"
    expect(error_of(m), "field 'dealloc'", "list of tensor names")


def test_bad_tensor_name():
    m = base_model()
    op(m, "infer", 1)["res_name"] = "my tensor"
    expect(error_of(m), "field 'res_name'", "white space")


# -- streams -----------------------------------------------------------------------------

def test_stream_without_direction():
    m = base_model()
    m["tens_trans_seq"][1]["tens_trans"].append({"tens_trans_type": "TENS_STREAM"})
    expect(error_of(m), "op 6 (TENS_STREAM)", "needs src_name (C2H) and/or res_name (H2C)")


def test_h2c_needs_layout():
    m = base_model()
    del op(m, "infer", 0)["layout"]
    expect(error_of(m), "op 1 (TENS_STREAM), field 'layout'", "required for an H2C stream")


def test_h2c_field_without_res_name():
    m = base_model()
    op(m, "infer", 4)["res_dim"] = [8, 1]
    expect(error_of(m), "op 5 (TENS_STREAM), field 'res_dim'", "given without res_name")


def test_c2h_padding_without_src_name():
    m = base_model()
    op(m, "infer", 0)["src_stream_padding"] = 2
    expect(error_of(m), "field 'src_stream_padding'", "given without src_name")


def test_stream_padding_not_less_than_vw():
    m = base_model()
    op(m, "infer", 0)["res_stream_padding"] = 8
    expect(error_of(m), "field 'res_stream_padding'", "less than the SIMD vector width VW = 8")


def test_stream_padding_needs_aligned_dim_equal_vw():
    m = base_model()
    m["tens_trans_seq"][1]["tens_trans"][0] = stream_in("x", "col_first", [6, 6, 16], res_stream_padding=3)
    expect(error_of(m), "field 'res_stream_padding'", "aligned dimension", "to equal VW = 8")


def test_c2h_stream_padding_needs_aligned_dim_equal_vw():
    m = base_model()
    op(m, "infer", 4)["src_stream_padding"] = 2
    m, image = build(m)              # y is (8, 1) col_first: aligned dim 8 == VW
    assert m.output_bytes == 12
    m2 = base_model()
    op(m2, "load", 3)["res_dim"] = [16, 72]
    op(m2, "infer", 4)["src_stream_padding"] = 2
    expect(error_of(m2), "op 5 (TENS_STREAM), field 'src_stream_padding'", "to equal VW")


def test_divisibility_of_aligned_dimension():
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [6, 6, 6]
    expect(error_of(m), "op 1 (TENS_STREAM), field 'res_dim'", "aligned dimension 2 of [6, 6, 6] (col_first) = 6",
           "not divisible by the SIMD vector width VW = 8")


def test_divisibility_follows_layout():
    # row_first 2D: the last dimension is aligned; col_first 2D: the first.
    m = base_model()
    op(m, "load", 1)["res_dim"] = [8, 3]                    # col_first (8, 3): fine
    op(m, "infer", 1)["bias_en"] = False
    build(m)
    op(m, "load", 1)["layout"] = "row_first"               # row_first (8, 3): 3 is aligned
    expect(error_of(m), "op 2 (TENS_STREAM), field 'res_dim'", "aligned dimension 1 of [8, 3] (row_first) = 3")


# -- names and liveness ------------------------------------------------------------------

def test_unknown_tensor():
    m = base_model()
    op(m, "infer", 1)["src_b_name"] = "xx"
    expect(error_of(m), "op 2 (TENS_CONV), field 'src_b_name'", "unknown tensor 'xx'", "did you mean 'x'")


def test_use_after_dealloc():
    m = base_model()
    op(m, "infer", 3)["src_b_name"] = "c"
    expect(error_of(m), "op 4 (TENS_LIN), field 'src_b_name'",
           "tensor 'c' was deallocated by sequence 'infer', op 3")


def test_dealloc_unknown_tensor():
    m = base_model()
    op(m, "infer", 1)["dealloc"] = ["x", "nope"]
    expect(error_of(m), "op 2 (TENS_CONV), field 'dealloc'", "unknown tensor 'nope'")


def test_dealloc_twice():
    m = base_model()
    op(m, "infer", 2)["dealloc"] = ["c", "x"]
    expect(error_of(m), "op 3 (TENS_MAXPOOL), field 'dealloc'", "tensor 'x' was deallocated by sequence 'infer', op 2")


def test_dealloc_listed_twice():
    m = base_model()
    op(m, "infer", 1)["dealloc"] = ["x", "x"]
    expect(error_of(m), "field 'dealloc'", "listed twice")


def test_redefinition_of_live_tensor():
    m = base_model()
    op(m, "infer", 2)["res_name"] = "w"
    expect(error_of(m), "op 3 (TENS_MAXPOOL), field 'res_name'", "tensor 'w' already exists")


def test_name_reuse_after_dealloc_is_allowed():
    m = base_model()
    op(m, "infer", 2)["res_name"] = "x"                  # x was deallocated by the conv
    op(m, "infer", 2)["dealloc"] = ["c"]
    op(m, "infer", 3)["src_b_name"] = "x"
    op(m, "infer", 3)["dealloc"] = ["x"]
    assert build(m)[0].n_layers == 3


def test_unused_tensor_is_a_warning():
    m = base_model()
    m["tens_trans_seq"][0]["tens_trans"].append(stream_in("spare", "col_first", [8, 1]))
    model, _ = build(m)
    assert any("tensor 'spare' is never used" in w for w in model.warnings)


# -- op shapes and layouts -----------------------------------------------------------------

def test_conv_weight_layout():
    m = base_model()
    op(m, "load", 0)["layout"] = "col_first"
    expect(error_of(m), "op 2 (TENS_CONV), field 'src_a_name'", "tensor 'w' is col_first", "must be row_first")


def test_conv_weight_dimensionality():
    m = base_model()
    op(m, "load", 0)["res_dim"] = [9, 8]
    op(m, "load", 0)["layout"] = "row_first"
    expect(error_of(m), "field 'src_a_name'", "has dimensions [9, 8]", "must be 4D")


def test_conv_input_dimensionality():
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [72, 8]
    expect(error_of(m), "op 2 (TENS_CONV), field 'src_b_name'", "has dimensions [72, 8]", "must be 3D")


def test_conv_input_layout():
    m = base_model()
    op(m, "infer", 0)["layout"] = "row_first"
    expect(error_of(m), "field 'src_b_name'", "is row_first", "must be col_first")


def test_conv_channel_mismatch():
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [6, 6, 16]
    expect(error_of(m), "field 'src_b_name'", "has 16 channels, the weights 'w' expect 8")


def test_conv_channel_in_divisible():
    # channel_in is the aligned dimension of the col_first input: caught where the input is created.
    m = base_model()
    op(m, "load", 0)["res_dim"] = [3, 3, 4, 8]
    op(m, "infer", 0)["res_dim"] = [6, 6, 4]
    expect(error_of(m), "op 1 (TENS_STREAM), field 'res_dim'", "aligned dimension 2 of [6, 6, 4] (col_first) = 4",
           "not divisible by the SIMD vector width VW = 8")


def test_conv_output_empty():
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [2, 2, 8]
    op(m, "infer", 1)["padding"] = [0, 0]
    expect(error_of(m), "op 2 (TENS_CONV), field 'padding'", "window does not fit", "output would be empty")


def test_bias_needs_name():
    m = base_model()
    del op(m, "infer", 1)["bias_name"]
    expect(error_of(m), "field 'bias_name'", "required when bias_en is True")


def test_bias_disabled_ignores_name():
    m = base_model()
    op(m, "infer", 1)["bias_en"] = False
    op(m, "infer", 1)["bias_name"] = "does_not_exist"
    build(m)


def test_replicated_bias_dims():
    m = base_model()
    op(m, "load", 1)["res_dim"] = [8, 2]
    expect(error_of(m), "field 'bias_name'", "replicated convolution bias must be [8, 1]")


def test_general_bias_dims():
    m = base_model()
    op(m, "infer", 1)["repl_bias"] = False
    expect(error_of(m), "field 'bias_name'", "tensor 'b' has dimensions [8, 1]; the bias must be 3D")
    op(m, "load", 1).update(res_dim=[6, 6, 16])
    expect(error_of(m), "field 'bias_name'", "general (repl_bias False) convolution bias must be [6, 6, 8]")
    op(m, "load", 1).update(res_dim=[6, 6, 8])
    build(m)


def test_batch_norm_needs_name():
    m = base_model()
    op(m, "infer", 1)["batch_name"] = ""
    expect(error_of(m), "field 'batch_name'", "required when batch_norm_en is True")


def test_batch_norm_dims():
    m = base_model()
    op(m, "load", 2)["res_dim"] = [8, 3]
    expect(error_of(m), "field 'batch_name'", "batch norm needs [8, 2]")


def test_linear_weight_dimensionality():
    m = base_model()
    op(m, "infer", 3)["src_a_name"] = "w"
    expect(error_of(m), "op 4 (TENS_LIN), field 'src_a_name'", "must be 2D")


def test_linear_n_in_mismatch():
    m = base_model()
    op(m, "load", 3)["res_dim"] = [8, 64]
    expect(error_of(m), "op 4 (TENS_LIN), field 'src_b_name'", "(flattened) has n_in = 72", "expect 64")


def test_linear_n_out_divisible():
    m = base_model()
    op(m, "load", 3)["res_dim"] = [12, 72]
    expect(error_of(m), "op 4 (TENS_LIN), field 'src_a_name'", "n_out = 12 is not divisible")


def test_maxpool_input_dimensionality():
    m = base_model()
    op(m, "infer", 2)["src_name"] = "b"
    expect(error_of(m), "op 3 (TENS_MAXPOOL), field 'src_name'", "must be 3D")


def test_maxpool_padding_smaller_than_kernel():
    m = base_model()
    op(m, "infer", 2)["padding"] = [0, 0, 2, 0]
    expect(error_of(m), "op 3 (TENS_MAXPOOL), field 'padding'", "smaller than the 2x2 kernel")


def test_maxpool_needs_kernel():
    m = base_model()
    del op(m, "infer", 2)["kern_size"]
    expect(error_of(m), "field 'kern_size'", "required field is missing")


# -- data sources ------------------------------------------------------------------------------

def test_unknown_data_source():
    m = base_model()
    op(m, "infer", 0)["h2c_data_source"] = "rand_uniform"
    expect(error_of(m), "op 1 (TENS_STREAM), field 'h2c_data_source'", "unknown data source 'rand_uniform'")


def test_rand_gauss_arguments():
    m = base_model()
    op(m, "infer", 0)["h2c_data_source"] = "rand_gauss(0, -1)"
    expect(error_of(m), "field 'h2c_data_source'", "std >= 0")


def test_csv_file_missing(tmp_path):
    m = base_model()
    op(m, "load", 1)["h2c_data_source"] = "nothere.csv\\bias"
    expect(error_of(m, tmp_path), "sequence 'load', op 2 (TENS_STREAM), field 'h2c_data_source'",
           "CSV file 'nothere.csv' not found")


def test_csv_line_missing(tmp_path):
    (tmp_path / "p.csv").write_text("other,1,2\n")
    m = base_model()
    op(m, "load", 1)["h2c_data_source"] = "p.csv\\bias"
    expect(error_of(m, tmp_path), "field 'h2c_data_source'", "has no line named 'bias'", "lines: other")


def test_csv_value_count(tmp_path):
    (tmp_path / "p.csv").write_text("# comment\nbias,1,2,3\n")
    m = base_model()
    op(m, "load", 1)["h2c_data_source"] = "p.csv\\bias"
    expect(error_of(m, tmp_path), "p.csv:2: line 'bias' has 3 values, the stream needs 8")


def test_csv_value_not_a_number(tmp_path):
    (tmp_path / "p.csv").write_text("bias,1,2,3,4,5,6,7,eight\n")
    m = base_model()
    op(m, "load", 1)["h2c_data_source"] = "p.csv\\bias"
    expect(error_of(m, tmp_path), "p.csv:1: line 'bias'", "eight")


# -- memory ------------------------------------------------------------------------------------

def test_memory_exhausted_in_the_arena():
    cfg = SoCConfig()
    small = cfg.with_overrides(main_ram_size=cfg.model_window_size + cfg.tensor_window_size
                               + cfg.server_window_size + 16 * 1024 + 1024)     # 1 KiB arena
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [12, 12, 8]          # conv output 2304 bytes
    op(m, "load", 3)["res_dim"] = [8, 288]
    expect(error_of(m, config=small), "op 2 (TENS_CONV), field 'res_name'", "memory exhausted",
           "tensor 'c' needs 2304 bytes")


def test_memory_is_reused_after_dealloc():
    # c (2304 B) + p (576 B) fill the arena beside the 16-byte output block;
    # y (16 B) fits only because c is deallocated by the maxpool.
    cfg = SoCConfig()
    small = cfg.with_overrides(main_ram_size=cfg.model_window_size + cfg.tensor_window_size
                               + cfg.server_window_size + 16 * 1024 + 2304 + 576 + 16)
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [12, 12, 8]
    op(m, "load", 3)["res_dim"] = [8, 288]
    model, _ = build(m, config=small)
    assert model.arena_peak == 2304 + 576
    assert op_res(model, "y").offset == op_res(model, "c").offset
    op(m, "infer", 2)["dealloc"] = []
    op(m, "infer", 3)["dealloc"] = ["p", "c"]
    expect(error_of(m, config=small), "op 4 (TENS_LIN), field 'res_name'", "memory exhausted",
           "live: c (2304), p (576)")


def op_res(model, name):
    return next(t for t in model.tensors if t.name == name)


def test_memory_exhausted_in_the_tensor_window():
    small = SoCConfig().with_overrides(tensor_window_size=32 * 1024)
    m = base_model()
    op(m, "infer", 0)["res_dim"] = [48, 48, 8]          # 36864 bytes > 32 KiB
    expect(error_of(m, config=small), "op 1 (TENS_STREAM), field 'res_dim'", "memory exhausted",
           "32768-byte tensor window")


def test_memory_exhausted_in_the_model_window():
    small = SoCConfig().with_overrides(model_window_size=64 * 1024)
    m = base_model()
    big = [stream_in(f"k{i}", "row_first", [8, 2048]) for i in range(3)]   # 3 x 32 KiB of constants
    m["tens_trans_seq"][0]["tens_trans"] += big
    expect(error_of(m, config=small), "sequence 'load', op 6 (TENS_STREAM), field 'res_dim'", "memory exhausted",
           "the model window has 65536")


def test_more_layers_than_the_server_times():
    """spec/model_image.py MAX_LAYERS: the server keeps one timing per layer; the 65th layer is refused here,
    not by the device at WModel."""
    from tensorsoc.spec.model_image import MAX_LAYERS

    def chain(n):
        m = base_model()
        infer = m["tens_trans_seq"][1]["tens_trans"]
        pools = [{"tens_trans_type": "TENS_MAXPOOL", "src_name": f"q{i}", "kern_size": [1, 1], "stride": [1, 1],
                  "padding": [0, 0], "res_name": f"q{i + 1}", "dealloc": [f"q{i}"]} for i in range(n)]
        infer[1]["res_name"] = "q0"                      # the conv writes q0
        infer[2]["src_name"] = infer[2]["dealloc"][0] = f"q{n}"
        return m, pools, infer

    m, pools, infer = chain(MAX_LAYERS - 3)            # conv + pools + maxpool + linear = MAX_LAYERS
    infer[2:2] = pools
    build(m)
    m, pools, infer = chain(MAX_LAYERS - 2)
    infer[2:2] = pools
    expect(error_of(m), f"layer {MAX_LAYERS}", f"at most {MAX_LAYERS} compute layers", "MAX_LAYERS")
