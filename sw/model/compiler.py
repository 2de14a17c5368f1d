"""Model compiler: a checked :class:`~sw.model.frontend.Model` -> model image.

The image is ``spec/model_image.py``'s container (header, CRC-32) around a
version-2 payload: tensor table, op table (inference ops in execution order,
what the firmware runs), names and the constants in their memory layout.
Constants loaded by the load sequences are stored as the device holds them
(stream-padded lanes included, as 0), so the firmware uses them in place.
"""

from dataclasses import dataclass, field

import numpy as np

from tensorsoc.spec.memory_map import MEM_MAP
from tensorsoc.spec import model_image as mi
from tensorsoc.sw.model import frontend as F
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.yamlsrc import ModelError
from tensorsoc.sw.model.quant import tanh_shift, tanh_table
from tensorsoc.sw.model import accel, roofline
from tensorsoc.sw.model.accel import DataBlob, kernels_resident


def _tensor_entry(t, offsets=None):
    d = list(t.dims) + [1] * (4 - len(t.dims))
    offset = offsets.get(t.index, t.offset) if offsets is not None and t.region == "CONST" else t.offset
    return {"name": t.name, "region": mi.REGIONS[t.region], "layout": mi.LAYOUTS[t.layout],
            "ndim": len(t.dims), "dim0": d[0], "dim1": d[1], "dim2": d[2], "dim3": d[3],
            "aligned_dim": t.aligned, "offset": mi.NONE if offset is None else offset, "bytes": t.nbytes,
            "stream_padding": t.stream_padding}


def _idx(t):
    return mi.NONE if t is None else t.index


def _op_entry(model, op):
    e = {"layer": mi.NONE if op.layer is None else op.layer, "res": mi.NONE, "src_a": mi.NONE,
         "src_b": mi.NONE, "bias": mi.NONE, "batch": mi.NONE, "tanh_table": mi.NONE}
    if op.kind == "stream":
        return e          # the caller fills the direction (a duplex stream gives two entries)
    flags = (mi.FLAGS["BIAS"] * op.bias_en | mi.FLAGS["REPL_BIAS"] * (op.bias_en and op.repl_bias)
             | mi.FLAGS["BATCH_NORM"] * op.bn_en)
    t, b, l, r = op.pad
    e.update(opcode=mi.OPCODES[{"conv": "CONV", "lin": "LIN", "maxpool": "MAXPOOL"}[op.kind]],
             res=op.res.index, src_a=op.a.index, src_b=_idx(op.b), bias=_idx(op.bias if op.bias_en else None),
             batch=_idx(op.batch if op.bn_en else None), flags=int(flags),
             act=mi.ACTS[op.act] if op.kind != "maxpool" else mi.ACTS["identity"],
             kernel_h=op.kernel[0], kernel_w=op.kernel[1], stride_h=op.stride[0], stride_w=op.stride[1],
             pad_top=t, pad_bottom=b, pad_left=l, pad_right=r)
    if op.kind != "maxpool" and op.act == "tanh":
        e.update(tanh_table=model.tanh_table_offset, tanh_shift=tanh_shift(model.frac_bits))
    return e


def op_entries(model):
    out = []
    for op in model.ops:
        if op.kind != "stream":
            out.append(_op_entry(model, op))
            continue
        if op.c2h is not None:          # C2H first: a duplex stream sends before it receives
            out.append(dict(_op_entry(model, op), opcode=mi.OPCODES["STREAM_OUT"], src_a=op.c2h.index,
                            io_offset=op.c2h_offset, stream_padding=op.c2h_padding,
                            io_bytes=op.c2h.host_elements(op.c2h_padding) * L.ELEMENT_BYTES))
        if op.h2c is not None:
            out.append(dict(_op_entry(model, op), opcode=mi.OPCODES["STREAM_IN"], res=op.h2c.index,
                            io_offset=op.h2c_offset, stream_padding=op.h2c_padding,
                            io_bytes=op.h2c.host_elements(op.h2c_padding) * L.ELEMENT_BYTES))
    return out


def _int16_bytes(values):
    return np.asarray(values, dtype=np.int64).astype("<i2").tobytes()


def constants(model, offsets=None, nbytes=None):
    """The constant block: the tanh table (if used) and each stored constant
    in its memory layout (``offsets``, ``nbytes``: frontend.const_layout's; default:
    the frontend's layout, every constant)."""
    if offsets is None:
        offsets, nbytes = {op.h2c.index: op.h2c.offset for op in model.load_ops}, model.const_bytes
    buf = bytearray(nbytes)
    if model.tanh_table_offset is not None:
        tab = _int16_bytes(tanh_table(model.frac_bits))
        buf[model.tanh_table_offset:model.tanh_table_offset + len(tab)] = tab
    for op in model.load_ops:
        t, at = op.h2c, offsets[op.h2c.index]
        if at is None:
            continue
        data = _int16_bytes(L.to_memory(t.raw, t.layout))
        buf[at:at + len(data)] = data
    return bytes(buf)


