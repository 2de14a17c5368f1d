"""Transports: how the host library puts a protocol transaction on a bus.

A *transaction* is one CS_N-low period.  The host clocks the command byte,
then the bytes it writes, then ``dummy_clocks`` clocks during which nobody
drives (QPI: the host releases Q0..Q3), then the device's bytes.  Every
transport sees the transaction the same way, as a :class:`Frame`: a number of
SCLK cycles grouped into byte *slots* (8 clocks in SPI, 2 in QPI).  Error
injection (partial bytes, missing or extra clocks, any command byte) is the
same frame with ``clocks`` set to something other than the nominal count.

:class:`BitCodec` turns bytes into the per-clock values on the wire and back
(LSB/LSN first, or MSB/MSN first as a build option); the cocotb transport
drives those values on pins, the spidev transport hands whole bytes to the
kernel, and the model transport passes slots to the behavioural model.

Concrete transports implement ``_run(frame) -> FrameResult``, ``now()`` and
``sleep()``; time is the transport's own (simulated time for cocotb, wall
time for spidev, virtual time for the model).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from tensorsoc.spec.host_protocol import COMMANDS, DUMMY_CLOCKS, Kind, clocks_per_byte, decode_command


class TransportError(Exception):
    """The transport could not do what was asked (bus fault, unsupported operation)."""


class BusContention(TransportError):
    """Host and device drove the same data line at the same time (or the device
    drove the bus while deselected)."""


def default_dummy_clocks(cmd: int, read_len: int) -> int:
    """Dummy clocks the protocol puts after the command byte: DUMMY_CLOCKS for
    read commands, none for write/action commands.  For an unknown code, dummy
    clocks are assumed when something is to be read."""
    known = decode_command(cmd)
    if known is not None:
        return DUMMY_CLOCKS if COMMANDS[known].kind == Kind.READ else 0
    return DUMMY_CLOCKS if read_len else 0


@dataclass(frozen=True)
class Frame:
    """One transaction as the host clocks it.

    ``clocks`` is the number of SCLK cycles actually given; ``None`` means the
    nominal count (command, written bytes, dummy clocks, read bytes).  Fewer
    clocks truncate the frame (CS_N released early, possibly mid-byte); more
    clocks extend the last phase (extra read clocks after a read, extra written
    zero bits after a write or action).
    """
    cmd: int
    write: bytes = b""
    read_len: int = 0
    dummy_clocks: int = DUMMY_CLOCKS
    qpi: bool = False
    clocks: int | None = None

    def __post_init__(self):
        if not 0 <= self.cmd <= 0xFF:
            raise ValueError(f"command byte out of range: {self.cmd:#x}")
        if self.read_len < 0 or self.dummy_clocks < 0 or (self.clocks is not None and self.clocks < 0):
            raise ValueError("negative length or clock count")

    @property
    def cpb(self) -> int:
        return clocks_per_byte(self.qpi)

    @property
    def out_clocks(self) -> int:
        """Clocks in which the host drives (command byte and written data)."""
        return self.cpb * (1 + len(self.write))

    @property
    def read_start(self) -> int:
        """Clock index of the first read-data clock."""
        return self.out_clocks + self.dummy_clocks

    @property
    def nominal_clocks(self) -> int:
        return self.read_start + self.cpb * self.read_len

    @property
    def total_clocks(self) -> int:
        return self.nominal_clocks if self.clocks is None else self.clocks

    @property
    def reads(self) -> bool:
        """True when clocks past the written bytes are read clocks (host releases the bus)."""
        return self.read_len > 0 or self.dummy_clocks > 0

    def host_bytes(self) -> bytes:
        """What the host drives, byte slot by byte slot, over ``total_clocks``:
        command, data, then zeros (SPI: MOSI low; QPI: released, the slot is
        only a placeholder).  A trailing partial slot is included."""
        nslots = -(-self.total_clocks // self.cpb)
        out = bytes([self.cmd]) + self.write
        return (out + bytes(max(0, nslots - len(out))))[:nslots]

    def host_drives(self, clock: int) -> bool:
        """Whether the host drives the data line(s) at ``clock`` (SPI: MOSI is
        always driven; QPI: only while sending)."""
        if not self.qpi:
            return True
        return clock < self.out_clocks or not self.reads


@dataclass
class FrameResult:
    """What the host saw.  ``data``: the whole bytes read after the dummy
    clocks (clocks with the device not driving read as the bus's idle
    value); ``clocks``: SCLK cycles given; ``undriven``: read-phase clocks
    in which the device did not drive."""
    frame: Frame
    data: bytes
    clocks: int
    undriven: int = 0


class BitCodec:
    """Per-clock values of bytes on the wire.  SPI: one bit a clock (MOSI
    out, MISO in).  QPI: one nibble a clock on Q0..Q3 (Q0 the least
    significant bit).  LSB/LSN first unless ``msb_first``."""

    def __init__(self, qpi=False, msb_first=False):
        self.qpi = qpi
        self.msb_first = msb_first
        self.cpb = clocks_per_byte(qpi)

    def encode(self, data: bytes) -> list[int]:
        """Values for consecutive clocks: bits (SPI) or nibbles (QPI)."""
        out = []
        width = 4 if self.qpi else 1
        mask = (1 << width) - 1
        order = range(self.cpb - 1, -1, -1) if self.msb_first else range(self.cpb)
        for byte in data:
            out.extend((byte >> (i * width)) & mask for i in order)
        return out

    def decode(self, values: list[int]) -> bytes:
        """Bytes from per-clock values; a trailing partial byte is dropped."""
        width = 4 if self.qpi else 1
        out = bytearray()
        for start in range(0, len(values) - self.cpb + 1, self.cpb):
            byte = 0
            for k, v in enumerate(values[start:start + self.cpb]):
                pos = self.cpb - 1 - k if self.msb_first else k
                byte |= (v & ((1 << width) - 1)) << (pos * width)
            out.append(byte)
        return bytes(out)


@dataclass
class TransportStats:
    """Traffic counters for throughput measurement.  ``busy_s`` is the time
    spent inside transactions on the transport's clock (CS_N timings
    included)."""
    transactions: int = 0
    clocks: int = 0
    bytes_written: int = 0
    bytes_read: int = 0
    busy_s: float = 0.0
    per_command: dict = field(default_factory=dict)

    def record(self, frame: Frame, seconds: float):
        self.transactions += 1
        self.clocks += frame.total_clocks
        self.bytes_written += len(frame.write)
        self.bytes_read += frame.read_len
        self.busy_s += seconds
        self.per_command[frame.cmd] = self.per_command.get(frame.cmd, 0) + 1

    def throughput(self) -> float:
        """Payload bytes (written + read) per second of bus time."""
        return (self.bytes_written + self.bytes_read) / self.busy_s if self.busy_s else 0.0


class Transport(ABC):
    """Base class: builds frames, keeps statistics; subclasses move the bits."""

    def __init__(self, qpi=False, msb_first=False):
        self.qpi = qpi
        self.msb_first = msb_first
        self.codec = BitCodec(qpi, msb_first)
        self.stats = TransportStats()

    async def transaction(self, cmd: int, write: bytes = b"", read_len: int = 0,
                          dummy_clocks: int | None = None) -> bytes:
        """One well-formed transaction; returns the ``read_len`` bytes read.
        ``dummy_clocks`` defaults to what the command needs (16 for reads,
        0 otherwise)."""
        result = await self.raw(cmd, write, read_len, dummy_clocks)
        return result.data

    async def raw(self, cmd: int, write: bytes = b"", read_len: int = 0,
                  dummy_clocks: int | None = None, clocks: int | None = None) -> FrameResult:
        """Any transaction, including malformed ones: ``clocks`` overrides the
        number of SCLK cycles (fewer: CS_N released early, possibly mid-byte;
        more: extra clocks).  ``clocks=0`` pulls CS_N low and high without a
        clock."""
        if dummy_clocks is None:
            dummy_clocks = default_dummy_clocks(cmd, read_len)
        frame = Frame(cmd, bytes(write), read_len, dummy_clocks, self.qpi, clocks)
        start = self.now()
        result = await self._run(frame)
        self.stats.record(frame, self.now() - start)
        return result

    async def partial(self, cmd: int, write: bytes = b"", bits: int = 0) -> FrameResult:
        """Sends ``bits`` bits of the command byte followed by ``write`` and
        releases CS_N there: a transaction ending mid-byte (``bits`` counted
        from the start of the frame, so ``bits=3`` ends inside the command)."""
        width = 4 if self.qpi else 1
        if bits % width:
            raise ValueError(f"QPI moves 4 bits a clock; {bits} bits is not a whole clock")
        return await self.raw(cmd, write, 0, 0, clocks=bits // width)

    @abstractmethod
    async def _run(self, frame: Frame) -> FrameResult:
        """Put ``frame`` on the bus (CS_N low, the clocks, CS_N high)."""

    @abstractmethod
    def now(self) -> float:
        """Current time in seconds on the transport's clock."""

    @abstractmethod
    async def sleep(self, seconds: float):
        """Let ``seconds`` pass on the transport's clock."""
