"""Model image container: what the host writes with WModel.

Header (little-endian u32 words), then ``payload_length`` bytes of payload
(op descriptors and constants, written by the model compiler ``sw/model``):

    0  magic           MODEL_MAGIC ("TSMD")
    4  version         FORMAT_VERSION
    8  payload_length  bytes after the header
    12 crc32           CRC-32 (zlib) of the payload
    16 input_bytes     input tensor size (WTensor length, Acquire frame)
    20 output_bytes    output tensor size (RTensor length)
    24 n_layers        layers, one RTimings word each
    28 reserved        0

Payload (version 2; every field one little-endian u32 word, offsets in bytes
from the start of the payload)::

    model section     MODEL_FIELDS
    tensor table      n_tensors x TENSOR_FIELDS
    op table          n_ops x OP_FIELDS, in execution order
    strings           tensor names, NUL-terminated
    constants         const_bytes, each constant tensor in its memory layout

The layouts are defined here once as field lists; ``c_header()`` generates
``model_image.h`` (word indices and codes for the firmware), ``decode_image``
reads an image back.  docs/models.md explains every field.
"""

import struct
import zlib

MODEL_MAGIC = 0x444D5354      # "TSMD" little-endian
# 1: opaque payload.  2: payload = model section + tensor/op tables + constants.
# 3: accelerator records carry their kernels' code origin.  4: the TensorEngine
# programs use the compact transfer encoding (spec/tensor_isa.py, 518ef1e).
FORMAT_VERSION = 4
HEADER_FIELDS = ["magic", "version", "payload_length", "crc32", "input_bytes", "output_bytes", "n_layers", "reserved"]
HEADER_SIZE = 4 * len(HEADER_FIELDS)

# -- payload layout -----------------------------------------------------------

MODEL_FIELDS = [
    ("n_tensors", "entries in the tensor table"),
    ("n_ops", "entries in the op table (inference ops, execution order)"),
    ("tensor_table", "byte offset of the tensor table"),
    ("op_table", "byte offset of the op table"),
    ("strings", "byte offset of the string table"),
    ("strings_bytes", "size of the string table"),
    ("consts", "byte offset of the constants (MODEL_REGION_CONST offsets count from here)"),
    ("const_bytes", "size of the constants"),
    ("frac_bits", "fractional bits of the Q format of every tensor"),
    ("vw", "SIMD vector width the model was checked for"),
    ("arena_base", "byte offset of the activation arena from the start of main RAM"),
    ("arena_bytes", "bytes of the arena the plan uses (activations and outputs)"),
    ("output_offset", "arena offset of the output block (RTensor data, output_bytes long)"),
    ("tensor_words", "words per tensor-table entry (len(TENSOR_FIELDS))"),
    ("op_words", "words per op-table entry (len(OP_FIELDS))"),
    ("accel", "byte offset of the accelerator section (ACCEL_FIELDS), 0 when the image has none"),
]

TENSOR_FIELDS = [
    ("name", "string-table offset of the tensor's name"),
    ("region", "MODEL_REGION_*: where the tensor lives"),
    ("layout", "MODEL_LAYOUT_*"),
    ("ndim", "2, 3 or 4"),
    ("dim0", "dimensions in YAML order (1 beyond ndim)"),
    ("dim1", ""),
    ("dim2", ""),
    ("dim3", ""),
    ("aligned_dim", "index of the dimension lanes run along (divisible by VW)"),
    ("offset", "byte offset within the region"),
    ("bytes", "size in memory (int16 elements, padded lanes included)"),
    ("stream_padding", "padded lanes of the H2C stream that created it (0 if none)"),
]

OP_FIELDS = [
    ("opcode", "MODEL_OPCODE_*"),
    ("layer", "RTimings index of a compute op; NONE for streams"),
    ("res", "result tensor (tensor-table index); for MODEL_OPCODE_STREAM_IN the tensor written"),
    ("src_a", "conv/lin weights, maxpool input, MODEL_OPCODE_STREAM_OUT source tensor"),
    ("src_b", "conv/lin input (feature map / vector)"),
    ("bias", "bias tensor or NONE"),
    ("batch", "batch-norm tensor (channel, 2): column 0 scale, column 1 offset; or NONE"),
    ("flags", "MODEL_FLAG_* bits"),
    ("act", "MODEL_ACT_*"),
    ("kernel_h", "conv/maxpool window"),
    ("kernel_w", ""),
    ("stride_h", ""),
    ("stride_w", ""),
    ("pad_top", "padding rows above"),
    ("pad_bottom", "padding rows below"),
    ("pad_left", "padding columns left"),
    ("pad_right", "padding columns right"),
    ("io_offset", "stream ops: tensor-window offset (IN) or output-block offset (OUT) of the host-side data"),
    ("io_bytes", "stream ops: host-side bytes (padded lanes not sent)"),
    ("stream_padding", "stream ops: padded lanes per VW group of the aligned dimension"),
    ("tanh_table", "MODEL_ACT_TANH: MODEL_REGION_CONST offset of the 64-word SPU table; else NONE"),
    ("tanh_shift", "MODEL_ACT_TANH: saturating left shift applied before the SPU lookup"),
]