def _model_words(model):
    return {"frac_bits": model.frac_bits, "vw": model.vw, "arena_base": model.arena_base,
            "arena_bytes": model.output_offset + model.output_bytes if model.output_bytes else model.arena_peak,
            "output_offset": model.output_offset}


def accel_programs(model, payload, data=None, offsets=None, in_place=None):
    """sw/model/accel.py's programs for ``model`` placed at the configuration's
    windows, given the payload before the accelerator section (which fixes
    where the constants sit).  {op index: LayerProgram or reason}.  ``data``:
    the DataBlob of the arranged constants (accel_data_base()).  ``offsets``:
    frontend.const_layout()'s (default: the frontend's); ``in_place``: a set that
    collects the indices of the constants the programs read from the
    constant block itself (not arranged)."""
    cfg = model.config
    main_ram = MEM_MAP["main_ram"]
    win = cfg.windows(main_ram)
    m = mi._unpack(mi.MODEL_FIELDS, payload, 0, "model section")
    const_base = win["model"][0] + mi.HEADER_SIZE + m["consts"]
    bases = {"CONST": const_base, "ARENA": main_ram + model.arena_base, "INPUT": win["tensor"][0]}
    table = const_base + model.tanh_table_offset if model.tanh_table_offset is not None else None

    def address(t):
        if t.region != "CONST":
            return bases[t.region] + t.offset
        if in_place is not None:
            in_place.add(t.index)
        at = t.offset if offsets is None else offsets[t.index]
        if at is None:
            raise AssertionError(f"constant '{t.name}' was left out of the constant block but a program reads it there")
        return const_base + at
    return accel.plan(model, cfg, address, tanh_table_addr=table, data=data)


def accel_data_base(model, payload):
    """Bus address of the accelerator section's arranged constants when the
    section follows ``payload`` (mi.with_accel pads it to 4 bytes)."""
    win = model.config.windows(MEM_MAP["main_ram"])["model"][0]
    return win + mi.HEADER_SIZE + len(payload) + (-len(payload) % 4) + mi.accel_data_offset()


@dataclass
class Placement:
    """Where the compiler put one compute op: on the accelerator (its
    program is in the image's accelerator section) or on the MCORE's software
    path (``reason``: the rule that stops it).  The firmware has the last
    word at run time (accel.c accel_program: an image compiled for another
    geometry or model window runs in software): `tsoc sim` reports that."""
    op_index: int                 # index in the image's op table
    op: object                    # sw.model.frontend.Op
    program: object = None        # sw.model.accel.LayerProgram, or None
    reason: str = None            # why it stays in software

    @property
    def layer(self):
        return self.op.layer

    @property
    def engine(self):
        return "accel" if self.program is not None else "software"


@dataclass
class CompileReport:
    """What compile_report() decided, per compute op (``layers``, in layer
    order).  ``dropped``: why the whole accelerator section was left out of
    an image that asked for one (None: it was not)."""
    layers: list = field(default_factory=list)
    dropped: str = None
    left_out: int = 0             # bytes of memory-layout constants left out (arranged only)
    arranged: int = 0             # bytes of arranged constants in the accelerator section
    const_bytes: int = 0          # bytes of the constant block (memory layout)

    @property
    def software(self):
        return [p for p in self.layers if p.program is None]

    @property
    def accelerated(self):
        return len(self.layers) - len(self.software)


NO_ACCELERATOR = "the configuration has no accelerator (accelerator=0): the MCORE runs every layer"
NO_SECTION = "compiled without the accelerator section (the software-path baseline)"


def _placements(model, progs=None, reason=None):
    """Placement of every compute op: from plan()'s ``progs`` ({op index:
    LayerProgram or reason}), or all in software for ``reason``."""
    out, index = [], 0
    for op in model.ops:
        if op.kind == "stream":
            index += (op.c2h is not None) + (op.h2c is not None)
            continue
        p = progs.get(index, "no program") if progs is not None else reason
        out.append(Placement(index, op, None if isinstance(p, str) else p, p if isinstance(p, str) else None))
        index += 1
    return out


