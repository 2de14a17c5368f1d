"""Functional coverage: tables of named bins, hit counts, merge and report.

Protocol tables are hit by what the scoreboard resolved (each transaction's
command and outcome, each status word read, per SPI/QPI mode).  Model-op
tables are defined from the op fields of sw/model (fields.py, model_image.py
op table) and hit from the model images the device accepted: a bin counts as
*sent* when an op with those parameters reached the device in a model image,
and as *hit* only when the device executed it and its output matched the
golden model -- which needs the firmware op runtime (firmware_model.py's
FIRMWARE_RUNS_LAYERS).  Until then every model-op bin is reported not hit.
"""

import itertools
import json
from pathlib import Path

from sw import model_image as mi
from sw.host.protocol import ALLOWED_IN_SEQUENCE, COMMANDS, Cmd, Kind, Status

MODES = ("SPI", "QPI")
UNKNOWN = "UNKNOWN"          # command byte not in the table
NO_COMMAND = "NO_COMMAND"    # CS_N released inside the command byte


def _expected_outcomes(cmd):
    """Outcomes a command can legally have (the bins worth hitting)."""
    info = COMMANDS[cmd]
    out = ["OK", "PARTIAL_BYTE"]
    if not info.allowed_while_busy:
        out.append("BUSY")
    if cmd not in ALLOWED_IN_SEQUENCE and not info.chunked:
        out.append("BROKEN_SEQUENCE")
    if info.kind == Kind.READ or info.kind == Kind.ACTION or info.kind == Kind.WRITE:
        out.append("BAD_LENGTH")
    if info.chunked:
        out += ["CHUNK_TOO_LONG", "BROKEN_SEQUENCE"]
    if info.kind == Kind.WRITE:
        out.append("WINDOW_OVERFLOW")
    out += {Cmd.WMODEL: ["BAD_MODEL"], Cmd.WSERVER: ["BAD_SERVER"], Cmd.WTENSOR: ["NO_MODEL"],
            Cmd.INFERENCE: ["NO_MODEL", "BAD_MODEL"], Cmd.ACQUIRE: ["SENSOR"]}.get(cmd, [])
    return list(dict.fromkeys(out))


def protocol_bins():
    bins = [(c.name, o, m) for c in COMMANDS for o in _expected_outcomes(c) for m in MODES]
    bins += [(UNKNOWN, "UNKNOWN_COMMAND", m) for m in MODES]
    bins += [(NO_COMMAND, "PARTIAL_BYTE", m) for m in MODES]
    return bins


STATUS_BINS = ["idle", "BUSY_WRITE", "WAIT_INFERENCE", "WAIT_ACQUIRE", "ERROR", "ERROR+busy"]


def status_bin(word):
    busy = [s.name for s in (Status.BUSY_WRITE, Status.WAIT_INFERENCE, Status.WAIT_ACQUIRE) if word >> s & 1]
    err = word >> Status.ERROR & 1
    if err:
        return "ERROR+busy" if busy else "ERROR"
    return busy[0] if len(busy) == 1 else ("idle" if not busy else "+".join(busy))


# -- model ops (from sw/model/fields.py and the model image's op table) -------
OPS = ("conv", "lin", "maxpool")
ACTS = tuple(mi.ACTS)                                  # identity, relu, tanh
EPILOGUES = ("plain", "bias", "bias_general", "batch_norm", "bias+batch_norm", "bias_general+batch_norm")
KERNELS = ("1x1", "2x2", "3x3", "other")
STRIDES = ("1x1", "2x2", "other")
PADDINGS = ("none", "symmetric", "asymmetric")
LAYOUTS = ("2D", "3D")                                 # lin input: (n_in, n_b) or a flattened feature map


def model_op_tables():
    """name -> (column names, bins)."""
    return {
        "op x activation": (("op", "activation"),
                            [(o, a) for o in ("conv", "lin") for a in ACTS] + [("maxpool", "-")]),
        "op x bias/batch-norm": (("op", "epilogue"), [(o, e) for o in ("conv", "lin") for e in EPILOGUES]),
        "op x kernel x stride x padding": (("op", "kernel", "stride", "padding"),
                                           list(itertools.product(("conv", "maxpool"), KERNELS, STRIDES,
                                                                  PADDINGS))),
        "lin input layout": (("op", "input"), [("lin", lay) for lay in LAYOUTS]),
    }


def _size(h, w):
    return f"{h}x{w}"


