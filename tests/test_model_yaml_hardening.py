"""The YAML model loader on hostile input (issue 20): explicit tags with empty values,
deep nesting, alias bombs, data sources out of range, the stream_padding alias; and a
bounded fuzzer (hypothesis) whose every input is a model or a ModelError with file and line."""

import copy
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorsoc.sw.model.frontend import parse_model
from tensorsoc.sw.model.yamlsrc import MAX_DEPTH, ModelError
from test_mcore_fuzz import Tally, report  # noqa: F401  (report prints the counts at the end of the module)
from test_model_common import base_model, op, stream_in, to_yaml


def error_of(text):
    with pytest.raises(ModelError) as e:
        parse_model(text, "m.yaml")
    return str(e.value)


@pytest.mark.parametrize("tag,expected", [("!!float", "a number"), ("!!int", "an integer"),
                                          ("!!bool", "true or false"), ("!!timestamp", "a date (2024-01-31)")])
def test_explicit_tag_with_empty_value(tag, expected):
    msg = error_of(f"frac_bits: 8\nseed: {tag}\ntens_trans_seq: []\n")
    assert msg == f"m.yaml:2: field 'seed': bad YAML value '' for the tag {tag}; expected {expected}"


def test_nested_500_deep_is_an_error_at_its_line():
    msg = error_of("frac_bits: 8\ndescription: " + "[" * 500 + "]" * 500 + "\n")
    assert msg == f"m.yaml:2: YAML nested deeper than {MAX_DEPTH} levels"
    msg = error_of("a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n")
    assert msg.startswith("m.yaml:2: YAML nested deeper than") and "*a" in msg


def test_alias_bomb_is_refused_quickly(monkeypatch):
    """10**9 values once expanded, refused from the event stream's counts
    alone: the guard reads each of the document's events once (no
    expansion: 9 lines of about 10 events) and the document is never
    composed.  (Work counted, not wall-clock time.)"""
    from tensorsoc.sw.model import yamlsrc
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]   # 10^9 nodes
    events = []
    parse = yaml.parse

    def counted_parse(*args, **kw):
        for ev in parse(*args, **kw):
            events.append(ev)
            yield ev

    def no_compose(*_args, **_kw):
        raise AssertionError("the alias bomb reached the composer")
    monkeypatch.setattr(yamlsrc.yaml, "parse", counted_parse)
    monkeypatch.setattr(yamlsrc.yaml, "compose", no_compose)
    msg = error_of("\n".join(lines) + "\n")
    assert re.match(r"m\.yaml:\d: YAML document too large: more than 200000 values once its aliases", msg)
    assert 0 < len(events) <= 4 + 9 * 13, len(events)


def test_aliases_of_a_normal_size_still_work():
    m = base_model()
    text = "shape: &s [6, 6, 8]\n" + to_yaml(m).replace("- 6\n      - 6\n      - 8", "*s")
    with pytest.raises(ModelError, match="unknown top-level field"):       # parsed through to the field checks
        parse_model(text, "m.yaml")


@pytest.mark.parametrize("source", ["rand_gauss(1e308, 1e308)", "rand_gauss(0, 40000)", "rand_gauss(-32769, 1)"])
def test_rand_gauss_out_of_the_int16_range(source):
    m = base_model()
    op(m, "infer", 0)["h2c_data_source"] = source
    msg = error_of(to_yaml(m))
    assert "field 'h2c_data_source': rand_gauss(mean, std) needs |mean| and std at most 32768" in msg
    assert re.match(r"m\.yaml:\d+: ", msg)


def test_stream_padding_is_the_h2c_padding_of_an_h2c_stream():
    m = base_model()
    m["tens_trans_seq"][1]["tens_trans"][0] = stream_in("x", "col_first", [6, 6, 8], "rand_gauss", stream_padding=5)
    alias = parse_model(to_yaml(m), "m.yaml")
    m["tens_trans_seq"][1]["tens_trans"][0] = stream_in("x", "col_first", [6, 6, 8], "rand_gauss",
                                                        res_stream_padding=5)
    spelled = parse_model(to_yaml(m), "m.yaml")
    assert alias.inputs[0].h2c_padding == spelled.inputs[0].h2c_padding == 5
    assert (alias.tensors[4].raw == spelled.tensors[4].raw).all()