# Accelerator section (sw/model/accel.py): per compute op, the PCORE kernel
# code and the TensorEngine instruction words the firmware runs instead of its
# software path.  The instructions hold bus addresses: the image runs
# accelerated only at the model window it was compiled for, on the geometry it
# was compiled for; otherwise the firmware uses its software path.
ACCEL_FIELDS = [
    ("n_programs", "program records that follow"),
    ("geometry", "NP in bits 7..0, NT in 15..8, VW in 23..16 (as the PCORE INFO register)"),
    ("memory", "private words per thread in 15..0, shared words per PCORE in 31..16 (PCORE MEMINFO)"),
    ("model_window", "bus address of the model window the addresses assume"),
    ("data_bytes", "bytes of arranged constants (weights in the kernels' order) after these words, "
                   "before the first program record (a multiple of 4)"),
    ("kernels_resident", "1: every program's code has its own place in the PCORE instruction memory "
                         "(code_origin), all fit at once: the firmware loads them once per model and queues "
                         "consecutive programs back to back; 0: each program loads its code before it runs"),
]
ACCEL_RECORD_FIELDS = [
    ("op", "op-table index of the compute op"),
    ("code_words", "PCORE instruction words that follow (loaded at instruction address code_origin)"),
    ("code_origin", "PCORE instruction address of the first code word (the code is assembled for it)"),
    ("te_words", "TensorEngine instruction words after the code; the last instruction is CALLBACK(layer)"),
    ("macs", "useful multiply-accumulates of the op"),
]

NONE = 0xFFFFFFFF
MAX_LAYERS = 64           # compute layers an image may have: the server's per-layer timings (RTimings)
OPCODES = {"STREAM_IN": 1, "STREAM_OUT": 2, "CONV": 3, "LIN": 4, "MAXPOOL": 5}
REGIONS = {"CONST": 0, "INPUT": 1, "ARENA": 2}
LAYOUTS = {"col_first": 0, "row_first": 1}
ACTS = {"identity": 0, "relu": 1, "tanh": 2}
FLAGS = {"BIAS": 1, "REPL_BIAS": 2, "BATCH_NORM": 4}


class ModelImageError(ValueError):
    pass


def build_image(payload: bytes, input_bytes: int, output_bytes: int, n_layers: int) -> bytes:
    for name, v in (("input_bytes", input_bytes), ("output_bytes", output_bytes)):
        if v % 4:
            raise ModelImageError(f"{name}={v}: tensors move in multiples of 4 bytes")
    payload = bytes(payload) + b"\0" * (-len(payload) % 4)
    return struct.pack("<8I", MODEL_MAGIC, FORMAT_VERSION, len(payload), zlib.crc32(payload),
                       input_bytes, output_bytes, n_layers, 0) + payload


def parse_header(image: bytes) -> dict:
    if len(image) < HEADER_SIZE:
        raise ModelImageError(f"model image of {len(image)} bytes is shorter than its {HEADER_SIZE}-byte header")
    h = dict(zip(HEADER_FIELDS, struct.unpack_from("<8I", image)))
    if h["magic"] != MODEL_MAGIC:
        raise ModelImageError(f"bad magic 0x{h['magic']:08x} (expected 0x{MODEL_MAGIC:08x})")
    if h["version"] != FORMAT_VERSION:
        raise ModelImageError(f"format version {h['version']}, this build reads {FORMAT_VERSION}")
    payload = image[HEADER_SIZE:HEADER_SIZE + h["payload_length"]]
    if len(payload) != h["payload_length"]:
        raise ModelImageError("model image truncated")
    if zlib.crc32(payload) != h["crc32"]:
        raise ModelImageError("model payload CRC-32 mismatch")
    return h


def table_bytes(n_tensors: int, n_ops: int) -> int:
    """Bytes of the model section and both tables (what precedes the strings)."""
    return 4 * (len(MODEL_FIELDS) + n_tensors * len(TENSOR_FIELDS) + n_ops * len(OP_FIELDS))


