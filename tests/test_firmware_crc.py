"""The firmware's CRC-32 (sw/firmware/crc32.c, the model and server image
checks) against zlib.crc32, compiled with the host gcc."""

import random
import subprocess
import zlib
from pathlib import Path

FW = Path(__file__).resolve().parents[1] / "sw" / "firmware"


def test_firmware_crc32_is_zlibs(tmp_path):
    rng = random.Random(5)
    blobs = [b"", b"123456789", bytes(range(256)), bytes(rng.getrandbits(8) for _ in range(5000))]
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "crc32.h"\n'
                    "int main(void) { static uint8_t b[8192]; size_t n;\n"
                    "  while (scanf(\"%zu\", &n) == 1) { for (size_t i = 0; i < n; i++) { unsigned v; "
                    "scanf(\"%x\", &v); b[i] = (uint8_t)v; }\n"
                    "    printf(\"%08lx\\n\", (unsigned long)crc32(b, (uint32_t)n)); }\n  return 0; }\n")
    exe = tmp_path / "crc"
    subprocess.run(["cc", "-std=c99", "-O2", "-I", str(FW), "-o", str(exe), str(main), str(FW / "crc32.c")],
                   check=True)
    stdin = "".join(f"{len(b)} " + " ".join(f"{x:x}" for x in b) + "\n" for b in blobs)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.split()
    assert out == [f"{zlib.crc32(b):08x}" for b in blobs]
