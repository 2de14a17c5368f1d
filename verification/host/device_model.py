"""Behavioural reference model of the device side of the host protocol.

Cycle-free: a transaction is given as the bytes the host drove, slot by slot
(a slot is one byte time: 8 SCLK cycles in SPI, 2 in QPI), and the number of
clocks; the model answers with the byte the device drove in each slot (None
where it did not drive).  The rules are those of docs/host_protocol.md, which
the gateware slave (cores/host_spi/) implements; the UVM scoreboard uses this
model to predict status and error outcomes.

"Time" in the model is counted in transactions: work scheduled with
:meth:`DeviceModel.after` runs at the start of a later transaction, so a
firmware that finishes after ``k`` transactions is seen busy by the next
``k`` status polls.

The server firmware is pluggable (:class:`Firmware`); :class:`ReferenceFirmware`
loads models, runs inferences through a callback and fills RSpec.
"""

from dataclasses import dataclass

from tensorsoc.spec.host_protocol import (ALLOWED_IN_SEQUENCE, BUSY_MASK, CHUNK_SIZE, COMMANDS, DEVICE_ID,
                              DUMMY_CLOCKS, HW_TYPE_TENSORSOC, WINDOW_OF, WORD, Cmd, ErrorCause, Kind,
                              Msg, Status, Window, clocks_per_byte, decode_command, encode_rerror,
                              encode_spec)
from tensorsoc.sw.host.transport import Frame, FrameResult, Transport

