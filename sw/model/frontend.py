"""YAML model front end: parse, check every rule, plan memory.

``load_model(path)`` returns a :class:`Model` -- sequences in execution
order, tensors with their values (constants and inputs, from their data
sources) and their place in memory, ops with every parameter resolved -- or
raises :class:`ModelError` naming the file, line, sequence, op and field.
docs/models.md is the user-facing description of every rule.
"""

import difflib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tensorsoc.spec.config import FIRMWARE_RESERVE, SoCConfig
from tensorsoc.spec.numbers import SPU_LOOKUP_SIZE
from tensorsoc.spec.model_image import MAX_LAYERS
from tensorsoc.sw.model import fields as F
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model import sources
from tensorsoc.sw.model.yamlsrc import ModelError, YList, YMap, load
from tensorsoc.sw.model.dataset import parse_io

DEFAULT_FRAC_BITS = 8
INPUT_ALIGN = 4                  # host data start on word boundaries (WTensor/RTensor move words)


@dataclass(eq=False)
class Tensor:
    name: str
    dims: tuple
    layout: str
    kind: str                    # "const" (model image), "input" (WTensor), "activation"
    seq: str
    op_index: int                # 1-based, in its sequence
    line: int = None
    stream_padding: int = 0
    source: object = None
    raw: np.ndarray = None       # const/input: int64 logical array (Q.frac)
    real: np.ndarray = None      # const/input: float64 logical array (before quantisation)
    region: str = None           # "CONST", "INPUT", "ARENA" (memory plan)
    offset: int = None
    index: int = None            # tensor-table index

    @property
    def elements(self):
        return int(np.prod(self.dims))

    @property
    def nbytes(self):
        return self.elements * L.ELEMENT_BYTES

    @property
    def aligned(self):
        return L.aligned_dim(len(self.dims), self.layout)

    def host_elements(self, padding):
        return self.elements - self.elements // self.dims[self.aligned] * padding

    def where(self):
        return f"sequence '{self.seq}', op {self.op_index}"


@dataclass(eq=False)
class Op:
    kind: str                    # "stream", "conv", "lin", "maxpool"
    type_name: str               # as written (TENS_* or TRANS_*)
    seq: str
    index: int                   # 1-based within the sequence
    line: int
    values: dict                 # checked field values
    node: YMap = None
    # resolved operands
    res: Tensor = None
    a: Tensor = None             # conv/lin weights, maxpool input
    b: Tensor = None             # conv/lin input
    bias: Tensor = None
    batch: Tensor = None
    h2c: Tensor = None           # stream: tensor received from the host
    c2h: Tensor = None           # stream: tensor sent to the host
    act: str = "identity"
    bias_en: bool = False
    repl_bias: bool = True
    bn_en: bool = False
    kernel: tuple = (1, 1)
    stride: tuple = (1, 1)
    pad: tuple = (0, 0, 0, 0)
    layer: int = None            # RTimings index of compute ops
    # memory plan of streams
    h2c_padding: int = 0
    c2h_padding: int = 0
    h2c_offset: int = None       # tensor-window offset of the host data
    c2h_offset: int = None       # output-block offset of the host data
    dealloc: list = field(default_factory=list)

    def where(self):
        what = f"{self.type_name}"
        return f"sequence '{self.seq}', op {self.index} ({what})"


@dataclass
class Sequence:
    name: str
    description: str
    predecessors: list
    ops: list
    line: int
    is_load: bool


@dataclass
class Model:
    file: str
    frac_bits: int
    seed: int
    config: SoCConfig
    sequences: list              # execution order: load sequences, then inference sequences
    tensors: list                # definition (= tensor-table) order
    load_ops: list
    ops: list                    # inference ops, execution order
    inputs: list = field(default_factory=list)     # H2C stream ops of the inference
    outputs: list = field(default_factory=list)    # C2H stream ops
    input_bytes: int = 0
    output_bytes: int = 0
    arena_base: int = 0
    arena_size: int = 0
    arena_peak: int = 0
    output_offset: int = 0
    const_bytes: int = 0
    tanh_table_offset: int = None
    warnings: list = field(default_factory=list)
    io: object = None            # sw.model.dataset.IO: how a data set's samples feed the inference

    @property
    def exec_ops(self):
        return self.load_ops + self.ops

    @property
    def n_layers(self):
        return sum(op.kind != "stream" for op in self.ops)

    @property
    def vw(self):
        return self.config.vw