def op_bins(image_ops, tensors):
    """The model-op bins one op-table entry covers (name -> bin)."""
    opnames = {v: k for k, v in mi.OPCODES.items()}
    acts = {v: k for k, v in mi.ACTS.items()}
    out = []
    for op in image_ops:
        kind = opnames.get(op["opcode"], "").lower()
        if kind not in OPS:
            continue
        if kind != "maxpool":
            out.append(("op x activation", (kind, acts.get(op["act"], "?"))))
            bias = op["flags"] & mi.FLAGS["BIAS"]
            general = bias and not op["flags"] & mi.FLAGS["REPL_BIAS"]
            bn = op["flags"] & mi.FLAGS["BATCH_NORM"]
            epi = "+".join(p for p in ("bias_general" if general else "bias" if bias else "",
                                       "batch_norm" if bn else "") if p) or "plain"
            out.append(("op x bias/batch-norm", (kind, epi)))
        else:
            out.append(("op x activation", ("maxpool", "-")))
        if kind in ("conv", "maxpool"):
            k = _size(op["kernel_h"], op["kernel_w"])
            s = _size(op["stride_h"], op["stride_w"])
            pads = (op["pad_top"], op["pad_bottom"], op["pad_left"], op["pad_right"])
            pad = "none" if not any(pads) else ("symmetric" if pads[0] == pads[1] and pads[2] == pads[3]
                                                else "asymmetric")
            out.append(("op x kernel x stride x padding",
                        (kind, k if k in KERNELS else "other", s if s in STRIDES else "other", pad)))
        if kind == "lin":
            ndim = tensors[op["src_b"]]["ndim"]
            out.append(("lin input layout", ("lin", "2D" if ndim == 2 else "3D")))
    return out


class Coverage:
    """Hit counts of every table (JSON-serialisable, mergeable)."""

    def __init__(self):
        self.tables = {"command x outcome x mode": {"columns": ["command", "outcome", "mode"],
                                                    "bins": protocol_bins(), "kind": "protocol"},
                       "status word x mode": {"columns": ["status", "mode"],
                                              "bins": [(s, m) for s in STATUS_BINS for m in MODES],
                                              "kind": "protocol"}}
        for name, (cols, bins) in model_op_tables().items():
            self.tables[name] = {"columns": list(cols), "bins": bins, "kind": "model-op"}
        self.hits = {name: {} for name in self.tables}
        self.sent = {name: {} for name in self.tables}
        self.notes = []

    @staticmethod
    def _key(b):
        return "|".join(str(x) for x in b)

    def hit(self, table, b, sent_only=False):
        where = self.sent if sent_only else self.hits
        k = self._key(b)
        where[table][k] = where[table].get(k, 0) + 1

    def sample_outcome(self, cmd_name, outcome, mode):
        self.hit("command x outcome x mode", (cmd_name, outcome, mode))

    def sample_status(self, word, mode):
        self.hit("status word x mode", (status_bin(word), mode))

    def sample_model(self, image, executed):
        try:
            d = mi.decode_image(image)
        except mi.ModelImageError:
            return          # a synthetic image (random payload, no op table): no ops to cover
        for table, b in op_bins(d["ops"], d["tensors"]):
            self.hit(table, b, sent_only=True)
            if executed:
                self.hit(table, b)

    def to_json(self):
        return {"tables": {n: {"columns": t["columns"], "kind": t["kind"],
                               "bins": [self._key(b) for b in t["bins"]]} for n, t in self.tables.items()},
                "hits": self.hits, "sent": self.sent, "notes": self.notes}

    def save(self, path):
        Path(path).write_text(json.dumps(self.to_json(), indent=1))


def merge(docs):
    """Merge coverage JSON documents (Coverage.to_json()) into one."""
    out = Coverage().to_json()
    for d in docs:
        for what in ("hits", "sent"):
            for table, hits in d.get(what, {}).items():
                dst = out[what].setdefault(table, {})
                for k, n in hits.items():
                    dst[k] = dst.get(k, 0) + n
        for note in d.get("notes", []):
            if note not in out["notes"]:
                out["notes"].append(note)
    return out


def summary(doc):
    """name -> (bins hit, bins total, extra bins hit outside the plan)."""
    out = {}
    for name, t in doc["tables"].items():
        hits = doc["hits"].get(name, {})
        planned = set(t["bins"])
        out[name] = (sum(1 for b in t["bins"] if hits.get(b)), len(t["bins"]),
                     sorted(k for k in hits if k not in planned))
    return out
