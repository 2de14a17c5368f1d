"""The PCORE program's symbol table (JSON), as the PCORE assembler writes it.

Format (see docs/pcore_symbols.md)::

    {"format": "tensorsoc-pcore-symbols", "version": 1,
     "config": {"np": 4, "nt": 8, "vw": 8, "private_words": 512, "shared_words": 2048, "te_levels": 8},
     "classes": {"convolution": {
         "variables": {"coef": {"space": "private", "addr": 0, "dims": [16, 8]}},
         "functions": {"exe": {"addr": 12}}}}}
"""

import json
from dataclasses import dataclass, field
from typing import Dict

from tensorsoc.spec.errors import UserError
from tensorsoc.spec.config import DEFAULT, MIN_TE_LEVELS
from tensorsoc.spec.tensor_isa import MAX_LEVELS, MIN_OVL_BITS, OVL_BITS

FORMAT = "tensorsoc-pcore-symbols"
VERSION = 1
CONFIG_KEYS = ("np", "nt", "vw", "private_words", "shared_words", "te_levels", "te_dst_levels", "te_dst_overlap",
               "te_ovl_bits")


@dataclass(frozen=True)
class Variable:
    cls: str
    name: str
    space: str        # 'private' or 'shared'
    addr: int
    dims: tuple

    @property
    def size(self):
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass
class Symbols:
    config: Dict[str, int]
    variables: Dict[str, Dict[str, Variable]] = field(default_factory=dict)
    functions: Dict[str, Dict[str, int]] = field(default_factory=dict)
    path: str = "<none>"

    def has_class(self, cls):
        return cls in self.variables or cls in self.functions


def default_config():
    return {"np": DEFAULT.np, "nt": DEFAULT.nt, "vw": DEFAULT.vw,
            "private_words": DEFAULT.pcore_private_words, "shared_words": DEFAULT.pcore_shared_words,
            "te_levels": DEFAULT.te_levels, "te_dst_levels": DEFAULT.dst_levels,
            "te_dst_overlap": DEFAULT.te_dst_overlap, "te_ovl_bits": DEFAULT.te_ovl_bits}


def empty():
    """No symbol file: the SoC's default configuration and no classes."""
    return Symbols(config=default_config())


def _need(cond, path, where, what):
    if not cond:
        raise UserError(f"{path}: {where}: expected {what}")


def _count(v, minimum):
    return type(v) is int and v >= minimum


def _table(c, key, path, cname):
    t = c.get(key, {})
    _need(isinstance(t, dict), path, f"class '{cname}' '{key}'", "an object {name: {...}}")
    return t.items()


def from_dict(data, path="<dict>"):
    _need(isinstance(data, dict), path, "top level", "a JSON object")
    _need(data.get("format") == FORMAT, path, "'format'", f'"{FORMAT}"')
    _need(data.get("version") == VERSION, path, "'version'", str(VERSION))
    cfg = data.get("config", {})
    _need(isinstance(cfg, dict), path, "'config'", "an object")
    config = default_config()
    for k, v in cfg.items():
        _need(k in CONFIG_KEYS, path, f"config key '{k}'", "one of " + ", ".join(CONFIG_KEYS))
        if k == "te_dst_overlap":
            _need(v in (0, 1) and not isinstance(v, bool), path, f"config.{k}", "0 or 1")
        else:
            _need(_count(v, 1), path, f"config.{k}", "a positive integer")
        _need(k not in ("te_levels", "te_dst_levels") or MIN_TE_LEVELS <= v <= MAX_LEVELS, path, f"config.{k}",
              f"{MIN_TE_LEVELS} to {MAX_LEVELS}")
        _need(k != "te_ovl_bits" or MIN_OVL_BITS <= v <= OVL_BITS, path, f"config.{k}",
              f"{MIN_OVL_BITS} to {OVL_BITS}")
        config[k] = v
    if "te_dst_levels" not in cfg:         # (older files: the destination has the source's levels)
        config["te_dst_levels"] = config["te_levels"]
    _need(config["te_dst_levels"] <= config["te_levels"], path, "config.te_dst_levels",
          f"at most config.te_levels ({config['te_levels']})")
    classes = data.get("classes", {})
    _need(isinstance(classes, dict), path, "'classes'", "an object")
    syms = Symbols(config=config, path=path)
    for cname, c in classes.items():
        _need(isinstance(c, dict), path, f"class '{cname}'", "an object")
        vs, fs = {}, {}
        for vname, v in _table(c, "variables", path, cname):
            where = f"variable '{cname}::{vname}'"
            _need(isinstance(v, dict), path, where, "an object")
            _need(v.get("space") in ("private", "shared"), path, where + " space", '"private" or "shared"')
            _need(_count(v.get("addr"), 0), path, where + " addr", "a non-negative integer")
            dims = v.get("dims")
            _need(isinstance(dims, list) and dims and all(_count(d, 1) for d in dims),
                  path, where + " dims", "a non-empty list of positive integers")
            vs[vname] = Variable(cname, vname, v["space"], v["addr"], tuple(dims))
        for fname, f in _table(c, "functions", path, cname):
            where = f"function '{cname}::{fname}'"
            _need(isinstance(f, dict) and _count(f.get("addr"), 0),
                  path, where, 'an object {"addr": non-negative integer}')
            fs[fname] = f["addr"]
        syms.variables[cname] = vs
        syms.functions[cname] = fs
    return syms


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise UserError(f"{path}: cannot read the symbol file: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: byte {e.start}: the symbol file is not UTF-8 JSON") from None
    except RecursionError:
        raise UserError(f"{path}: the symbol file is nested too deeply to be a symbol table") from None
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    return from_dict(data, path)
