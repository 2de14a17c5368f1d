"""Field schemas of the YAML ops (cnn_instructions.md) and their type checks.

Each schema maps a field to ``(check, required, default)``; ``check`` turns
the YAML value into the front end's value or raises :class:`FieldError`
with what was expected.  Every field of the instruction document is here and
nothing else: unknown fields are errors.
"""

OP_TYPES = {
    "TENS_STREAM": "stream", "TRANS_STREAM": "stream",
    "TENS_CONV": "conv", "TRANS_CONV": "conv",
    "TENS_LIN": "lin", "TRANS_LIN": "lin",
    "TENS_MAXPOOL": "maxpool", "TRANS_MAXPOOL": "maxpool",
}
ACTIVATIONS = {"NLIN_F_IDENTITY": "identity", "NLIN_F_RELU": "relu", "NLIN_F_TANH": "tanh"}
LAYOUTS = ("col_first", "row_first")
MAX_ELEMENTS = 1 << 24


class FieldError(ValueError):
    pass


def _show(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _is_int(v):
    return type(v) is int


def text(v):
    if v is None:
        return ""
    if not isinstance(v, str):
        raise FieldError(f"expected a string, got {_show(v)}")
    return v


def name(v):
    if not isinstance(v, str) or not v.strip():
        raise FieldError(f"expected a tensor name (non-empty string), got {_show(v)}")
    if any(c.isspace() or c == "\0" for c in v):
        raise FieldError(f"tensor name {v!r} contains white space")
    return v


def optional_name(v):
    return None if v is None or v == "" else name(v)


def boolean(v):
    if type(v) is not bool:
        raise FieldError(f"expected True or False, got {_show(v)}")
    return v


def count(v):
    if not _is_int(v) or v < 0:
        raise FieldError(f"expected an integer >= 0, got {_show(v)}")
    return v


def _int_list(v, lengths, minimum, what):
    if not isinstance(v, list) or len(v) not in lengths or not all(_is_int(x) and x >= minimum for x in v):
        n = " or ".join(str(n) for n in lengths)
        raise FieldError(f"expected a list of {n} integers >= {minimum} ({what}), got {_show(v)}")
    return tuple(v)


def pair(v):
    return _int_list(v, (2,), 1, "height, width")


def padding(v):
    """[h, w] (both sides) or [top, bottom, left, right]."""
    p = _int_list(v, (2, 4), 0, "[h, w] or [top, bottom, left, right]")
    return p if len(p) == 4 else (p[0], p[0], p[1], p[1])


def dims(v):
    d = _int_list(v, (2, 3, 4), 1, "tensors are 2D, 3D or 4D")
    n = 1
    for x in d:
        n *= x
    if n > MAX_ELEMENTS:
        raise FieldError(f"{n} elements: more than the {MAX_ELEMENTS} a model tensor may have")
    return d


def layout(v):
    if not isinstance(v, str) or v not in LAYOUTS:
        raise FieldError(f"expected col_first or row_first, got {_show(v)}")
    return v


def activation(v):
    if not isinstance(v, str) or v not in ACTIVATIONS:
        raise FieldError(f"expected one of {', '.join(ACTIVATIONS)}, got {_show(v)}")
    return ACTIVATIONS[v]


def names(v):
    if v is None:
        return []
    if not isinstance(v, list):
        raise FieldError(f"expected a list of tensor names, got {_show(v)}")
    out = [name(x) for x in v]
    dup = {x for x in out if out.count(x) > 1}
    if dup:
        raise FieldError(f"tensor {sorted(dup)[0]!r} listed twice")
    return out


def source(v):
    if not isinstance(v, str) or not v.strip():
        raise FieldError(f"expected a data source string, got {_show(v)}")
    return v


_COMMON = {
    "tens_trans_type": (text, True, None),
    "dealloc": (names, False, []),
}
_RES = {
    "res_name": (name, True, None),
    "res_description": (text, False, ""),
}
_EPILOGUE = {
    "nlin_f_type": (activation, False, "identity"),
    "batch_norm_en": (boolean, False, False),
    "bias_en": (boolean, False, False),
    "repl_bias": (boolean, False, True),
    "src_a_name": (name, True, None),
    "src_b_name": (name, True, None),
    "bias_name": (optional_name, False, None),
    "batch_name": (optional_name, False, None),
}

SCHEMAS = {
    "stream": {
        **_COMMON,
        "src_name": (optional_name, False, None),
        "src_description": (text, False, ""),
        "src_stream_padding": (count, False, 0),
        "res_name": (optional_name, False, None),
        "res_description": (text, False, ""),
        "res_stream_padding": (count, False, 0),
        "layout": (layout, False, None),
        "res_dim": (dims, False, None),
        "h2c_data_source": (source, False, None),
    },
    "conv": {**_COMMON, **_EPILOGUE, **_RES,
             "stride": (pair, False, (1, 1)),
             "padding": (padding, False, (0, 0, 0, 0))},
    "lin": {**_COMMON, **_EPILOGUE, **_RES},
    "maxpool": {**_COMMON, **_RES,
                "src_name": (name, True, None),
                "kern_size": (pair, True, None),
                "stride": (pair, False, (1, 1)),
                "padding": (padding, False, (0, 0, 0, 0))},
}

# the reference design's model files write stream_padding: the op's one direction says which it is
PADDING_ALIAS = "stream_padding"

TOP_FIELDS = {"tens_trans_seq", "description", "frac_bits", "seed", "io"}
SEQ_FIELDS = {"name", "description", "predecessor", "tens_trans"}