def _align(n, a):
    return -(-n // a) * a


class _Ctx:
    """Where an error is: file, sequence, op, field and the YAML line."""

    def __init__(self, file, where, node):
        self.file, self.where, self.node = file, where, node

    def fail(self, message, fld=None):
        line = None
        if isinstance(self.node, YMap):
            line = self.node.key_lines.get(fld, self.node.line) if fld else self.node.line
        where = f"{self.where}, field '{fld}'" if fld else self.where
        raise ModelError(f"{where}: {message}", self.file, line)


def _check_fields(ctx, node, schema):
    unknown = [k for k in node if k not in schema]
    if unknown:
        k = unknown[0]
        near = difflib.get_close_matches(k, list(schema), 1)
        hint = f" (did you mean '{near[0]}'?)" if near else f"; allowed: {', '.join(schema)}"
        ctx.fail(f"unknown field{hint}", k)
    out = {}
    for k, (check, required, default) in schema.items():
        if k not in node:
            if required:
                ctx.fail("required field is missing", k)
            out[k] = default
            continue
        try:
            out[k] = check(node[k])
        except F.FieldError as e:
            ctx.fail(str(e), k)
        if required and out[k] is None:
            ctx.fail("required field is empty", k)
    return out


def _padding_alias(ctx, node):
    """``stream_padding`` (the reference design's spelling) is the padding of the one
    direction the op streams: res_stream_padding for H2C (res_name), src_ for C2H (src_name)."""
    h2c, c2h = node.get("res_name") not in (None, ""), node.get("src_name") not in (None, "")
    if h2c == c2h:
        what = "streams both ways" if h2c else "has neither res_name nor src_name"
        ctx.fail(f"the op {what}, so stream_padding has no direction; write res_stream_padding (H2C, res_name) "
                 "or src_stream_padding (C2H, src_name)", F.PADDING_ALIAS)
    target = "res_stream_padding" if h2c else "src_stream_padding"
    if target in node:
        ctx.fail(f"given together with {target}, which it stands for here; keep one", F.PADDING_ALIAS)
    node[target] = node.pop(F.PADDING_ALIAS)
    node.key_lines[target] = node.key_lines.get(F.PADDING_ALIAS, node.line)


class _Parser:
    def __init__(self, file, base_dir, config):
        self.file = str(file) if file is not None else "<model>"
        self.base_dir = Path(base_dir)
        self.config = config
        self.vw = config.vw
        self.csv = sources.CsvCache(self.base_dir)
        self.npy = sources.NpyCache(self.base_dir)

    # -- structure ---------------------------------------------------------------
    def parse(self, text):
        doc = load(text, self.file)
        top = _Ctx(self.file, "model", doc)
        if not isinstance(doc, YMap):
            raise ModelError("the model must be a mapping with a 'tens_trans_seq' list", self.file,
                             getattr(doc, "line", 1))
        for k in doc:
            if k not in F.TOP_FIELDS:
                top.fail(f"unknown top-level field; allowed: {', '.join(sorted(F.TOP_FIELDS))}", k)
        frac = doc.get("frac_bits", DEFAULT_FRAC_BITS)
        if type(frac) is not int or not 0 <= frac <= 15:
            top.fail(f"expected an integer 0..15 (fractional bits of the int16 Q format), got {frac!r}", "frac_bits")
        seed = doc.get("seed", 0)
        if type(seed) is not int or seed < 0:
            top.fail(f"expected an integer >= 0, got {seed!r}", "seed")
        if "description" in doc and not isinstance(doc["description"], (str, type(None))):
            top.fail("expected a string", "description")
        self.frac, self.seed = frac, seed
        seqs = doc.get("tens_trans_seq")
        if "tens_trans_seq" not in doc:
            top.fail("required field is missing", "tens_trans_seq")
        if not isinstance(seqs, YList) or not seqs:
            top.fail("expected a non-empty list of sequences {name, description, predecessor, tens_trans}",
                     "tens_trans_seq")
        sequences = [self._sequence(i + 1, s, seqs.lines[i]) for i, s in enumerate(seqs)]
        ordered = self._order(sequences)
        model = self._semantics(ordered)
        model.io = parse_io(model, doc.get("io"), self.file)
        return model

    def _sequence(self, i, node, line):
        ctx = _Ctx(self.file, f"sequence {i}", node)
        if not isinstance(node, YMap):
            raise ModelError(f"sequence {i}: expected a mapping {{name, description, predecessor, tens_trans}}",
                             self.file, line)
        if isinstance(node.get("name"), str) and node["name"].strip():
            ctx.where = f"sequence '{node['name']}'"
        for k in node:
            if k not in F.SEQ_FIELDS:
                ctx.fail(f"unknown field; allowed: {', '.join(sorted(F.SEQ_FIELDS))}", k)
        try:
            seq_name = F.name(node.get("name"))
        except F.FieldError as e:
            ctx.fail(str(e) if "name" in node else "required field is missing", "name")
        try:
            desc = F.text(node.get("description"))
        except F.FieldError as e:
            ctx.fail(str(e), "description")
        try:
            preds = F.names(node.get("predecessor"))
        except F.FieldError as e:
            ctx.fail(str(e).replace("tensor", "sequence"), "predecessor")
        ops = node.get("tens_trans")
        if not isinstance(ops, YList) or not ops:
            ctx.fail("expected a non-empty list of ops", "tens_trans")
        parsed = [self._op(seq_name, j + 1, o, ops.lines[j]) for j, o in enumerate(ops)]
        is_load = all(op.kind == "stream" and op.values["res_name"] and not op.values["src_name"] for op in parsed)
        return Sequence(seq_name, desc, preds, parsed, node.line, is_load)

    def _op(self, seq, index, node, line):
        where = f"sequence '{seq}', op {index}"
        if not isinstance(node, YMap):
            raise ModelError(f"{where}: expected a mapping with tens_trans_type", self.file, line)
        ctx = _Ctx(self.file, where, node)
        if "tens_trans_type" not in node:
            ctx.fail("required field is missing", "tens_trans_type")
        type_name = node["tens_trans_type"]
        if not isinstance(type_name, str) or type_name not in F.OP_TYPES:
            ctx.fail(f"unknown op type {type_name!r}; expected one of {', '.join(F.OP_TYPES)}", "tens_trans_type")
        kind = F.OP_TYPES[type_name]
        ctx.where = f"{where} ({type_name})"
        if kind == "stream" and F.PADDING_ALIAS in node:
            _padding_alias(ctx, node)
        values = _check_fields(ctx, node, F.SCHEMAS[kind])
        return Op(kind, type_name, seq, index, node.line, values, node)

    def _order(self, sequences):
        by_name = {}
        for s in sequences:
            if s.name in by_name:
                raise ModelError(f"sequence '{s.name}': duplicate sequence name (first on line "
                                 f"{by_name[s.name].line})", self.file, s.line)
            by_name[s.name] = s
        for s in sequences:
            for p in s.predecessors:
                if p not in by_name:
                    near = difflib.get_close_matches(p, list(by_name), 1)
                    hint = f" (did you mean '{near[0]}'?)" if near else ""
                    raise ModelError(f"sequence '{s.name}', field 'predecessor': unknown sequence '{p}'{hint}",
                                     self.file, s.line)
                if p == s.name:
                    raise ModelError(f"sequence '{s.name}', field 'predecessor': a sequence cannot precede itself",
                                     self.file, s.line)
                if s.is_load and not by_name[p].is_load:
                    raise ModelError(f"sequence '{s.name}', field 'predecessor': '{p}' runs at every inference, "
                                     f"but '{s.name}' only loads constants (model image) and runs before it",
                                     self.file, s.line)
        # Ancestors (transitive predecessors) and a stable topological order.
        self.ancestors = {}
        order, state = [], {}

        def visit(s, path):
            if state.get(s.name) == "done":
                return
            if state.get(s.name) == "active":
                cycle = " -> ".join(path[path.index(s.name):] + [s.name])
                raise ModelError(f"sequence '{s.name}', field 'predecessor': cycle {cycle}", self.file, s.line)
            state[s.name] = "active"
            anc = set()
            for p in s.predecessors:
                visit(by_name[p], path + [s.name])
                anc |= {p} | self.ancestors[p]
            self.ancestors[s.name] = anc
            state[s.name] = "done"
            order.append(s)

        for s in sequences:
            visit(s, [])
        return [s for s in order if s.is_load] + [s for s in order if not s.is_load]

    # -- semantics ---------------------------------------------------------------
    def _semantics(self, sequences):
        self.live, self.dead, self.tensors, self.used = {}, {}, [], set()
        load_ops, ops = [], []
        for s in sequences:
            for op in s.ops:
                ctx = _Ctx(self.file, op.where(), op.node)
                getattr(self, f"_sem_{op.kind}")(op, ctx, s)
                for n in op.values["dealloc"]:
                    t = self._resolve(ctx, n, "dealloc", s)
                    del self.live[n]
                    self.dead[n] = (op.seq, op.index)
                    op.dealloc.append(t)
                (load_ops if s.is_load else ops).append(op)
        model = Model(self.file, self.frac, self.seed, self.config, sequences, self.tensors, load_ops, ops)
        layer = 0
        for op in ops:
            if op.kind != "stream":
                if layer == MAX_LAYERS:
                    raise ModelError(f"{op.where()}: layer {layer}: a model has at most {MAX_LAYERS} compute layers "
                                     f"(TENS_CONV, TENS_LIN, TENS_MAXPOOL): the server keeps one timing per layer "
                                     f"(spec/model_image.py MAX_LAYERS)", self.file, op.line)
                op.layer, layer = layer, layer + 1
        for t in self.tensors:
            if id(t) not in self.used:
                model.warnings.append(f"{self.file}:{t.line}: {t.where()}: tensor '{t.name}' is never used")
        _plan(model, self.file)
        return model

    def _resolve(self, ctx, n, fld, seq):
        if n in self.live:
            t = self.live[n]
            if t.seq != seq.name and t.seq not in self.ancestors[seq.name]:
                ctx.fail(f"tensor '{n}' is defined in sequence '{t.seq}', which is not a predecessor of "
                         f"'{seq.name}' (add it to 'predecessor')", fld)
            self.used.add(id(t))
            return t
        if n in self.dead:
            s, i = self.dead[n]
            ctx.fail(f"tensor '{n}' was deallocated by sequence '{s}', op {i}", fld)
        near = difflib.get_close_matches(n, list(self.live), 1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        ctx.fail(f"unknown tensor '{n}'{hint}", fld)

    def _define(self, ctx, op, fld, dims, layout, kind, seq):
        n = op.values[fld]
        if n in self.live:
            t = self.live[n]
            ctx.fail(f"tensor '{n}' already exists ({t.where()}); deallocate it first or use another name", fld)
        line = op.node.key_lines.get(fld, op.line) if op.node is not None else op.line
        t = Tensor(n, tuple(dims), layout, kind, seq.name, op.index, line)
        t.index = len(self.tensors)
        self.tensors.append(t)
        self.live[n] = t
        self.dead.pop(n, None)
        return t

    def _expect(self, ctx, t, fld, ndims, layout, what):
        if len(t.dims) not in ndims:
            n = " or ".join(f"{d}D" for d in ndims)
            ctx.fail(f"tensor '{t.name}' has dimensions {list(t.dims)}; {what} must be {n}", fld)
        if t.layout != layout:
            ctx.fail(f"tensor '{t.name}' is {t.layout}; {what} must be {layout}", fld)

    def _divisible(self, ctx, value, what, fld):
        if value % self.vw:
            ctx.fail(f"{what} = {value} is not divisible by the SIMD vector width VW = {self.vw}", fld)

    def _stream_padding(self, ctx, t, pad, fld):
        if pad >= self.vw:
            ctx.fail(f"stream padding {pad} must be less than the SIMD vector width VW = {self.vw}", fld)
        if pad and t.dims[t.aligned] != self.vw:
            ctx.fail(f"stream padding needs the aligned dimension (dimension {t.aligned} of {list(t.dims)}, "
                     f"{t.layout}) to equal VW = {self.vw}", fld)

    def _sem_stream(self, op, ctx, seq):
        v = op.values
        if not v["src_name"] and not v["res_name"]:
            ctx.fail("TENS_STREAM needs src_name (C2H) and/or res_name (H2C)")
        if not v["src_name"] and v["src_stream_padding"]:
            ctx.fail("given without src_name (no C2H stream)", "src_stream_padding")
        if v["src_name"]:
            t = self._resolve(ctx, v["src_name"], "src_name", seq)
            self._stream_padding(ctx, t, v["src_stream_padding"], "src_stream_padding")
            op.c2h, op.c2h_padding = t, v["src_stream_padding"]
        if not v["res_name"]:
            for k in ("layout", "res_dim", "h2c_data_source"):
                if v[k] is not None:
                    ctx.fail("given without res_name (no H2C stream)", k)
            if v["res_stream_padding"]:
                ctx.fail("given without res_name (no H2C stream)", "res_stream_padding")
            return
        for k in ("layout", "res_dim", "h2c_data_source"):
            if v[k] is None:
                ctx.fail("required for an H2C stream (res_name is set)", k)
        dims, lay = v["res_dim"], v["layout"]
        a = L.aligned_dim(len(dims), lay)
        self._divisible(ctx, dims[a], f"aligned dimension {a} of {list(dims)} ({lay})", "res_dim")
        kind = "const" if seq.is_load else "input"
        limit = self.config.model_window_size if kind == "const" else self.config.tensor_window_size
        nbytes = int(np.prod(dims)) * L.ELEMENT_BYTES
        if nbytes > limit:
            win = "model" if kind == "const" else "tensor"
            ctx.fail(f"memory exhausted: {nbytes} bytes do not fit the {limit}-byte {win} window", "res_dim")
        try:
            src = sources.parse(v["h2c_data_source"])
        except sources.SourceError as e:
            ctx.fail(str(e), "h2c_data_source")
        t = self._define(ctx, op, "res_name", dims, lay, kind, seq)
        self._stream_padding(ctx, t, v["res_stream_padding"], "res_stream_padding")
        t.stream_padding, t.source = v["res_stream_padding"], src
        n = t.host_elements(t.stream_padding)
        try:
            raw, real = sources.values(src, n, self.frac, self.seed, f"{seq.name}/{t.name}", self.csv, self.npy)
        except sources.SourceError as e:
            ctx.fail(str(e), "h2c_data_source")
        t.raw = L.host_to_device(raw, dims, lay, t.stream_padding)
        t.real = L.host_to_device(real, dims, lay, t.stream_padding)
        op.h2c, op.h2c_padding = t, t.stream_padding

    def _epilogue(self, op, ctx, seq, n_out, bias_dims, what):
        v = op.values
        op.act, op.bias_en, op.repl_bias, op.bn_en = v["nlin_f_type"], v["bias_en"], v["repl_bias"], v["batch_norm_en"]
        if op.bias_en:
            if not v["bias_name"]:
                ctx.fail("required when bias_en is True", "bias_name")
            op.bias = self._resolve(ctx, v["bias_name"], "bias_name", seq)
            want = (n_out, 1) if op.repl_bias else bias_dims
            self._expect(ctx, op.bias, "bias_name", (len(want),), "col_first", "the bias")
            if op.bias.dims != want:
                kind = "replicated" if op.repl_bias else "general (repl_bias False)"
                ctx.fail(f"tensor '{op.bias.name}' has dimensions {list(op.bias.dims)}; a {kind} {what} bias "
                         f"must be {list(want)}", "bias_name")
        if op.bn_en:
            if not v["batch_name"]:
                ctx.fail("required when batch_norm_en is True", "batch_name")
            op.batch = self._resolve(ctx, v["batch_name"], "batch_name", seq)
            self._expect(ctx, op.batch, "batch_name", (2,), "col_first", "the batch-norm tensor")
            if op.batch.dims != (n_out, 2):
                ctx.fail(f"tensor '{op.batch.name}' has dimensions {list(op.batch.dims)}; batch norm needs "
                         f"{[n_out, 2]} (scale, offset per output channel)", "batch_name")

    def _window(self, ctx, op, h, w, k):
        (kh, kw), (sh, sw), (t, b, l, r) = k, op.values["stride"], op.values["padding"]
        ho, wo = (h + t + b - kh) // sh + 1, (w + l + r - kw) // sw + 1
        if h + t + b < kh or w + l + r < kw:
            ctx.fail(f"the {kh}x{kw} window does not fit the padded {h + t + b}x{w + l + r} input: "
                     "the output would be empty", "padding")
        op.kernel, op.stride, op.pad = (kh, kw), (sh, sw), (t, b, l, r)
        return ho, wo

    def _sem_conv(self, op, ctx, seq):
        v = op.values
        op.a = a = self._resolve(ctx, v["src_a_name"], "src_a_name", seq)
        self._expect(ctx, a, "src_a_name", (4,), "row_first", "convolution weights (height_kern, width_kern, "
                     "channel_in, channel_out)")
        op.b = b = self._resolve(ctx, v["src_b_name"], "src_b_name", seq)
        self._expect(ctx, b, "src_b_name", (3,), "col_first", "the convolution input (height_in, width_in, channel_in)")
        kh, kw, cin, cout = a.dims
        if b.dims[2] != cin:
            ctx.fail(f"input '{b.name}' has {b.dims[2]} channels, the weights '{a.name}' expect {cin}", "src_b_name")
        self._divisible(ctx, cin, "channel_in", "src_a_name")
        self._divisible(ctx, cout, "channel_out", "src_a_name")
        ho, wo = self._window(ctx, op, b.dims[0], b.dims[1], (kh, kw))
        self._epilogue(op, ctx, seq, cout, (ho, wo, cout), "convolution")
        op.res = self._define(ctx, op, "res_name", (ho, wo, cout), "col_first", "activation", seq)

    def _sem_lin(self, op, ctx, seq):
        v = op.values
        op.a = a = self._resolve(ctx, v["src_a_name"], "src_a_name", seq)
        self._expect(ctx, a, "src_a_name", (2,), "row_first", "linear weights (n_out, n_in)")
        op.b = b = self._resolve(ctx, v["src_b_name"], "src_b_name", seq)
        self._expect(ctx, b, "src_b_name", (2, 3), "col_first", "the linear input (n_in, n_b) or (height, width, "
                     "channel_in)")
        n_out, n_in = a.dims
        x_in, n_b = (b.dims if len(b.dims) == 2 else (b.elements, 1))
        if x_in != n_in:
            flat = " (flattened)" if len(b.dims) == 3 else ""
            ctx.fail(f"input '{b.name}'{flat} has n_in = {x_in}, the weights '{a.name}' expect {n_in}", "src_b_name")
        self._divisible(ctx, n_out, "n_out", "src_a_name")
        self._divisible(ctx, n_in, "n_in", "src_a_name")
        self._epilogue(op, ctx, seq, n_out, (n_out, n_b), "linear")
        op.res = self._define(ctx, op, "res_name", (n_out, n_b), "col_first", "activation", seq)

    def _sem_maxpool(self, op, ctx, seq):
        v = op.values
        op.a = a = self._resolve(ctx, v["src_name"], "src_name", seq)
        self._expect(ctx, a, "src_name", (3,), "col_first", "the maxpool input (height_in, width_in, channel_in)")
        self._divisible(ctx, a.dims[2], "channel_in", "src_name")
        kh, kw = v["kern_size"]
        t, b, l, r = v["padding"]
        if max(t, b) >= kh or max(l, r) >= kw:
            ctx.fail(f"padding {[t, b, l, r]} must be smaller than the {kh}x{kw} kernel on each side "
                     "(a window entirely in the padding has no maximum)", "padding")
        ho, wo = self._window(ctx, op, a.dims[0], a.dims[1], (kh, kw))
        op.res = self._define(ctx, op, "res_name", (ho, wo, a.dims[2]), "col_first", "activation", seq)


class _Arena:
    """First-fit allocator over [0, size) with coalescing free blocks."""

    def __init__(self, size, align):
        self.size, self.align = size, align
        self.free = [(0, size)]
        self.blocks = {}
        self.peak = 0

    def alloc(self, key, nbytes):
        n = _align(max(nbytes, 1), self.align)
        for i, (start, length) in enumerate(self.free):
            if length >= n:
                self.free[i:i + 1] = [(start + n, length - n)] if length > n else []
                self.blocks[key] = (start, n)
                self.peak = max(self.peak, start + n)
                return start
        return None

    def release(self, key):
        start, n = self.blocks.pop(key)
        self.free.append((start, n))
        self.free.sort()
        merged = []
        for s, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((s, n))
        self.free = merged

    def largest_free(self):
        return max((n for _, n in self.free), default=0)


def const_layout(model, keep=None):
    """Where each constant of the image's constant block sits, in memory
    layout: ({tensor index: byte offset, or None when it is left out},
    block bytes).  The tanh table first (if used), then each loaded
    constant in load order, each aligned to a vector; ``keep`` (tensor
    indices; None: all) are the constants stored, the others are left out
    and the rest close up (the compiler's "each constant once")."""
    vec = max(4, L.ELEMENT_BYTES * model.vw)
    off = 0 if model.tanh_table_offset is None else _align(SPU_LOOKUP_SIZE * L.ELEMENT_BYTES, vec)
    offsets = {}
    for op in model.load_ops:
        t = op.h2c
        if keep is not None and t.index not in keep:
            offsets[t.index] = None
            continue
        offsets[t.index] = off
        off = _align(off + t.nbytes, vec)
    return offsets, off


def _plan(model, file):
    """Place every tensor: constants in the image, inputs in the tensor
    window, activations and the output block in the arena."""
    c = model.config
    vec = max(4, L.ELEMENT_BYTES * c.vw)
    # Constants: the tanh SPU table first (if any op needs it), then each constant.
    if any(op.act == "tanh" for op in model.ops if op.kind != "stream"):
        model.tanh_table_offset = 0
    for op in model.load_ops:
        op.h2c.region = "CONST"
    offsets, model.const_bytes = const_layout(model)
    for op in model.load_ops:
        op.h2c.offset = offsets[op.h2c.index]
    # Outputs: one block at the top of the arena, in C2H order.
    model.arena_base = FIRMWARE_RESERVE
    model.arena_size = c.main_ram_size - c.model_window_size - c.tensor_window_size - c.server_window_size \
        - FIRMWARE_RESERVE
    out = 0
    for op in model.ops:
        if op.c2h is not None:
            op.c2h_offset = out
            out = _align(out + op.c2h.host_elements(op.c2h_padding) * L.ELEMENT_BYTES, INPUT_ALIGN)
            if out > model.arena_size:
                raise ModelError(f"{op.where()}, field 'src_name': memory exhausted: the outputs need {out} "
                                 f"bytes, the activation arena has {model.arena_size}", file,
                                 op.node.key_lines.get("src_name", op.line))
            model.outputs.append(op)
    model.output_bytes = out
    model.output_offset = (model.arena_size - out) // vec * vec
    arena = _Arena(model.output_offset, vec)
    inp = 0
    for op in model.ops:
        line = op.node.key_lines.get("res_name", op.line)
        if op.h2c is not None:
            t = op.h2c
            op.h2c_offset = inp
            inp = _align(inp + t.host_elements(t.stream_padding) * L.ELEMENT_BYTES, INPUT_ALIGN)
            if inp > c.tensor_window_size:
                raise ModelError(f"{op.where()}, field 'res_dim': memory exhausted: the input tensors need "
                                 f"{inp} bytes, the tensor window has {c.tensor_window_size}", file, line)
            model.inputs.append(op)
            if not t.stream_padding:
                t.region, t.offset = "INPUT", op.h2c_offset
        new = op.res if op.kind != "stream" else (op.h2c if op.h2c is not None and op.h2c.stream_padding else None)
        if new is not None:
            at = arena.alloc(id(new), new.nbytes)
            if at is None:
                live = ", ".join(f"{t.name} ({t.nbytes})" for t in model.tensors
                                 if id(t) in arena.blocks) or "none"
                raise ModelError(
                    f"{op.where()}, field 'res_name': memory exhausted: tensor '{new.name}' needs {new.nbytes} "
                    f"bytes; the activation arena ({model.output_offset} bytes besides {out} bytes of outputs) has "
                    f"at most {arena.largest_free()} contiguous bytes free; live: {live}", file, line)
            new.region, new.offset = "ARENA", at
        for t in op.dealloc:
            if id(t) in arena.blocks:
                arena.release(id(t))
    model.input_bytes = inp
    model.arena_peak = arena.peak


def parse_model(text, file=None, base_dir=".", config=None):
    return _Parser(file, base_dir, config or SoCConfig()).parse(text)


def load_model(path, config=None):
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ModelError(f"cannot read the model: {e}", str(path)) from None
    return parse_model(text, str(path), path.parent, config)
