"""Shared by the model tests (no tests here): a small valid model (as a dict)
that the tests mutate, and a parser that runs the front end and the compiler."""

import copy

import yaml

from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import parse_model


def stream_in(name, layout, dims, source="rand_gauss(0, 0.25)", **kw):
    return {"tens_trans_type": "TENS_STREAM", "res_name": name, "layout": layout, "res_dim": list(dims),
            "h2c_data_source": source, **kw}


def base_model():
    """x (6,6,8) -> conv 3x3 (bias, BN, ReLU) -> maxpool 2x2/2 -> linear (tanh) -> out."""
    return {
        "frac_bits": 8,
        "tens_trans_seq": [
            {"name": "load", "description": "constants", "predecessor": [], "tens_trans": [
                stream_in("w", "row_first", [3, 3, 8, 8], "rand_gauss(0, 0.1)"),
                stream_in("b", "col_first", [8, 1], "rand_gauss(0, 0.1)"),
                stream_in("bn", "col_first", [8, 2], "rand_gauss(0.5, 0.1)"),
                stream_in("lw", "row_first", [8, 72], "rand_gauss(0, 0.1)"),
            ]},
            {"name": "infer", "predecessor": ["load"], "tens_trans": [
                stream_in("x", "col_first", [6, 6, 8], "rand_gauss"),
                {"tens_trans_type": "TENS_CONV", "nlin_f_type": "NLIN_F_RELU", "batch_norm_en": True,
                 "bias_en": True, "repl_bias": True, "src_a_name": "w", "src_b_name": "x", "bias_name": "b",
                 "batch_name": "bn", "stride": [1, 1], "padding": [1, 1], "res_name": "c", "dealloc": ["x"]},
                {"tens_trans_type": "TENS_MAXPOOL", "src_name": "c", "kern_size": [2, 2], "stride": [2, 2],
                 "padding": [0, 0], "res_name": "p", "dealloc": ["c"]},
                {"tens_trans_type": "TENS_LIN", "nlin_f_type": "NLIN_F_TANH", "src_a_name": "lw",
                 "src_b_name": "p", "res_name": "y", "dealloc": ["p"]},
                {"tens_trans_type": "TENS_STREAM", "src_name": "y", "dealloc": ["y"]},
            ]},
        ],
    }


def op(model, seq, index):
    """Op ``index`` (0-based) of sequence ``seq`` (name) of a model dict."""
    s = next(s for s in model["tens_trans_seq"] if s["name"] == seq)
    return s["tens_trans"][index]


def to_yaml(model):
    return yaml.safe_dump(copy.deepcopy(model), sort_keys=False)


def build(model, tmp_path=".", config=None, text=None):
    """Front end + compiler; returns (model, image)."""
    m = parse_model(text if text is not None else to_yaml(model), "m.yaml", tmp_path, config)
    return m, compile_model(m)
