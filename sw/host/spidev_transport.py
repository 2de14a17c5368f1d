"""Transport over Linux spidev (``/dev/spidevB.C``), through ioctl only.

SPI mode 1 (CPOL 0, CPHA 1: the host changes data on the rising SCLK edge
and samples on the falling one, as the datasheet's clock edges say;
protocol.SPI_MODE).  A transaction is one ``SPI_IOC_MESSAGE`` (CS_N held
across its transfers):

* SPI: one full-duplex transfer: command, data, 2 dummy bytes (16 clocks),
  read bytes.  LSB first: the controller's ``SPI_LSB_FIRST`` is requested;
  when the controller refuses it (many do: EINVAL), the bits are reversed in
  software and the controller runs MSB first.  ``bit_order`` says which.
* QPI (``SPI_TX_QUAD | SPI_RX_QUAD``, needs a quad-capable controller):
  a transfer with ``tx_nbits=4`` for the command and data, then one with
  ``rx_nbits=4`` and no transmit buffer for the dummy clocks and the read
  data, so the host releases Q0..Q3 after the command.  16 dummy clocks at
  4 bits a clock are 64 bits, i.e. 8 bytes of the quad receive transfer.
  Quad controllers put the high nibble first, so for the least-significant-
  nibble-first protocol the nibbles of each byte are swapped in software.
* Clocks that do not fill a byte (error injection) go in a last transfer
  with ``bits_per_word`` = the remaining bits (SPI) or 4 (QPI); the
  controller must support that word size.

Time is wall time.  ``SpidevIO`` is the operating-system layer (open, ioctl,
close); tests replace it.
"""

import ctypes
import fcntl
import os
import struct
import time

from tensorsoc.spec.host_protocol import SPI_MODE
from tensorsoc.sw.host.transport import Frame, FrameResult, Transport, TransportError

# <linux/spi/spidev.h>
SPI_CPHA = 0x01
SPI_CPOL = 0x02
SPI_LSB_FIRST = 0x08
SPI_TX_QUAD = 0x200
SPI_RX_QUAD = 0x800

_IOC_WRITE = 1
_IOC_READ = 2
SPI_IOC_MAGIC = ord("k")

# struct spi_ioc_transfer: tx_buf, rx_buf (u64), len, speed_hz (u32), delay_usecs (u16),
# bits_per_word, cs_change, tx_nbits, rx_nbits, word_delay_usecs, pad (u8): 32 bytes.
TRANSFER = struct.Struct("<QQIIHBBBBBB")


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (SPI_IOC_MAGIC << 8) | nr


def spi_ioc_message(n):
    return _ioc(_IOC_WRITE, 0, n * TRANSFER.size)


SPI_IOC_WR_MODE = _ioc(_IOC_WRITE, 1, 1)
SPI_IOC_WR_LSB_FIRST = _ioc(_IOC_WRITE, 2, 1)
SPI_IOC_WR_BITS_PER_WORD = _ioc(_IOC_WRITE, 3, 1)
SPI_IOC_WR_MAX_SPEED_HZ = _ioc(_IOC_WRITE, 4, 4)
SPI_IOC_WR_MODE32 = _ioc(_IOC_WRITE, 5, 4)


class SpidevIO:
    """The OS layer: open/ioctl/close of the spidev node."""

    def open(self, path):
        return os.open(path, os.O_RDWR)

    def ioctl(self, fd, request, arg):
        return fcntl.ioctl(fd, request, arg, True)

    def close(self, fd):
        os.close(fd)


def reverse_bits(value, width=8):
    out = 0
    for k in range(width):
        out |= (value >> k & 1) << (width - 1 - k)
    return out


class Transfer:
    """One spi_ioc_transfer with its own buffers.  ``tx=None``: receive only
    (the host releases the lines); ``receive=False``: transmit only.  Quad
    transfers are one-way (half duplex)."""

    def __init__(self, tx: bytes | None, length: int, speed_hz: int, bits_per_word=8, nbits=1, receive=True):
        self.length = length
        self.tx = ctypes.create_string_buffer(bytes(tx), length) if tx is not None else None
        self.rx = ctypes.create_string_buffer(length) if receive else None
        self.fields = (ctypes.addressof(self.tx) if self.tx is not None else 0,
                       ctypes.addressof(self.rx) if self.rx is not None else 0,
                       length, speed_hz, 0, bits_per_word, 0,
                       nbits if self.tx is not None else 0, nbits if self.rx is not None else 0, 0, 0)

    def pack(self) -> bytes:
        return TRANSFER.pack(*self.fields)

    def received(self) -> bytes:
        return self.rx.raw[:self.length] if self.rx is not None else bytes(self.length)