def require_accel_error(model, report):
    """The ModelError of --require-accel for ``report``, or None when every
    compute op runs on the accelerator."""
    soft = report.software
    if not soft:
        return None
    first = soft[0]
    head = (f"{first.op.where()}: layer {first.layer} would run on the MCORE software path: {first.reason} "
            f"(--require-accel: {len(soft)} of {len(report.layers)} layer(s) in software)")
    more = "".join(f"\n  also layer {p.layer} ({p.op.where()}, line {p.op.line}): {p.reason}" for p in soft[1:])
    return ModelError(head + more,
                      model.file, first.op.line)


def _payload(model, offsets=None, nbytes=None):
    """(payload before the accelerator section, its constant block)."""
    consts = constants(model, offsets, nbytes)
    payload = mi.encode_payload([_tensor_entry(t, offsets) for t in model.tensors], op_entries(model),
                                [t.name for t in model.tensors], consts, _model_words(model))
    return payload, consts


def _with_section(model, payload, offsets=None, in_place=None):
    """``payload`` + the accelerator section: (payload, placements)."""
    cfg = model.config
    data = DataBlob(accel_data_base(model, payload))
    layers = _placements(model, accel_programs(model, payload, data, offsets, in_place))
    progs = [p.program for p in layers if p.program is not None]
    section = mi.encode_accel([(p.op_index, p.code, p.origin, p.words, p.macs) for p in progs],
                              kernels_resident=kernels_resident(progs, cfg.pcore_imem_words),
                              geometry=cfg.np | cfg.nt << 8 | cfg.vw << 16,
                              memory=cfg.pcore_private_words | cfg.pcore_shared_words << 16,
                              model_window=cfg.windows(MEM_MAP["main_ram"])["model"][0],
                              data=data.bytes())
    return mi.with_accel(payload, section), layers, len(data.bytes())


def _arranged_only(model, layers):
    """Indices of the constants that only accelerated layers read (not a
    software-path op, not a stream op; a constant no op reads is kept)."""
    accelerated = {id(p.op) for p in layers if p.program is not None}
    by_accel, by_other = set(), set()
    for op in model.ops:
        for t in (getattr(op, k, None) for k in ("a", "b", "bias", "batch", "c2h", "h2c")):
            if t is not None and t.region == "CONST":
                (by_accel if op.kind != "stream" and id(op) in accelerated else by_other).add(t.index)
    return by_accel - by_other


def compile_report(model, accel=None, require_accel=False, portable=False):
    """(model image bytes, CompileReport).  Raises ModelError when the image
    does not fit the model window, naming the load op whose constant crosses
    the limit.  ``accel`` (default: the configuration has an accelerator)
    appends the accelerator section (sw/model/accel.py).  When that section
    would not fit the model window the image is compiled without it (every
    layer in software; ``report.dropped`` says so, and model.warnings).
    ``require_accel``: raise ModelError instead when any compute op would run
    in software, naming the layer, the op and the rule.

    Each constant is stored once: a constant that only accelerated layers
    read is in the accelerator section, arranged for them, and left out of
    the constant block (its tensor-table offset is NONE), so that the image
    runs only on an SoC with the accelerator it was compiled for (the
    firmware refuses to run such a layer in software, naming it).
    ``portable`` keeps the memory-layout copies as well: the image then also
    runs, every layer in software where needed, on any SoC."""
    payload, consts = _payload(model)
    if accel is None:
        accel = bool(model.config.accelerator)
    report = CompileReport()
    if accel:
        in_place = set()
        payload_full, report.layers, report.arranged = _with_section(model, payload, in_place=in_place)
        every = {op.h2c.index for op in model.load_ops}
        keep = every if portable else every - (_arranged_only(model, report.layers) - in_place)
        if keep != every:
            offsets, nbytes = F.const_layout(model, keep)
            payload, consts = _payload(model, offsets, nbytes)
            payload, layers, report.arranged = _with_section(model, payload, offsets)
            assert [p.engine for p in layers] == [p.engine for p in report.layers]
            report.layers = layers
            report.left_out = sum(t.nbytes for t in model.tensors if t.index in every - keep)
        else:
            payload = payload_full
    else:
        why = NO_SECTION if model.config.accelerator else NO_ACCELERATOR
        report.layers = _placements(model, reason=why)
    report.const_bytes = len(consts)
    image = mi.build_image(payload, model.input_bytes, model.output_bytes, model.n_layers)
    limit = model.config.model_window_size
    if accel and len(image) > limit:
        plain = compile_model(model, accel=False)      # raises if even that does not fit
        msg = (f"the accelerator section would make the image {len(image)} bytes, more than the "
               f"{limit}-byte model window: compiled without it (every layer on the software path)")
        if msg not in model.warnings:
            model.warnings.append(msg)
        report.dropped = msg
        why = (f"the accelerator section does not fit the model window (image {len(image)} bytes "
               f"with it, window {limit})")
        report.layers = [Placement(p.op_index, p.op, None, why) for p in report.layers]
        image = plain
    elif len(image) > limit:
        overhead = len(image) - len(consts)
        culprit = next((op for op in model.load_ops if overhead + op.h2c.offset + op.h2c.nbytes > limit), None)
        where = f"{culprit.where()}, field 'res_dim'" if culprit else "model"
        line = culprit.node.key_lines.get("res_dim", culprit.line) if culprit else None
        raise ModelError(f"{where}: memory exhausted: the model image takes {len(image)} bytes "
                         f"({len(consts)} of constants), the model window has {limit}", model.file, line)
    if require_accel:
        err = require_accel_error(model, report)
        if err is not None:
            raise err
    return image, report