def _pack(fields, values, what):
    unknown = set(values) - {f for f, _ in fields}
    if unknown:
        raise ModelImageError(f"{what}: unknown field(s) {sorted(unknown)}")
    words = [values.get(f, 0) for f, _ in fields]
    for (f, _), w in zip(fields, words):
        if not 0 <= w <= 0xFFFFFFFF:
            raise ModelImageError(f"{what}: field {f}={w} does not fit a u32 word")
    return struct.pack(f"<{len(words)}I", *words)


def encode_payload(tensors, ops, names, consts: bytes, model: dict) -> bytes:
    """The version-2 payload.  ``tensors``/``ops``: lists of dicts keyed by
    TENSOR_FIELDS/OP_FIELDS names (missing fields are 0) where a tensor's
    ``name`` is the string itself; ``model``: MODEL_FIELDS values other than
    the counts and offsets, which are computed here."""
    strings = bytearray()
    name_at = {}
    for n in names:
        if n not in name_at:
            name_at[n] = len(strings)
            strings += n.encode() + b"\0"
    strings += b"\0" * (-len(strings) % 16)
    head = table_bytes(len(tensors), len(ops))
    m = dict(model, n_tensors=len(tensors), n_ops=len(ops),
             tensor_table=4 * len(MODEL_FIELDS),
             op_table=4 * (len(MODEL_FIELDS) + len(tensors) * len(TENSOR_FIELDS)),
             strings=head, strings_bytes=len(strings), consts=head + len(strings), const_bytes=len(consts),
             tensor_words=len(TENSOR_FIELDS), op_words=len(OP_FIELDS))
    out = bytearray(_pack(MODEL_FIELDS, m, "model section"))
    for t in tensors:
        out += _pack(TENSOR_FIELDS, dict(t, name=name_at[t["name"]]), f"tensor {t['name']}")
    for i, op in enumerate(ops):
        out += _pack(OP_FIELDS, op, f"op {i}")
    return bytes(out + strings + consts)


def _unpack(fields, data, offset, what):
    n = len(fields)
    if offset + 4 * n > len(data):
        raise ModelImageError(f"{what} runs past the end of the payload")
    return dict(zip((f for f, _ in fields), struct.unpack_from(f"<{n}I", data, offset)))


def decode_image(image: bytes) -> dict:
    """Header, model section, tensors (with names), ops and constants of an
    image; every offset and count is checked against the payload size."""
    h = parse_header(image)
    p = bytes(image[HEADER_SIZE:HEADER_SIZE + h["payload_length"]])
    m = _unpack(MODEL_FIELDS, p, 0, "model section")
    if m["tensor_words"] != len(TENSOR_FIELDS) or m["op_words"] != len(OP_FIELDS):
        raise ModelImageError(f"table entries of {m['tensor_words']}/{m['op_words']} words, "
                              f"this build reads {len(TENSOR_FIELDS)}/{len(OP_FIELDS)}")
    for a, n in (("strings", "strings_bytes"), ("consts", "const_bytes")):
        if m[a] + m[n] > len(p):
            raise ModelImageError(f"{a} section [{m[a]}, +{m[n]}) runs past the {len(p)}-byte payload")
    strings = p[m["strings"]:m["strings"] + m["strings_bytes"]]
    tensors = []
    for i in range(m["n_tensors"]):
        t = _unpack(TENSOR_FIELDS, p, m["tensor_table"] + 4 * i * len(TENSOR_FIELDS), f"tensor {i}")
        end = strings.find(b"\0", t["name"])
        if t["name"] >= len(strings) or end < 0:
            raise ModelImageError(f"tensor {i}: name offset {t['name']} outside the string table")
        t["name"] = strings[t["name"]:end].decode()
        tensors.append(t)
    ops = [_unpack(OP_FIELDS, p, m["op_table"] + 4 * i * len(OP_FIELDS), f"op {i}") for i in range(m["n_ops"])]
    consts = p[m["consts"]:m["consts"] + m["const_bytes"]]
    accel = decode_accel(p, m["accel"]) if m["accel"] else None
    return {"header": h, "model": m, "tensors": tensors, "ops": ops, "consts": consts, "accel": accel}


def accel_data_offset() -> int:
    """Offset of the arranged constants from the start of the accelerator section."""
    return 4 * len(ACCEL_FIELDS)


