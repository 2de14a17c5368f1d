"""Functional coverage: tables of named bins, hit counts, merge and report.

Protocol tables are hit by what the scoreboard resolved (each transaction's
command and outcome, each status word read, per SPI/QPI mode).  Model-op
tables are defined from the op fields of sw/model (fields.py, model_image.py
op table) and hit from the model images the device accepted: a bin counts as
*sent* when an op with those parameters reached the device in a model image,
and as *hit* only when the device executed it and its output matched the
golden model (the firmware runs every op: firmware_model.py's
FIRMWARE_RUNS_LAYERS).

Bins no traffic can reach (the protocol, the firmware or the model rules
forbid them) are *excluded* with the reason, shown in the reports, and count
neither as hit nor as missing; an excluded bin that is hit all the same is
reported (its reason is wrong).
"""

import itertools
import json
from pathlib import Path

from tensorsoc.spec import model_image as mi
from tensorsoc.spec.host_protocol import ALLOWED_IN_SEQUENCE, COMMANDS, Cmd, Kind, Status

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


# The largest window the UVM traffic fills to test its bound (the sequences'
# window_overflow): a larger one takes minutes of simulation through the pins.
WINDOW_FILL_MAX = 64 * 1024


def protocol_exclusions(runs_layers=True, config=None):
    """Bins of protocol_bins() that no traffic can hit, with the reason
    (reported as excluded, not as missing).  ``config`` (spec.config.SoCConfig):
    the WINDOW_OVERFLOW bins of windows larger than WINDOW_FILL_MAX."""
    out = {}
    if config is not None:
        for cmd, size in ((Cmd.WTENSOR, config.tensor_window_size), (Cmd.WMODEL, config.model_window_size),
                          (Cmd.WSERVER, config.server_window_size)):
            if size > WINDOW_FILL_MAX:
                for m in MODES:
                    out[(cmd.name, "WINDOW_OVERFLOW", m)] = (
                        f"not run: the {size}-byte window takes too long to fill through the simulated pins "
                        f"(more than {WINDOW_FILL_MAX}); its bound is checked on a compact-memory build "
                        f"(spec.config.COMPACT_MEMORY: tests/test_host_soc.py, oversize_model_and_window_bounds)")
    for m in MODES:
        out[(Cmd.ACQUIRE.name, "SENSOR", m)] = (
            "unreachable: the sensor port captures exactly the model's input size (the input_len register), "
            "so server.c's frame-length check never fails; without a model the firmware raises nothing")
        if runs_layers:
            out[(Cmd.INFERENCE.name, "BAD_MODEL", m)] = (
                "unreachable with valid models: the firmware refuses bad images at WModel (model_validate); at "
                "Inference it raises BAD_MODEL only for an op it cannot run (over 1024 output channels, or an "
                "accelerator fault), which no generated model has")
    return out


STATUS_BINS = ["idle", "BUSY_WRITE", "WAIT_INFERENCE", "WAIT_ACQUIRE", "ERROR", "ERROR+busy"]
RESET_STATES = ("idle", "chunk sequence", "WAIT_ACQUIRE", "WAIT_INFERENCE")
RESET_HOW = ("CS_N high", "CS_N low (mid-transaction)")


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


def model_op_exclusions():
    """Model-op bins sw/model's rules forbid, with the reason."""
    why = ("forbidden by the model rules: maxpool padding must be smaller than the kernel on each side "
           "(sw/model/frontend.py), so a 1x1 window cannot be padded")
    return {"op x kernel x stride x padding": {("maxpool", "1x1", s, p): why for s in STRIDES
                                               for p in PADDINGS if p != "none"}}


SWEEP_SLICES = 6


def sweep_slice(k, slices=SWEEP_SLICES):
    """Arguments of yaml_gen.sweep_model for slice ``k`` of the model-op bins
    that can be hit: every ``slices``-th conv/maxpool window bin, every
    ``slices``-th (activation, epilogue) pair for its conv and lin ops, and
    one linear layout per slice.  The pairs are ordered so that with the
    default 6 slices the first two of each slice (its conv ops) and the last
    (its lin op) cover every activation and every epilogue of both ops."""
    excluded = model_op_exclusions()["op x kernel x stride x padding"]
    windows = [b for b in model_op_tables()["op x kernel x stride x padding"][1] if b not in excluded]
    n = len(EPILOGUES)
    epilogues = [(ACTS[(i // n + i) % len(ACTS)], EPILOGUES[i % n]) for i in range(len(ACTS) * n)]
    return {"windows": windows[k::slices], "epilogues": epilogues[k::slices], "lin_layouts": [LAYOUTS[k % 2]]}


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

    def __init__(self, runs_layers=True, config=None):
        self.tables = {"command x outcome x mode": {"columns": ["command", "outcome", "mode"],
                                                    "bins": protocol_bins(), "kind": "protocol"},
                       "status word x mode": {"columns": ["status", "mode"],
                                              "bins": [(s, m) for s in STATUS_BINS for m in MODES],
                                              "kind": "protocol"},
                       "reset x device state x mode": {"columns": ["device state", "CS_N", "mode"],
                                                       "bins": [(s, h, m) for s in RESET_STATES
                                                                for h in RESET_HOW for m in MODES
                                                                if h == RESET_HOW[0] or s in ("idle", "chunk sequence")],
                                                       "kind": "protocol"}}
        for name, (cols, bins) in model_op_tables().items():
            self.tables[name] = {"columns": list(cols), "bins": bins, "kind": "model-op"}
        self.excluded = {name: {} for name in self.tables}
        self.excluded["command x outcome x mode"] = protocol_exclusions(runs_layers, config)
        self.excluded.update(model_op_exclusions())
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

    def sample_reset(self, state, how, mode):
        self.hit("reset x device state x mode", (state, how, mode))

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
                "excluded": {n: {self._key(b): why for b, why in ex.items()} for n, ex in self.excluded.items()},
                "hits": self.hits, "sent": self.sent, "notes": self.notes}

    def save(self, path):
        Path(path).write_text(json.dumps(self.to_json(), indent=1))


def merge(docs):
    """Merge coverage JSON documents (Coverage.to_json()) into one.  The
    exclusions are those of the documents (one firmware expectation per
    regression)."""
    out = Coverage().to_json()
    for d in docs:
        if "excluded" in d:
            out["excluded"] = d["excluded"]
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
    """name -> (bins hit, bins to hit, extra bins hit outside the plan,
    excluded bins {bin: reason}).  Excluded bins count in neither number;
    one that is hit all the same is an extra bin (its exclusion is wrong)."""
    out = {}
    for name, t in doc["tables"].items():
        hits = doc["hits"].get(name, {})
        excluded = doc.get("excluded", {}).get(name, {})
        planned = [b for b in t["bins"] if b not in excluded]
        out[name] = (sum(1 for b in planned if hits.get(b)), len(planned),
                     sorted(k for k in hits if hits[k] and k not in planned), excluded)
    return out
