"""Model image container: what the host writes with WModel.

Header (little-endian u32 words), then ``payload_length`` bytes of payload
(op descriptors and constants, written by the model compiler):

    0  magic           MODEL_MAGIC ("TSMD")
    4  version         FORMAT_VERSION
    8  payload_length  bytes after the header
    12 crc32           CRC-32 (zlib) of the payload
    16 input_bytes     input tensor size (WTensor length, Acquire frame)
    20 output_bytes    output tensor size (RTensor length)
    24 n_layers        layers, one RTimings word each
    28 reserved        0

Defined here once; ``c_header()`` generates ``model_image.h``.
"""

import struct
import zlib

MODEL_MAGIC = 0x444D5354      # "TSMD" little-endian
FORMAT_VERSION = 1
HEADER_FIELDS = ["magic", "version", "payload_length", "crc32", "input_bytes", "output_bytes", "n_layers", "reserved"]
HEADER_SIZE = 4 * len(HEADER_FIELDS)


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


def c_header() -> str:
    lines = ["/* Generated from sw/model_image.py by tensorsoc: do not edit. */",
             "#ifndef TSOC_MODEL_IMAGE_H", "#define TSOC_MODEL_IMAGE_H", "",
             f"#define MODEL_IMAGE_MAGIC   0x{MODEL_MAGIC:08x}u",
             f"#define MODEL_IMAGE_VERSION {FORMAT_VERSION}",
             f"#define MODEL_IMAGE_HEADER_SIZE {HEADER_SIZE}", ""]
    for i, name in enumerate(HEADER_FIELDS):
        lines.append(f"#define MODEL_IMAGE_W_{name.upper():<15} {i}  /* word index */")
    lines += ["", "#endif", ""]
    return "\n".join(lines)