def expected_rspec(cfg):
    """RSpec bytes 1-7 a tensorsoc of configuration ``cfg`` must return,
    worked out here from the datasheet's definitions (not from the product's
    spec/config.py rspec()): tiles = PCOREs; "kBytes internal memory on each
    tile" = one PCORE's data memories (NT threads x private words + shared
    words, in each process space, 2-byte elements); no flash; "external memory
    on each tile" = main RAM, which each PCORE reaches through the
    TensorEngine.  Without the accelerator the MCORE is the one tile, its
    SRAM the internal memory."""
    if cfg.accelerator:
        tiles = cfg.np
        internal = (cfg.nt * cfg.pcore_private_words + cfg.pcore_shared_words) * 2 * cfg.pcore_processes
    else:
        tiles, internal = 1, cfg.sram_size
    return {"tiles": tiles, "internal_kib": internal // 1024, "flash_kib": 0,
            "external_kib": cfg.main_ram_size // 1024}


DEFAULT_WINDOWS = {Window.MODEL: 16 * 1024, Window.TENSOR: 4 * 1024, Window.SERVER: 8 * 1024}


@dataclass
class Sequence:
    """A WModel/WServer chunk sequence in progress."""
    cmd: Cmd
    offset: int


@dataclass
class Job:
    remaining: int
    action: object


class Firmware:
    """The server firmware as seen by the slave: gets the messages the slave
    posts (protocol.Msg) and drives the device through DeviceModel's firmware
    interface (``finish``, ``raise_error``, ``set_read_data``, ...)."""

    def boot(self, dev: "DeviceModel"):
        """Called once when the model is created (and after a WServer upgrade)."""

    def on_message(self, dev: "DeviceModel", msg: Msg, length: int):
        raise NotImplementedError


@dataclass
class ModelInfo:
    """What the firmware learns from a model image."""
    input_bytes: int
    output_bytes: int
    layers: int = 1


def default_infer(model: bytes, tensor: bytes, info: ModelInfo):
    """A deterministic stand-in for an inference: output byte i = input byte
    (i mod n) + model byte (i mod m), per-layer times 10, 20, ... us."""
    out = bytes((tensor[i % len(tensor)] if tensor else 0) + (model[i % len(model)] if model else 0) & 0xFF
                for i in range(info.output_bytes))
    return out, [10 * (k + 1) for k in range(info.layers)]


class ReferenceFirmware(Firmware):
    """Firmware behaviour of the protocol: every completion takes ``delay``
    transactions.  ``load_model(image) -> ModelInfo | None`` (None rejects it:
    BAD_MODEL); ``accept_server(image) -> bool`` (False: BAD_SERVER);
    ``infer(model, tensor, info) -> (output, timings_us)``."""

    def __init__(self, delay=1, input_bytes=16, output_bytes=8, layers=3, load_model=None,
                 accept_server=None, infer=default_infer, tiles=1):
        self.delay = delay
        self.load_model = load_model or (lambda image: ModelInfo(input_bytes, output_bytes, layers)
                                         if image else None)
        self.accept_server = accept_server or (lambda image: len(image) > 0)
        self.infer = infer
        self.tiles = tiles
        self.model = None          # (image, ModelInfo) of the loaded model
        self.servers_started = 0

    def boot(self, dev):
        self._publish_spec(dev)

    def _publish_spec(self, dev):
        info = self.model[1] if self.model else ModelInfo(0, 0, 0)
        dev.set_spec(encode_spec(hw_type=HW_TYPE_TENSORSOC, tiles=self.tiles,
                                 internal_kib=sum(dev.window_sizes.values()) // 1024,
                                 flash_kib=0, external_kib=0,
                                 input_bytes=info.input_bytes, output_bytes=info.output_bytes))
        dev.set_expected_input(info.input_bytes)

    def on_message(self, dev, msg, length):
        dev.after(self.delay, lambda: self._handle(dev, msg, length))

    def _handle(self, dev, msg, length):
        if msg == Msg.MODEL_DONE:
            image = bytes(dev.windows[Window.MODEL][:length])
            info = self.load_model(image)
            self.model = (image, info) if info else None
            self._publish_spec(dev)
            dev.finish(Status.BUSY_WRITE, None if info else ErrorCause.BAD_MODEL)
        elif msg == Msg.SERVER_DONE:
            ok = self.accept_server(bytes(dev.windows[Window.SERVER][:length]))
            if ok:
                self.servers_started += 1
            dev.finish(Status.BUSY_WRITE, None if ok else ErrorCause.BAD_SERVER)
        elif msg == Msg.TENSOR_DONE:
            dev.finish(Status.BUSY_WRITE, None if self.model else ErrorCause.NO_MODEL)
        elif msg == Msg.INFERENCE:
            if not self.model:
                dev.finish(Status.WAIT_INFERENCE, ErrorCause.NO_MODEL)
                return
            image, info = self.model
            output, timings = self.infer(image, bytes(dev.windows[Window.TENSOR][:info.input_bytes]), info)
            dev.set_read_data(Cmd.RTENSOR, output)
            dev.set_read_data(Cmd.RTIMINGS, b"".join(int(t).to_bytes(4, "little") for t in timings))
            dev.finish(Status.WAIT_INFERENCE)
        elif msg == Msg.ACQUIRE_DONE:
            if length == 0:
                dev.finish(Status.WAIT_ACQUIRE, ErrorCause.SENSOR)
                return
            dev.set_read_data(Cmd.RTENSOR, bytes(dev.windows[Window.TENSOR][:length]))
            dev.finish(Status.WAIT_ACQUIRE)


@dataclass
class Outcome:
    """What one transaction did (for scoreboards): the decoded command (None
    if unknown or incomplete), the error it raised (None if it succeeded) and
    whether it was executed."""
    code: int | None
    cmd: Cmd | None
    error: ErrorCause | None
    clocks: int


class DeviceModel:
    """The device side of the protocol.  ``sensor()`` returns the bytes of one
    frame (or None: the acquisition fails); it is called ``sensor_delay``
    transactions after ACQUIRE.  ``chunk_delay``: transactions before the
    hardware clears BUSY_WRITE after an intermediate 256-byte chunk."""

    def __init__(self, firmware: Firmware | None = None, qpi=False, window_sizes=None, sensor=None,
                 sensor_delay=1, chunk_delay=0):
        self.qpi = qpi
        self.cpb = clocks_per_byte(qpi)
        self.window_sizes = dict(DEFAULT_WINDOWS if window_sizes is None else window_sizes)
        self.windows = {w: bytearray(n) for w, n in self.window_sizes.items()}
        self.firmware = firmware if firmware is not None else ReferenceFirmware()
        self.sensor = sensor
        self.sensor_delay = sensor_delay
        self.chunk_delay = chunk_delay
        self.busy = 0                  # status bits 0..2
        self.tensor_pending = False    # bit 0 is a WTensor's (Inference may queue behind it)
        self.error = False             # status bit 8
        self.cause = ErrorCause.NONE
        self.sequence: Sequence | None = None
        self.expected_input = 0
        self.read_data = {Cmd.RTENSOR: b"", Cmd.RTIMINGS: b""}
        self.spec = bytes(16)
        self.jobs: list[Job] = []
        self.messages: list[tuple[Msg, int]] = []     # posted to the firmware
        self.outcomes: list[Outcome] = []
        self.firmware.boot(self)

    # -- firmware interface --------------------------------------------------
    def after(self, transactions: int, action):
        """Run ``action()`` at the start of the transaction ``transactions + 1``
        from now (0: the next one)."""
        self.jobs.append(Job(transactions, action))

    def finish(self, bit: Status, error: ErrorCause | None = None):
        """Clear a busy bit, optionally reporting an error."""
        if error is not None:
            self.raise_error(error)
        self.busy &= ~(1 << bit)
        if bit == Status.BUSY_WRITE:
            self.tensor_pending = False

    def raise_error(self, cause: ErrorCause):
        """Set the error bit; the cause kept is the first since the last clear."""
        if not self.error:
            self.error = True
            self.cause = ErrorCause(cause)

    def set_expected_input(self, nbytes: int):
        self.expected_input = nbytes

    def set_read_data(self, cmd: Cmd, data: bytes):
        self.read_data[Cmd(cmd)] = bytes(data)

    def set_spec(self, spec: bytes):
        if len(spec) != 16:
            raise ValueError("RSpec is 16 bytes")
        self.spec = bytes(spec)

    # -- observable state ------------------------------------------------------
    @property
    def status(self) -> int:
        return self.busy | (self.error << Status.ERROR)

    def step(self):
        """Run one stage of the scheduled work, as if its time had come: the
        oldest scheduled job (the firmware takes its messages one at a time,
        in order: a WTensor's, then the Inference queued behind it), not the
        jobs it schedules (they are later stages).  A scoreboard that cannot
        know how long the firmware takes releases the work one stage at a
        time, until the model shows the status the device shows."""
        if self.jobs:
            self.jobs.pop(0).action()

    def run_pending(self, max_rounds=1000):
        """Let the firmware and hardware finish everything scheduled (as if
        time passed without transactions)."""
        for _ in range(max_rounds):
            if not self.jobs:
                return
            self.step()
        raise RuntimeError("device model: scheduled work never finishes")

    # -- the protocol ----------------------------------------------------------
    def _tick(self, force=False):
        """Start of a transaction: jobs whose count ran out run, the others
        count down (``force``: all run)."""
        due, keep = [], []
        for job in self.jobs:
            if job.remaining == 0 or force:
                due.append(job)
            else:
                job.remaining -= 1
                keep.append(job)
        self.jobs = keep
        for job in due:
            job.action()

    def _post(self, msg: Msg, length: int):
        self.messages.append((msg, length))
        self.firmware.on_message(self, msg, length)

    def _fail(self, cause):
        self.raise_error(cause)
        self.sequence = None
        return cause

    def transaction(self, host: bytes, clocks: int) -> list:
        """One CS_N-low period: ``host`` holds the byte the host drove in each
        slot (a trailing partial slot included), ``clocks`` the SCLK cycles.
        Returns, per slot, the byte the device drove or None."""
        if clocks == 0:
            return []
        self._tick()
        nslots = -(-clocks // self.cpb)
        miso = [None] * nslots
        code = host[0] if clocks >= self.cpb else None
        cmd = decode_command(code) if code is not None else None
        error = self._execute(code, cmd, host, clocks, miso)
        self.outcomes.append(Outcome(code, cmd, error, clocks))
        return miso

    def end_after_reset(self, clocks: int) -> list:
        """The end of a transaction during which the SoC was reset, with CS_N
        low through the reset and the command byte complete before it.  The
        device that comes out of the reset never decoded the command: it
        takes the rest of the transaction for one that ended before its
        command byte and, since it saw clocks, flags PARTIAL_BYTE when CS_N
        rises (rule 1).  Nothing is written, nothing driven."""
        self.outcomes.append(Outcome(None, None, self._fail(ErrorCause.PARTIAL_BYTE), clocks))
        return [None] * -(-clocks // self.cpb)

    def _execute(self, code, cmd, host, clocks, miso):
        if code is None:
            return self._fail(ErrorCause.PARTIAL_BYTE)
        if cmd is None:
            return self._fail(ErrorCause.UNKNOWN_COMMAND)
        info = COMMANDS[cmd]
        behind_tensor = (info.behind_tensor_write and self.tensor_pending
                         and self.busy & BUSY_MASK == 1 << Status.BUSY_WRITE)
        if self.busy & BUSY_MASK and not info.allowed_while_busy and not behind_tensor:
            return self._fail(ErrorCause.BUSY)
        if self.sequence and cmd not in ALLOWED_IN_SEQUENCE and cmd != self.sequence.cmd:
            return self._fail(ErrorCause.BROKEN_SEQUENCE)
        data_clocks = clocks - self.cpb
        partial = data_clocks % self.cpb != 0
        nbytes = data_clocks // self.cpb
        if info.kind == Kind.READ:
            return self._read(cmd, nbytes, partial, miso)
        if info.kind == Kind.WRITE:
            return self._write(cmd, bytes(host[1:1 + nbytes]), partial)
        if partial:
            return self._fail(ErrorCause.PARTIAL_BYTE)
        if nbytes:
            return self._fail(ErrorCause.BAD_LENGTH)
        self.busy |= 1 << (Status.WAIT_INFERENCE if cmd == Cmd.INFERENCE else Status.WAIT_ACQUIRE)
        if cmd == Cmd.INFERENCE:
            self._post(Msg.INFERENCE, 0)
        else:
            self.after(self.sensor_delay, self._sensor_frame)
        return None

    def _read(self, cmd, nbytes, partial, miso):
        if cmd == Cmd.RSTATUS:
            payload = self.status.to_bytes(4, "little")
            self.error = False                    # cleared when the word is loaded
            self.cause = ErrorCause.NONE
        elif cmd == Cmd.RERROR:
            payload = encode_rerror(self.status, self.cause).to_bytes(4, "little")
        elif cmd == Cmd.RID:
            payload = DEVICE_ID.to_bytes(4, "little")
        elif cmd == Cmd.RSPEC:
            payload = self.spec
        else:
            payload = self.read_data[cmd]
        dummy_slots = DUMMY_CLOCKS // self.cpb
        for slot in range(1 + dummy_slots, len(miso)):
            k = slot - 1 - dummy_slots
            miso[slot] = payload[k] if k < len(payload) else 0
        if partial:
            return self._fail(ErrorCause.PARTIAL_BYTE)
        if nbytes != dummy_slots + len(payload):
            return self._fail(ErrorCause.BAD_LENGTH)
        return None

    def _write(self, cmd, data, partial):
        info = COMMANDS[cmd]
        window = WINDOW_OF[cmd]
        size = self.window_sizes[window]
        offset = self.sequence.offset if info.chunked and self.sequence else 0
        error = None
        accepted = len(data)
        if info.chunked and accepted > CHUNK_SIZE:
            accepted, error = CHUNK_SIZE, ErrorCause.CHUNK_TOO_LONG
        if offset + accepted > size:
            accepted, error = size - offset, ErrorCause.WINDOW_OVERFLOW
        whole = accepted - accepted % WORD            # only whole words reach memory
        self.windows[window][offset:offset + whole] = data[:whole]
        if error is None:
            if partial:
                error = ErrorCause.PARTIAL_BYTE
            elif len(data) % WORD:
                error = ErrorCause.BAD_LENGTH
            elif cmd == Cmd.WTENSOR and self.expected_input and len(data) != self.expected_input:
                error = ErrorCause.BAD_LENGTH
        if error is not None:
            return self._fail(error)
        self.busy |= 1 << Status.BUSY_WRITE
        if not info.chunked:
            self.tensor_pending = True
            self._post(Msg.TENSOR_DONE, len(data))
        elif len(data) == CHUNK_SIZE:
            self.sequence = Sequence(cmd, offset + CHUNK_SIZE)
            self.after(self.chunk_delay, lambda: self.finish(Status.BUSY_WRITE))
        else:
            self.sequence = None
            self._post(Msg.MODEL_DONE if cmd == Cmd.WMODEL else Msg.SERVER_DONE, offset + len(data))
        return None

    def _sensor_frame(self):
        frame = self.sensor() if self.sensor else None
        if frame is None:
            self._post(Msg.ACQUIRE_DONE, 0)
            return
        n = min(len(frame), self.window_sizes[Window.TENSOR])
        self.windows[Window.TENSOR][:n] = frame[:n]
        self._post(Msg.ACQUIRE_DONE, n)


class ModelTransport(Transport):
    """A transport whose far end is a :class:`DeviceModel`.  Time is virtual:
    each transaction takes its clocks at ``period_s`` plus the CS_N times;
    undriven read clocks read as all ones (pull-ups)."""

    def __init__(self, model: DeviceModel, msb_first=False, period_s=20e-9, tcse_s=100e-9,
                 tcsd_s=100e-9, tcsi_s=200e-9):
        super().__init__(qpi=model.qpi, msb_first=msb_first)
        self.model = model
        self.period_s = period_s
        self.cs_overhead_s = tcse_s + tcsd_s + tcsi_s
        self.time = 0.0
        self.frames: list[FrameResult] = []

    def now(self):
        return self.time

    async def sleep(self, seconds):
        self.time += seconds

    async def _run(self, frame: Frame) -> FrameResult:
        clocks = frame.total_clocks
        slots = self.model.transaction(frame.host_bytes(), clocks)
        idle = 0xFF
        values = self.codec.encode(bytes(idle if b is None else b for b in slots))[:clocks]
        undriven = sum(1 for c in range(frame.read_start, clocks) if slots[c // frame.cpb] is None)
        data = self.codec.decode(values[frame.read_start:]) if frame.reads else b""
        self.time += clocks * self.period_s + self.cs_overhead_s
        result = FrameResult(frame, data, clocks, undriven)
        self.frames.append(result)
        return result
