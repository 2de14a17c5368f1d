"""Server-firmware image format: what the host uploads with WServer and the
ROM boot code (sw/firmware/boot.c) checks before running it.

The image sits at the base of the server window at the top of main RAM:

    offset 0   magic    u32  SERVER_MAGIC
    offset 4   length   u32  payload bytes that follow the header
    offset 8   crc32    u32  CRC-32 (IEEE 802.3, as zlib.crc32) of the payload
    offset 12  reserved u32  0
    offset 16  payload       firmware linked to run at window base + 16

Defined here once; ``c_header()`` generates ``server_image.h``.
"""

import struct
import zlib

SERVER_MAGIC = 0x56525354          # "TSRV" little-endian
HEADER_SIZE = 16
FIELDS = [("magic", 0), ("length", 4), ("crc32", 8), ("reserved", 12)]


class ImageError(ValueError):
    pass


def build_image(payload: bytes, window_size: int) -> bytes:
    if len(payload) + HEADER_SIZE > window_size:
        raise ImageError(f"server firmware is {len(payload)} bytes; the window holds "
                         f"{window_size - HEADER_SIZE} bytes after the {HEADER_SIZE}-byte header")
    return struct.pack("<IIII", SERVER_MAGIC, len(payload), zlib.crc32(payload), 0) + payload


def parse_image(image: bytes):
    if len(image) < HEADER_SIZE:
        raise ImageError(f"image of {len(image)} bytes is shorter than its {HEADER_SIZE}-byte header")
    magic, length, crc, _ = struct.unpack_from("<IIII", image)
    if magic != SERVER_MAGIC:
        raise ImageError(f"bad magic 0x{magic:08x} (expected 0x{SERVER_MAGIC:08x})")
    payload = image[HEADER_SIZE:HEADER_SIZE + length]
    if len(payload) != length:
        raise ImageError(f"image truncated: header says {length} payload bytes, {len(payload)} present")
    if zlib.crc32(payload) != crc:
        raise ImageError("payload CRC-32 mismatch")
    return payload


def c_header():
    lines = ["/* Generated from spec/server_image.py by tensorsoc: do not edit. */",
             "#ifndef TSOC_SERVER_IMAGE_H", "#define TSOC_SERVER_IMAGE_H", "",
             f"#define SERVER_IMAGE_MAGIC        0x{SERVER_MAGIC:08x}u",
             f"#define SERVER_IMAGE_HEADER_SIZE  {HEADER_SIZE}"]
    for name, offset in FIELDS:
        lines.append(f"#define SERVER_IMAGE_OFF_{name.upper():<9} {offset}")
    lines += ["", "#endif", ""]
    return "\n".join(lines)