def encode_accel(programs, geometry, memory, model_window, data=b"", kernels_resident=False) -> bytes:
    """The accelerator section: ``programs`` is a list of (op index, code
    words, code origin, TensorEngine words, macs); ``data`` the arranged
    constants the programs read (at accel_data_offset() in the section);
    ``kernels_resident``: the codes all fit the instruction memory at their
    origins at once (sw/model/accel.py, place_kernels)."""
    if len(data) % 4:
        raise ModelImageError(f"accelerator data of {len(data)} bytes is not a multiple of 4")
    out = bytearray(_pack(ACCEL_FIELDS, {"n_programs": len(programs), "geometry": geometry, "memory": memory,
                                         "model_window": model_window, "data_bytes": len(data),
                                         "kernels_resident": int(bool(kernels_resident))},
                          "accelerator section"))
    out += data
    for op, code, origin, te, macs in programs:
        out += _pack(ACCEL_RECORD_FIELDS, {"op": op, "code_words": len(code), "code_origin": origin,
                                           "te_words": len(te), "macs": macs},
                     f"accelerator program of op {op}")
        out += struct.pack(f"<{len(code) + len(te)}I", *code, *te)
    return bytes(out)


def decode_accel(p: bytes, offset: int) -> dict:
    a = _unpack(ACCEL_FIELDS, p, offset, "accelerator section")
    pos = offset + accel_data_offset()
    if a["data_bytes"] % 4 or pos + a["data_bytes"] > len(p):
        raise ModelImageError(f"accelerator data of {a['data_bytes']} bytes does not fit the payload")
    a["data"] = bytes(p[pos:pos + a["data_bytes"]])
    pos += a["data_bytes"]
    a["programs"] = []
    for i in range(a["n_programs"]):
        r = _unpack(ACCEL_RECORD_FIELDS, p, pos, f"accelerator program {i}")
        pos += 4 * len(ACCEL_RECORD_FIELDS)
        n = r["code_words"] + r["te_words"]
        if pos + 4 * n > len(p):
            raise ModelImageError(f"accelerator program {i} runs past the end of the payload")
        words = struct.unpack_from(f"<{n}I", p, pos)
        pos += 4 * n
        r["code"], r["te"] = list(words[:r["code_words"]]), list(words[r["code_words"]:])
        a["programs"].append(r)
    return a


def with_accel(payload: bytes, section: bytes) -> bytes:
    """``payload`` with ``section`` appended (4-byte aligned) and the model
    section's ``accel`` word pointing at it."""
    payload = bytes(payload) + b"\0" * (-len(payload) % 4)
    word = [f for f, _ in MODEL_FIELDS].index("accel")
    head = bytearray(payload)
    struct.pack_into("<I", head, 4 * word, len(payload))
    return bytes(head) + section


def c_header() -> str:
    lines = ["/* Generated from spec/model_image.py by tensorsoc: do not edit. */",
             "#ifndef TSOC_MODEL_IMAGE_H", "#define TSOC_MODEL_IMAGE_H", "",
             f"#define MODEL_IMAGE_MAGIC   0x{MODEL_MAGIC:08x}u",
             f"#define MODEL_IMAGE_VERSION {FORMAT_VERSION}",
             f"#define MODEL_IMAGE_HEADER_SIZE {HEADER_SIZE}", ""]
    for i, name in enumerate(HEADER_FIELDS):
        lines.append(f"#define MODEL_IMAGE_W_{name.upper():<15} {i}  /* word index */")
    for prefix, fields, what in (("MODEL_SECTION", MODEL_FIELDS, "payload word 0 on"),
                                 ("MODEL_TENSOR", TENSOR_FIELDS, "tensor-table entry"),
                                 ("MODEL_OP", OP_FIELDS, "op-table entry"),
                                 ("MODEL_ACCEL", ACCEL_FIELDS, "accelerator section"),
                                 ("MODEL_ACCEL_REC", ACCEL_RECORD_FIELDS, "accelerator program record")):
        lines += ["", f"/* {what}: word indices */", f"#define {prefix}_WORDS {len(fields)}"]
        for i, (name, doc) in enumerate(fields):
            comment = f"  /* {doc} */" if doc else ""
            lines.append(f"#define {prefix}_W_{name.upper():<15} {i}{comment}")
    lines += ["", f"#define MODEL_NONE 0x{NONE:08x}u", f"#define MODEL_MAX_LAYERS {MAX_LAYERS}"]
    for prefix, codes in (("MODEL_OPCODE", OPCODES), ("MODEL_REGION", REGIONS), ("MODEL_LAYOUT", LAYOUTS),
                          ("MODEL_ACT", ACTS), ("MODEL_FLAG", FLAGS)):
        for name, code in codes.items():
            lines.append(f"#define {prefix}_{name.upper():<12} {code}")
    lines += ["", "#endif", ""]
    return "\n".join(lines)
