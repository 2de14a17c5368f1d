"""The host's view of a tensorsoc device: one API over any transport.

Async first (cocotb testbenches await it); :class:`SyncDevice` runs each call
to completion for the CLI and spidev.  Every operation follows the datasheet's
sequences and checks the outcome:

* reads (RID, RSpec, RTensor, RTimings) are followed by RERROR; an error is
  cleared with RStatus and raised as :class:`DeviceError`;
* writes and actions poll RERROR until their status bit clears.  RERROR
  carries the status bits and the cause in one word and clears nothing
  (protocol.RERROR_STATUS_SHIFT); RStatus, which clears the error bit and
  the cause, is read only to clear an error already seen.  Polling RERROR
  then RStatus instead would lose the cause of an error the firmware raises
  between the two reads.

Time-outs are measured on the transport's clock (simulated time in cocotb,
wall time with spidev).
"""

import asyncio
import inspect
from dataclasses import dataclass

from tensorsoc.spec.host_protocol import (BUSY_MASK, CHUNK_SIZE, WORD, Cmd, ErrorCause, Status, decode_rerror,
                              decode_spec, status_names)
from tensorsoc.sw.host.transport import Transport


class ProtocolUsageError(ValueError):
    """The call cannot be a valid transaction (e.g. a length that is not a
    multiple of 4); raised before anything is sent."""


class DeviceError(Exception):
    """The device reported an error: ``cmd`` failed with ``cause`` (read with
    RERROR; None if the device set the error bit without a cause the host
    could read).  ``status`` is the status word that showed the error."""

    def __init__(self, cmd, cause, status=None, detail=""):
        self.cmd = cmd
        self.cause = cause
        self.status = status
        self.detail = detail
        what = cause.name if isinstance(cause, ErrorCause) else (f"cause {cause}" if cause is not None
                                                                 else "unknown cause")
        super().__init__(f"{_name(cmd)} failed: {what}" + (f" ({detail})" if detail else ""))


class DeviceTimeout(Exception):
    """A status bit did not clear in time."""

    def __init__(self, cmd, waited_s, status, detail=""):
        self.cmd = cmd
        self.waited_s = waited_s
        self.status = status
        super().__init__(f"{_name(cmd)}: device still busy after {waited_s:.6g} s "
                         f"(status {status})" + (f" ({detail})" if detail else ""))


def _name(cmd):
    try:
        return Cmd(cmd).name
    except ValueError:
        return f"command 0x{cmd:02x}"


@dataclass(frozen=True)
class StatusWord:
    """The 32-bit RStatus word."""
    value: int

    def bit(self, s: Status) -> bool:
        return bool(self.value >> s & 1)

    @property
    def busy(self) -> bool:
        return bool(self.value & BUSY_MASK)

    @property
    def error(self) -> bool:
        return self.bit(Status.ERROR)

    def __int__(self):
        return self.value

    def __str__(self):
        names = status_names(self.value)
        return f"0x{self.value:08x}" + (f" [{', '.join(names)}]" if names else " [idle]")


def _cause(value: int):
    try:
        return ErrorCause(value)
    except ValueError:
        return value


def _u32(data: bytes) -> int:
    return int.from_bytes(data, "little")


