"""The host protocol of the inference-engine datasheet, defined once.

The SPI/QPI slave (cores/host_spi/), the server firmware (through the
generated ``host_protocol.h``), the host library (sw/host/device.py) and the
verification environment all take their command codes, counts, status bits,
error causes and layouts from here.

Transactions: CS_N low, one command byte, then for W* commands the data bytes,
for R* commands ``DUMMY_CLOCKS`` clocks then the data bytes, CS_N high.  Bits
go LSB first (SPI) or least-significant nibble first (QPI); an MSB-first
build option exists.  Data lengths are multiples of 4 bytes.
"""

from dataclasses import dataclass
from enum import IntEnum

DEVICE_ID = 0x00000633
# Clock edges (datasheet: the host clocks data out on the rising edge, the
# device samples on the falling edge, read data is clocked out on rising
# edges): SCLK idles low (CPOL 0), data is sampled on the trailing edge
# (CPHA 1).  That is SPI mode 1 (Linux spidev SPI_MODE_1), not mode 0: a
# mode-0 host samples read data one clock late (docs/host_protocol.md).
SPI_MODE = 1
DUMMY_CLOCKS = 16
CHUNK_SIZE = 256          # WModel / WServer chunk; a shorter chunk ends the sequence
WORD = 4                  # data lengths are multiples of this


class Cmd(IntEnum):
    RSTATUS = 0x01
    RID = 0x03
    RSPEC = 0x05
    RTENSOR = 0x07
    RTIMINGS = 0x09
    WMODEL = 0x02
    WSERVER = 0x04
    WTENSOR = 0x06
    INFERENCE = 0x08
    ACQUIRE = 0x0A
    # tensorsoc extension: the cause of the last error (status bit 8), read
    # like RStatus; not cleared by reading.
    RERROR = 0x0B


# Codes of the datasheet's worked examples, accepted as aliases.
ALIASES = {0x80: Cmd.WMODEL, 0x81: Cmd.WSERVER, 0x90: Cmd.WTENSOR}


class Kind(IntEnum):
    READ = 0      # command, DUMMY_CLOCKS, data from the device
    WRITE = 1     # command, data to the device
    ACTION = 2    # command only


@dataclass(frozen=True)
class CommandInfo:
    cmd: Cmd
    kind: Kind
    read_len: int | None      # fixed read length in bytes (None: set by the model/firmware)
    allowed_while_busy: bool  # accepted while status bits 0..2 are set
    chunked: bool = False     # WModel / WServer: 256-byte chunks
    summary: str = ""
    # Accepted while the only busy bit is bit 0 of a WTensor still being
    # processed: the datasheet's typical inference cycle sends Inference
    # right after WTensor, with no status poll between (docs/host_protocol.md,
    # "Datasheet notes").  The firmware takes it after the tensor.
    behind_tensor_write: bool = False


COMMANDS = {c.cmd: c for c in [
    CommandInfo(Cmd.RSTATUS, Kind.READ, 4, True, summary="read the status word; clears the error bit"),
    CommandInfo(Cmd.RID, Kind.READ, 4, False, summary="read the device ID (0x00000633)"),
    CommandInfo(Cmd.RSPEC, Kind.READ, 16, False, summary="read the 16-byte system spec"),
    CommandInfo(Cmd.RTENSOR, Kind.READ, None, False, summary="read the output tensor (or an acquired frame)"),
    CommandInfo(Cmd.RTIMINGS, Kind.READ, None, False, summary="read per-layer times of the last inference (us, u32 each)"),
    CommandInfo(Cmd.WMODEL, Kind.WRITE, None, False, chunked=True, summary="write the model, 256-byte chunks"),
    CommandInfo(Cmd.WSERVER, Kind.WRITE, None, False, chunked=True, summary="write a server firmware, 256-byte chunks"),
    CommandInfo(Cmd.WTENSOR, Kind.WRITE, None, False, summary="write the input tensor"),
    CommandInfo(Cmd.INFERENCE, Kind.ACTION, None, False, summary="run an inference", behind_tensor_write=True),
    CommandInfo(Cmd.ACQUIRE, Kind.ACTION, None, False, summary="fill the input tensor from the sensor port"),
    CommandInfo(Cmd.RERROR, Kind.READ, 4, True, summary="tensorsoc extension: cause of the last error"),
]}