def compile_model(model, accel=None, require_accel=False, portable=False):
    """The model image (bytes): compile_report() without the report."""
    return compile_report(model, accel, require_accel, portable)[0]


def placement_lines(model, report):
    """Human-readable: where each compute layer runs and why, with its
    roofline bounds (sw/model/roofline.py); a loud line when the accelerator
    section was dropped."""
    cfg = model.config
    lines = []
    if report.dropped:
        lines.append(f"  WARNING: {model.file}: {report.dropped}")
    lines.append(f"  where each layer runs (accelerator: TensorEngine + PCOREs; software: the MCORE), "
                 f"bounds at NP x VW = {cfg.np * cfg.vw} MACs/clock and {roofline.bus_bytes_per_clock(cfg)} "
                 f"DDR bytes/clock:")
    for p in report.layers:
        r = roofline.layer(p.op, cfg, program=p.program)
        bound = f"{r.macs:>8} MACs, {r.min_ddr_bytes:>7} DDR bytes, bound {r.bound_cycles:>7} cycles ({r.bound})"
        if p.program is not None:
            kernel = p.program.kernel.split(" ", 1)[0] or p.program.kind
            how = f"accelerator  {kernel}, {getattr(p.program, 'tiling', '') or f'{p.program.passes} pass(es)'}"
        else:
            how = f"SOFTWARE     {p.reason}"
        lines.append(f"    L{p.layer:<3} {p.op.type_name:<13} {bound}  {how}")
    n = len(report.layers)
    lines.append(f"  {report.accelerated} of {n} layer(s) on the accelerator"
                 + (f"; {n - report.accelerated} on the MCORE software path" if report.software else ""))
    if report.arranged:
        lines.append(f"  constants: {report.const_bytes} B in memory layout, {report.arranged} B arranged for the "
                     f"accelerator; each stored once"
                     + (f" ({report.left_out} B read only by accelerated layers are arranged only: the image "
                        f"needs an SoC with this accelerator; --portable keeps both)" if report.left_out else ""))
    return lines


def summary(model, image=None, report=None):
    """Human-readable description of a checked (and compiled) model;
    ``report`` (compile_report's) adds where each layer runs."""
    lines = [f"{model.file}: {len(model.sequences)} sequence(s), {len(model.tensors)} tensor(s), "
             f"{model.n_layers} layer(s), Q{16 - model.frac_bits}.{model.frac_bits}, VW={model.vw}"]
    for s in model.sequences:
        kind = "load (constants)" if s.is_load else "inference"
        lines.append(f"  sequence '{s.name}' [{kind}]: {len(s.ops)} op(s)")
    for op in model.ops:
        if op.kind == "stream":
            if op.c2h is not None:
                lines.append(f"    C2H  {op.c2h.name} {list(op.c2h.dims)} -> output +{op.c2h_offset}")
            if op.h2c is not None:
                lines.append(f"    H2C  {op.h2c.name} {list(op.h2c.dims)} {op.h2c.layout} <- input +{op.h2c_offset} "
                             f"({op.h2c.source})")
        else:
            lines.append(f"    L{op.layer:<3} {op.type_name:<13} {op.res.name} {list(op.res.dims)} "
                         f"act={op.act if op.kind != 'maxpool' else '-'} arena +{op.res.offset}")
    lines.append(f"  input {model.input_bytes} B (tensor window {model.config.tensor_window_size}), "
                 f"output {model.output_bytes} B, constants {model.const_bytes} B, "
                 f"arena peak {model.arena_peak} B of {model.output_offset} (+{model.output_bytes} outputs)")
    if image is not None:
        lines.append(f"  image {len(image)} B (model window {model.config.model_window_size}), "
                     f"format version {mi.FORMAT_VERSION}")
    if report is not None:
        lines += placement_lines(model, report)
    lines += [f"  warning: {w}" for w in model.warnings if report is None or w != report.dropped]
    return "\n".join(lines)