class Device:
    """``timeout``: seconds (transport clock) a write or action may keep its
    status bit set; ``poll_interval``: pause between status polls;
    ``timeout_scale``: every wait's limit (``timeout`` and the ones a call
    names) multiplied by it, for a device whose MCORE is slower (a VexRiscv
    without caches)."""

    def __init__(self, transport: Transport, timeout: float = 1.0, poll_interval: float = 0.0,
                 timeout_scale: float = 1.0):
        self.transport = transport
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.timeout_scale = timeout_scale

    # -- plain reads ---------------------------------------------------------
    async def status(self) -> StatusWord:
        """RStatus (clears the error bit and cause)."""
        return StatusWord(_u32(await self.transport.transaction(Cmd.RSTATUS, read_len=4)))

    async def peek(self) -> tuple[StatusWord, object]:
        """RERROR: (status word, cause) without clearing anything."""
        status, cause = decode_rerror(_u32(await self.transport.transaction(Cmd.RERROR, read_len=4)))
        return StatusWord(status), _cause(cause)

    async def error_cause(self):
        """The first error since the error bit was last cleared
        (ErrorCause.NONE if none); not cleared by reading."""
        return (await self.peek())[1]

    async def clear_error(self):
        """Reads the cause, then clears it with RStatus; returns the cause."""
        cause = await self.error_cause()
        await self.status()
        return cause

    async def id(self) -> int:
        return _u32(await self._read(Cmd.RID, 4))

    async def spec(self) -> dict:
        return decode_spec(await self._read(Cmd.RSPEC, 16))

    async def read_tensor(self, nbytes: int | None = None) -> bytes:
        """RTensor of ``nbytes`` (default: the output size from RSpec)."""
        if nbytes is None:
            nbytes = (await self.spec())["output_bytes"]
        return await self._read(Cmd.RTENSOR, self._length(nbytes, "read_tensor"))

    async def read_frame(self, nbytes: int) -> bytes:
        """RTensor after an acquisition: the raw sensor frame."""
        return await self._read(Cmd.RTENSOR, self._length(nbytes, "read_frame"))

    async def timings(self, nlayers: int) -> list[int]:
        """RTimings: microseconds per layer of the last inference."""
        if nlayers < 0:
            raise ProtocolUsageError(f"timings: nlayers must be >= 0, got {nlayers}")
        data = await self._read(Cmd.RTIMINGS, 4 * nlayers)
        return [_u32(data[i:i + 4]) for i in range(0, len(data), 4)]

    # -- writes and actions --------------------------------------------------
    async def write_model(self, data: bytes, timeout: float | None = None):
        await self._write_chunked(Cmd.WMODEL, data, timeout)

    async def write_server(self, data: bytes, timeout: float | None = None):
        await self._write_chunked(Cmd.WSERVER, data, timeout)

    async def write_tensor(self, data: bytes, timeout: float | None = None):
        data = self._data(data, "write_tensor")
        await self.transport.transaction(Cmd.WTENSOR, data)
        await self.wait_clear(Status.BUSY_WRITE, Cmd.WTENSOR, timeout, f"{len(data)} bytes")

    async def infer(self, timeout: float | None = None):
        """Inference, then wait for bit 1 to clear."""
        await self.transport.transaction(Cmd.INFERENCE)
        await self.wait_clear(Status.WAIT_INFERENCE, Cmd.INFERENCE, timeout)

    async def acquire(self, timeout: float | None = None):
        """Acquire, then wait for bit 2 to clear."""
        await self.transport.transaction(Cmd.ACQUIRE)
        await self.wait_clear(Status.WAIT_ACQUIRE, Cmd.ACQUIRE, timeout)

    # -- load once, infer many ---------------------------------------------------
    async def run(self, data: bytes, output_bytes: int, nlayers: int = 0, timeout: float | None = None):
        """One inference on the loaded model: WTensor ``data``, Inference,
        RTensor of ``output_bytes``, RTimings of ``nlayers`` layers (none when
        0).  Returns (output bytes, per-layer microseconds)."""
        await self.write_tensor(data)
        await self.infer(timeout=timeout)
        out = await self.read_tensor(output_bytes)
        return out, (await self.timings(nlayers) if nlayers else [])

    async def infer_many(self, model_image: bytes, inputs, output_bytes: int, nlayers: int = 0,
                         timeout: float | None = None, model_timeout: float | None = None, each=None):
        """Load once, infer many: WModel ``model_image`` once, then :meth:`run`
        for every input (bytes) in ``inputs``.  Returns [(output bytes,
        per-layer us)], one per input.  ``each(i, output, us)``, if given, is
        called (and awaited when it returns an awaitable) after each inference."""
        await self.write_model(model_image, timeout=model_timeout)
        results = []
        for i, data in enumerate(inputs):
            out, us = await self.run(data, output_bytes, nlayers, timeout)
            results.append((out, us))
            if each is not None:
                r = each(i, out, us)
                if inspect.isawaitable(r):
                    await r
        return results

    async def wait_clear(self, bit: Status, cmd: Cmd, timeout: float | None = None, detail=""):
        """Poll RERROR until ``bit`` clears; raise DeviceError (after clearing
        the error with RStatus) when the error bit shows, DeviceTimeout after
        ``timeout``."""
        timeout = (self.timeout if timeout is None else timeout) * self.timeout_scale
        start = self.transport.now()
        while True:
            status, cause = await self.peek()
            if status.error:
                await self.status()
                raise DeviceError(cmd, cause if cause != ErrorCause.NONE else None, status, detail)
            if not status.bit(bit):
                return status
            waited = self.transport.now() - start
            if waited >= timeout:
                raise DeviceTimeout(cmd, waited, status, detail)
            if self.poll_interval:
                await self.transport.sleep(self.poll_interval)

    # -- helpers -------------------------------------------------------------
    async def _read(self, cmd, nbytes):
        data = await self.transport.transaction(cmd, read_len=nbytes)
        await self._check(cmd, f"{nbytes}-byte read")
        return data

    async def _check(self, cmd, detail=""):
        status, cause = await self.peek()
        if status.error:
            await self.status()
            raise DeviceError(cmd, cause if cause != ErrorCause.NONE else None, status, detail)

    async def _write_chunked(self, cmd, data, timeout):
        data = self._data(data, _name(cmd).lower())
        chunks = [data[i:i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
        if len(data) % CHUNK_SIZE == 0:
            chunks.append(b"")        # a full last chunk needs an empty one to end the sequence
        for i, chunk in enumerate(chunks):
            await self.transport.transaction(cmd, chunk)
            await self.wait_clear(Status.BUSY_WRITE, cmd, timeout,
                                  f"chunk {i + 1} of {len(chunks)}, offset {i * CHUNK_SIZE}")

    @staticmethod
    def _length(nbytes, what):
        if not isinstance(nbytes, int) or nbytes < 0 or nbytes % WORD:
            raise ProtocolUsageError(f"{what}: length must be a non-negative multiple of {WORD} bytes, "
                                     f"got {nbytes!r}")
        return nbytes

    @staticmethod
    def _data(data, what):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ProtocolUsageError(f"{what}: data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) % WORD:
            raise ProtocolUsageError(f"{what}: length must be a multiple of {WORD} bytes, got {len(data)}")
        return data


class SyncDevice:
    """A Device whose coroutine methods run to completion on a private event
    loop (for the CLI and spidev); other attributes pass through."""

    def __init__(self, transport: Transport, **kwargs):
        self.device = Device(transport, **kwargs)
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name):
        attr = getattr(self.device, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        def run(*args, **kwargs):
            return self._loop.run_until_complete(attr(*args, **kwargs))
        run.__name__ = name
        run.__doc__ = attr.__doc__
        return run

    def close(self):
        self._loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