def decode_command(code):
    """The command a byte stands for (aliases resolved), or None if unknown."""
    if code in ALIASES:
        return ALIASES[code]
    try:
        return Cmd(code)
    except ValueError:
        return None


class Status(IntEnum):
    """Bits of the status word."""
    BUSY_WRITE = 0        # busy with written data (chunk, tensor, server)
    WAIT_INFERENCE = 1    # inference running
    WAIT_ACQUIRE = 2      # acquisition running
    ERROR = 8             # last command had an error; cleared by reading the status


BUSY_MASK = (1 << Status.BUSY_WRITE) | (1 << Status.WAIT_INFERENCE) | (1 << Status.WAIT_ACQUIRE)


class ErrorCause(IntEnum):
    """Why the error bit was set (RERROR); the first error since the last
    RStatus is kept."""
    NONE = 0
    UNKNOWN_COMMAND = 1
    BUSY = 2              # command other than RStatus/RError while status bits 0..2 set
    PARTIAL_BYTE = 3      # CS_N released in the middle of a byte
    BAD_LENGTH = 4        # data length not a multiple of 4, or not the length the command needs
    CHUNK_TOO_LONG = 5    # WModel/WServer chunk longer than 256 bytes
    BROKEN_SEQUENCE = 6   # another command in the middle of a chunk sequence
    WINDOW_OVERFLOW = 7   # data beyond the end of its window
    NO_MODEL = 8          # inference / tensor access without a valid model (firmware)
    BAD_MODEL = 9         # model image rejected by the server firmware
    BAD_SERVER = 10       # server image rejected (magic/length/CRC)
    SENSOR = 11           # acquisition failed (firmware)
    UNDERRUN = 12         # read data not ready in time: SCLK too fast for the SoC clock
    OVERRUN = 13          # written data arrived faster than it could be stored (same cause)


class Window(IntEnum):
    """Memory windows the host can write (in main RAM)."""
    MODEL = 0
    TENSOR = 1
    SERVER = 2


# RSpec: 16 bytes, little-endian fields (offset, size, name).
RSPEC_LAYOUT = [
    (0, 1, "hw_type"),
    (1, 1, "tiles"),
    (2, 2, "internal_kib"),
    (4, 2, "flash_kib"),
    (6, 2, "external_kib"),
    (8, 4, "input_bytes"),
    (12, 4, "output_bytes"),
]
HW_TYPE_TENSORSOC = 0x54   # 'T'


def decode_spec(data: bytes) -> dict:
    if len(data) != 16:
        raise ValueError(f"RSpec returns 16 bytes, got {len(data)}")
    return {name: int.from_bytes(data[off:off + size], "little") for off, size, name in RSPEC_LAYOUT}


def encode_spec(**fields) -> bytes:
    out = bytearray(16)
    for off, size, name in RSPEC_LAYOUT:
        out[off:off + size] = int(fields.get(name, 0)).to_bytes(size, "little")
    return bytes(out)


# Messages the SPI slave posts to the server firmware (ztamMsgq), two words:
# word 0 = message code (below) | error-free; word 1 = length in bytes.
class Msg(IntEnum):
    MODEL_DONE = 1        # last WModel chunk received; word 1 = model length
    SERVER_DONE = 2       # last WServer chunk received; word 1 = server length
    TENSOR_DONE = 3       # WTensor received; word 1 = length
    INFERENCE = 4         # Inference command
    ACQUIRE_DONE = 5      # sensor frame written to the tensor window; word 1 = length