def test_stream_padding_is_the_c2h_padding_of_a_c2h_stream():
    m = base_model()
    op(m, "infer", 4)["stream_padding"] = 2
    alias = parse_model(to_yaml(m), "m.yaml")
    assert alias.outputs[0].c2h_padding == 2 and alias.outputs[0].h2c_padding == 0
    op(m, "infer", 4)["stream_padding"] = 8
    assert "field 'src_stream_padding': stream padding 8 must be less than" in error_of(to_yaml(m))


@pytest.mark.parametrize("extra,msg", [
    ({"src_name": "w"}, "the op streams both ways, so stream_padding has no direction; write res_stream_padding"),
    ({"res_stream_padding": 1}, "field 'stream_padding': given together with res_stream_padding"),
])
def test_stream_padding_without_one_direction(extra, msg):
    m = base_model()
    op(m, "infer", 0).update(stream_padding=1, **extra)
    got = error_of(to_yaml(m))
    assert msg in got and re.match(r"m\.yaml:\d+: ", got)


# ---- fuzzing the loader: any YAML text ends in a model or a ModelError with file and line -------

YAML_TEXT = Tally("YAML loader, YAML text")
YAML_FIELDS = Tally("YAML loader, model fields")
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BASE = to_yaml(base_model())


def model_where(e):
    m = re.match(r"m\.yaml:(\d+): ", str(e))
    return ("m.yaml", int(m.group(1))) if m else (None, None)


def parse(text):
    parse_model(text, "m.yaml")


FRAGMENTS = ["!!float", "!!int", "!!bool", "!!timestamp", "!!binary", "!!set", "!!omap", "!!str", "!!null",
             "!!python/object:os.system", "&a", "*a", "&b", "*b", "[", "]", "{", "}", ",", ":", "- ", "? ",
             "\n", "\n  ", "\n    ", "'", '"', "#", "|", ">", "~", "1e308", "-1", "0x10", ".nan", "2024-01-31",
             "tens_trans_seq", "res_name", "stream_padding", "seed", "frac_bits", "TENS_STREAM", "\t", "\x00",
             "\ufeff", "é"]


@FUZZ
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=30), st.integers(0, len(BASE)))
def test_fuzz_yaml_text(fragments, pos):
    YAML_TEXT.run(parse, BASE[:pos] + "".join(fragments) + BASE[pos:], error=ModelError, where=model_where)


VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2, 70000) | st.floats(allow_nan=True)
                      | st.text(max_size=12) | st.sampled_from(["rand_gauss", "lin_index", "rand_gauss(1e308, 1)",
                                                                "x.csv\\a", "col_first", "NLIN_F_RELU", "w", "x"]),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                  max_size=3), max_leaves=8)
FIELDS = ["res_name", "src_name", "res_dim", "layout", "h2c_data_source", "stream_padding", "res_stream_padding",
          "src_stream_padding", "stride", "padding", "kern_size", "nlin_f_type", "bias_en", "dealloc",
          "tens_trans_type", "src_a_name", "src_b_name", "predecessor", "name", "frac_bits", "seed"]


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 8), st.sampled_from(FIELDS), VALUES), max_size=3))
def test_fuzz_model_fields(changes):
    m = copy.deepcopy(base_model())
    ops = [o for s in m["tens_trans_seq"] for o in s["tens_trans"]]
    for i, fld, value in changes:
        target = m if fld in ("frac_bits", "seed") else (m["tens_trans_seq"][i % 2] if fld in ("name", "predecessor")
                                                         else ops[i])
        target[fld] = value
    YAML_FIELDS.run(parse, yaml.safe_dump(m, sort_keys=False), error=ModelError, where=model_where)