class SpidevTransport(Transport):
    """``lsb_first_hw``: None = ask the controller for SPI_LSB_FIRST and fall
    back to software bit reversal; False = always reverse in software."""

    def __init__(self, path, qpi=False, msb_first=False, speed_hz=10_000_000, lsb_first_hw=None,
                 io: SpidevIO | None = None):
        super().__init__(qpi=qpi, msb_first=msb_first)
        self.path = path
        self.speed_hz = speed_hz
        self.io = io or SpidevIO()
        try:
            self.fd = self.io.open(path)
        except OSError as e:
            raise TransportError(f"cannot open {path}: {e.strerror}") from e
        self.wire_lsb_first = False
        try:
            mode = ((SPI_CPOL if SPI_MODE & 2 else 0) | (SPI_CPHA if SPI_MODE & 1 else 0)
                    | ((SPI_TX_QUAD | SPI_RX_QUAD) if qpi else 0))
            self._ioctl(SPI_IOC_WR_MODE32, struct.pack("<I", mode),
                        f"set SPI mode {SPI_MODE}" + (" with quad I/O" if qpi else ""))
            self._ioctl(SPI_IOC_WR_BITS_PER_WORD, bytes([8]), "set 8 bits per word")
            self._ioctl(SPI_IOC_WR_MAX_SPEED_HZ, struct.pack("<I", speed_hz), f"set speed {speed_hz} Hz")
            if not qpi and not msb_first and lsb_first_hw is not False:
                try:
                    self.io.ioctl(self.fd, SPI_IOC_WR_LSB_FIRST, bytes([1]))
                    self.wire_lsb_first = True
                except OSError:
                    if lsb_first_hw:
                        raise
        except BaseException:
            self.io.close(self.fd)
            raise

    @property
    def bit_order(self) -> str:
        """How the protocol's bit order is produced: 'controller' or 'software'."""
        if self.qpi:
            return "software" if not self.msb_first else "controller"
        if self.msb_first:
            return "controller"
        return "controller" if self.wire_lsb_first else "software"

    def _ioctl(self, request, arg, what):
        try:
            return self.io.ioctl(self.fd, request, arg)
        except OSError as e:
            raise TransportError(f"{self.path}: cannot {what}: {e.strerror}") from e

    def close(self):
        self.io.close(self.fd)

    def now(self):
        return time.monotonic()

    async def sleep(self, seconds):
        import asyncio
        await asyncio.sleep(seconds)

    # -- packing: per-clock values <-> controller words --------------------------
    def pack_clocks(self, values: list[int]) -> tuple[bytes, int]:
        """Wire bytes for per-clock values; returns (bytes of whole words,
        clocks left over for a short last word)."""
        per = 2 if self.qpi else 8
        whole = len(values) // per
        out = bytearray()
        for i in range(whole):
            out.append(self._word(values[i * per:(i + 1) * per]))
        return bytes(out), len(values) - whole * per

    def _word(self, values):
        """One controller word from consecutive clock values (first sent first)."""
        if self.qpi:                             # quad: first nibble in the high half
            word = 0
            for v in values:
                word = word << 4 | v
            return word
        if self.wire_lsb_first:
            return sum(b << k for k, b in enumerate(values))
        return sum(b << (len(values) - 1 - k) for k, b in enumerate(values))

    def unpack_words(self, data: bytes, clocks: int) -> list[int]:
        """Per-clock values from received words (the inverse of pack_clocks)."""
        values = []
        per = 2 if self.qpi else 8
        for i, word in enumerate(data):
            n = min(per, clocks - i * per)
            if self.qpi:
                values.extend(word >> (4 * (n - 1 - k)) & 0xF for k in range(n))
            elif self.wire_lsb_first:
                values.extend(word >> k & 1 for k in range(n))
            else:
                values.extend(word >> (n - 1 - k) & 1 for k in range(n))
        return values

    def transfers_for(self, frame: Frame) -> list[tuple[Transfer, int, int]]:
        """The transfers of ``frame``: (transfer, first clock, clocks)."""
        total = frame.total_clocks
        values = self.codec.encode(frame.host_bytes())[:total]
        nbits = 4 if self.qpi else 1
        per_word = 4 if self.qpi else 1
        if self.qpi and frame.reads:
            phases = [(True, 0, min(total, frame.out_clocks)), (False, frame.out_clocks, total - frame.out_clocks)]
        else:
            phases = [(True, 0, total)]
        out = []
        for transmit, start, n in phases:
            if n <= 0:
                continue
            words, rest = self.pack_clocks(values[start:start + n])
            if words:
                out.append((Transfer(words if transmit else None, len(words), self.speed_hz, 8, nbits,
                                     receive=not (self.qpi and transmit)), start, n - rest))
            if rest:
                tail = values[start + n - rest:start + n]
                word = self._word(tail)
                out.append((Transfer(bytes([word]) if transmit else None, 1, self.speed_hz, rest * per_word,
                                     nbits, receive=not (self.qpi and transmit)), start + n - rest, rest))
        return out

    async def _run(self, frame: Frame) -> FrameResult:
        plan = self.transfers_for(frame)
        if not plan:                    # no clocks: CS_N low then high
            plan = [(Transfer(None, 0, self.speed_hz, receive=False), 0, 0)]
        message = b"".join(t.pack() for t, _, _ in plan)
        self._ioctl(spi_ioc_message(len(plan)), message, f"transfer command {frame.cmd:#04x}")
        values = []
        for t, _, clocks in plan:
            values.extend(self.unpack_words(t.received(), clocks))
        data = self.codec.decode(values[frame.read_start:]) if frame.reads else b""
        return FrameResult(frame, data, frame.total_clocks)