def c_header() -> str:
    """``host_protocol.h`` for the server firmware."""
    lines = ["/* Generated from spec/host_protocol.py by tensorsoc: do not edit. */",
             "#ifndef TSOC_HOST_PROTOCOL_H", "#define TSOC_HOST_PROTOCOL_H", "",
             f"#define HOST_DEVICE_ID      0x{DEVICE_ID:08x}u",
             f"#define HOST_CHUNK_SIZE     {CHUNK_SIZE}", ""]
    for c in Cmd:
        lines.append(f"#define HOST_CMD_{c.name:<14} 0x{c.value:02x}")
    lines.append("")
    for s in Status:
        lines.append(f"#define HOST_STATUS_{s.name:<15} (1u << {s.value})")
    lines.append(f"#define HOST_STATUS_BUSY_MASK       0x{BUSY_MASK:x}u")
    lines.append(f"#define HOST_RERROR_STATUS_SHIFT    {RERROR_STATUS_SHIFT}  /* RERROR = cause | status << shift */")
    lines.append("")
    for e in ErrorCause:
        lines.append(f"#define HOST_ERR_{e.name:<16} {e.value}")
    lines.append("")
    for m in Msg:
        lines.append(f"#define HOST_MSG_{m.name:<13} {m.value}")
    lines.append("")
    for off, size, name in RSPEC_LAYOUT:
        lines.append(f"#define HOST_RSPEC_{name.upper():<13} {off}  /* {size} byte(s) */")
    lines.append(f"#define HOST_HW_TYPE_TENSORSOC 0x{HW_TYPE_TENSORSOC:02x}")
    lines += ["", "#endif", ""]
    return "\n".join(lines)


# --- Helpers shared by the host library, the device model and the docs ------

# Commands accepted while a WModel/WServer chunk sequence is in progress
# (besides the same W command); anything else is BROKEN_SEQUENCE.
ALLOWED_IN_SEQUENCE = frozenset({Cmd.RSTATUS, Cmd.RERROR, Cmd.RID, Cmd.RSPEC})

# The window each write command lands in.
WINDOW_OF = {Cmd.WMODEL: Window.MODEL, Cmd.WSERVER: Window.SERVER, Cmd.WTENSOR: Window.TENSOR}

# The status bit an action command sets until it completes.
BUSY_BIT_OF = {Cmd.WMODEL: Status.BUSY_WRITE, Cmd.WSERVER: Status.BUSY_WRITE, Cmd.WTENSOR: Status.BUSY_WRITE,
               Cmd.INFERENCE: Status.WAIT_INFERENCE, Cmd.ACQUIRE: Status.WAIT_ACQUIRE}


# RERROR word (tensorsoc extension): bits 7..0 = the error cause; bits 31..16
# = bits 15..0 of the status word (busy bits, error bit), sampled together with
# the cause; nothing is cleared.  A host polls RERROR alone and sees busy bits,
# error bit and cause in one atomic word: with RERROR-then-RStatus polling an
# error raised between the two reads would be cleared by RStatus unseen.
RERROR_STATUS_SHIFT = 16


def encode_rerror(status: int, cause: int) -> int:
    return (int(cause) & 0xFF) | (status & 0xFFFF) << RERROR_STATUS_SHIFT


def decode_rerror(word: int) -> tuple[int, int]:
    """(status word bits 15..0, cause) of a RERROR word."""
    return word >> RERROR_STATUS_SHIFT & 0xFFFF, word & 0xFF


def clocks_per_byte(qpi: bool) -> int:
    """SCLK cycles per byte: 8 in SPI (1 bit a clock), 2 in QPI (a nibble a clock)."""
    return 2 if qpi else 8


def status_names(word: int) -> list[str]:
    """Names of the status bits set in ``word``, e.g. ``['BUSY_WRITE', 'ERROR']``."""
    return [s.name for s in Status if word >> s.value & 1]


def command_table_markdown() -> str:
    """The command table of docs/host_protocol.md, generated from COMMANDS."""
    aliases = {}
    for code, cmd in ALIASES.items():
        aliases.setdefault(cmd, []).append(f"0x{code:02x}")
    rows = ["| Command | Code | Aliases | Kind | Dummy clocks | Read bytes | While busy | Meaning |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for info in COMMANDS.values():
        dummy = DUMMY_CLOCKS if info.kind == Kind.READ else 0
        if info.kind == Kind.READ:
            read = str(info.read_len) if info.read_len is not None else "N (set by the firmware)"
        else:
            read = "0"
        rows.append(f"| {info.cmd.name} | 0x{info.cmd.value:02x} | {', '.join(aliases.get(info.cmd, [])) or '-'} "
                    f"| {info.kind.name.lower()}{' (256-byte chunks)' if info.chunked else ''} | {dummy} | {read} "
                    f"| {'yes' if info.allowed_while_busy else 'behind a WTensor' if info.behind_tensor_write else 'no'} "
                    f"| {info.summary} |")
    return "\n".join(rows) + "\n"
