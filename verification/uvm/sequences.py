"""Sequence library: stimulus only, never pins.  Every sequence talks to the
SPI/QPI sequencer (and the sensor sequencer where Acquire needs a frame) and
decides from what the device answered; the scoreboard, not the sequence,
judges every answer.

* :class:`RandomTrafficSeq` -- constrained-random valid traffic.
* :class:`ErrorInjectionSeq` -- one error of each kind, in random order.
* :class:`ModelSeq` -- a YAML model as WModel/WTensor/Inference/RTensor.
"""

import contextlib
import random
import time

import cocotb
from cocotb.utils import get_sim_time

from pyuvm import ConfigDB, uvm_sequence

from tensorsoc.spec import model_image as mi
from tensorsoc.spec.host_protocol import (ALIASES, ALLOWED_IN_SEQUENCE, BUSY_MASK, CHUNK_SIZE, COMMANDS, Cmd, Status,
                              decode_rerror, decode_spec)
from tensorsoc.verification.uvm import yaml_gen
from tensorsoc.verification.uvm.coverage import WINDOW_FILL_MAX
from tensorsoc.verification.uvm.items import HostItem, SensorItem
from tensorsoc.verification.uvm.model_traffic import traffic_of
from tensorsoc.soc.builder import SimBuild

POLL_GAP_NS = (500, 50_000)  # first and longest pause between status polls (backing off)
MAX_WAIT_NS = 2_000_000_000  # 2 s of simulated time: an inference in software on the MCORE is long


class HostSeq(uvm_sequence):
    """Base: helpers that each send one item and return what came back."""

    def __init__(self, name, rng=None):
        super().__init__(name)
        self.rng = rng or random.Random(0)

    @property
    def logger(self):
        """The test's log.  pyuvm gives a sequence (a uvm_object) a logger
        with no handler that does not propagate, so its lines were lost."""
        return cocotb.log

    async def send(self, cmd=0, write=b"", read_len=0, tag="", **kw):
        item = HostItem("item", cmd=cmd, write=write, read_len=read_len, tag=tag or self.get_name(), **kw)
        await self.start_item(item)
        await self.finish_item(item)
        return item.data

    @contextlib.asynccontextmanager
    async def fast_path(self):
        """Items sent inside go on the fast host path (the simulated master),
        whatever the test's own; for bulk writes that are not a pin corner."""
        await self.send(kind="host_path", path="fast")
        try:
            yield
        finally:
            await self.send(kind="host_path", path=None)

    async def wait_ns(self, ns):
        await self.send(kind="wait", wait_ns=ns)

    async def reset(self):
        await self.send(kind="reset")

    async def peek(self):
        """RERROR: (status bits, cause) without clearing."""
        return decode_rerror(int.from_bytes(await self.send(Cmd.RERROR, read_len=4), "little"))

    async def status(self):
        return int.from_bytes(await self.send(Cmd.RSTATUS, read_len=4), "little")

    async def wait_idle(self):
        """Polls RERROR until no busy bit is set; returns the last (status,
        cause); the error, if any, is left for the caller (and the
        scoreboard) to see."""
        gap, waited = POLL_GAP_NS[0], 0
        while True:
            status, cause = await self.peek()
            if not status & BUSY_MASK:
                return status, cause
            if waited > MAX_WAIT_NS:
                raise AssertionError(f"device still busy after {waited / 1e6:.1f} ms (status 0x{status:x})")
            await self.wait_ns(gap)
            waited += gap
            gap = min(2 * gap, POLL_GAP_NS[1])

    async def settle(self):
        """Wait for idle, then clear any error with RStatus."""
        status, cause = await self.wait_idle()
        if status >> Status.ERROR & 1:
            await self.status()
        return status, cause

    async def spec(self):
        return decode_spec(await self.send(Cmd.RSPEC, read_len=16))

    async def write_chunked(self, cmd, data):
        chunks = [data[i:i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
        if len(data) % CHUNK_SIZE == 0:
            chunks.append(b"")
        for chunk in chunks:
            await self.send(cmd, chunk)
            await self.wait_idle()
        return await self.settle()

    async def sensor_frame(self, data):
        seqr = ConfigDB().get(None, "", "SENSOR_SEQR")
        await SensorFrameSeq("frame", data).start(seqr)


class SensorFrameSeq(uvm_sequence):
    def __init__(self, name, data):
        super().__init__(name)
        self.data = data

    async def body(self):
        item = SensorItem("frame", self.data)
        await self.start_item(item)
        await self.finish_item(item)


def pool_model(rng, layered=None):
    """A model from the YAML generator (layer-less, or with layers), compiled
    and registered with the scoreboard's golden table."""
    seed = rng.randrange(1 << 20)
    layered = rng.random() < 0.5 if layered is None else layered
    text = yaml_gen.random_model(seed, max_layers=2, max_macs=4000) if layered else yaml_gen.layerless_model(seed)
    t = traffic_of(text, f"{'random' if layered else 'layerless'}-{seed}")
    ConfigDB().get(None, "", "GOLDEN").register(t)
    return t


def corrupted(rng, image):
    """``image`` with one payload bit flipped: the CRC no longer matches."""
    image = bytearray(image)
    image[rng.randrange(mi.HEADER_SIZE, len(image))] ^= 1 << rng.randrange(8)
    return bytes(image)


class RandomTrafficSeq(HostSeq):
    """``n`` random operations, each a valid use of the protocol (whose
    outcome may still be an error the scoreboard predicts, e.g. a tensor
    length that does not match the model)."""

    def __init__(self, name, rng, n=30):
        super().__init__(name, rng)
        self.n = n

    async def body(self):
        ops = [self.op_reads, self.op_model, self.op_tensor, self.op_inference, self.op_acquire,
               self.op_aliases]
        for _ in range(self.n):
            await self.rng.choice(ops)()
            await self.settle()

    async def op_reads(self):
        for _ in range(self.rng.randint(1, 4)):
            cmd = self.rng.choice((Cmd.RID, Cmd.RSPEC, Cmd.RSTATUS, Cmd.RERROR))
            await self.send(cmd, read_len=COMMANDS[cmd].read_len)

    async def op_model(self):
        image = pool_model(self.rng).image
        await self.write_chunked(Cmd.WMODEL, corrupted(self.rng, image) if self.rng.random() < 0.15 else image)

    async def op_tensor(self):
        n = (await self.spec())["input_bytes"]
        if self.rng.random() < 0.2:
            n = 4 * self.rng.randint(1, 16)          # maybe not what the model wants
        await self.send(Cmd.WTENSOR, bytes(self.rng.getrandbits(8) for _ in range(n)))

    async def op_inference(self):
        await self.send(Cmd.INFERENCE)
        await self.wait_idle()
        out = (await self.spec())["output_bytes"]
        await self.send(Cmd.RTENSOR, read_len=out)
        await self.send(Cmd.RTIMINGS, read_len=0)

    async def op_acquire(self):
        n = (await self.spec())["input_bytes"]
        await self.send(Cmd.ACQUIRE)
        if n:
            await self.sensor_frame(bytes(self.rng.getrandbits(8) for _ in range(n)))
        await self.wait_idle()

    async def op_aliases(self):
        """The datasheet's example codes: a model with 0x80, a tensor with 0x90."""
        image = pool_model(self.rng, layered=False).image
        for i in range(0, len(image) + 1, CHUNK_SIZE):
            chunk = image[i:i + CHUNK_SIZE]
            await self.send(0x80, chunk)
            await self.wait_idle()
            if len(chunk) < CHUNK_SIZE:
                break
        await self.settle()
        n = (await self.spec())["input_bytes"]
        await self.send(0x90, bytes(n))


UNKNOWN_CODES = [c for c in range(256) if c not in {int(x) for x in Cmd} and c not in ALIASES]


class ErrorInjectionSeq(HostSeq):
    """Each injection, then a check that the device still works (RID, and
    the scoreboard's prediction of every answer).  ``kinds``: which ones
    (default all, in random order)."""

    KINDS = ("unknown_command", "broken_chunk_sequence", "chunk_too_long", "busy", "truncated_read",
             "cs_mid_command", "cs_mid_data", "bad_length", "corrupt_model", "corrupt_server",
             "inference_without_tensor", "reset_mid_chunks", "reset_mid_acquire",
             "reset_mid_inference")
    # Longer ones, for CornerTest (the full regression), not the short tier.
    CORNER_KINDS = ("reset_idle", "reset_cs_low", "partial_every_command", "busy_every_command",
                    "broken_sequence_every_command", "window_overflow")

    def __init__(self, name, rng, kinds=None, rounds=1):
        super().__init__(name, rng)
        self.kinds = list(kinds or self.KINDS)
        self.rounds = rounds

    async def body(self):
        for _ in range(self.rounds):
            self.rng.shuffle(self.kinds)
            for kind in self.kinds:
                t0, w0 = get_sim_time(unit="ns"), time.monotonic()
                await getattr(self, kind)()
                await self.settle()
                await self.send(Cmd.RID, read_len=4, tag=f"{kind}: still alive")
                self.logger.info(f"{kind}: {(get_sim_time(unit='ns') - t0) / 1e3:,.0f} us simulated, "
                                 f"{time.monotonic() - w0:.1f} s")

    async def load_model(self):
        """Loads a layer-less generated model; returns its input size."""
        t = pool_model(self.rng, layered=False)
        await self.write_chunked(Cmd.WMODEL, t.image)
        return len(t.input)

    async def unknown_command(self):
        code = self.rng.choice(UNKNOWN_CODES)
        await self.send(code, read_len=self.rng.choice((0, 4)), tag="unknown command")

    async def broken_chunk_sequence(self):
        cmd = self.rng.choice((Cmd.WMODEL, Cmd.WSERVER))
        await self.send(cmd, bytes(CHUNK_SIZE), tag="first chunk")
        await self.wait_idle()
        other = self.rng.choice([c for c in (Cmd.WMODEL, Cmd.WSERVER, Cmd.WTENSOR, Cmd.INFERENCE,
                                             Cmd.ACQUIRE, Cmd.RTENSOR) if c != cmd])
        info = COMMANDS[other]
        await self.send(other, bytes(4) if info.kind.name == "WRITE" else b"",
                        read_len=0, tag="breaks the sequence")

    async def chunk_too_long(self):
        await self.send(self.rng.choice((Cmd.WMODEL, Cmd.WSERVER)), bytes(CHUNK_SIZE + 4 * self.rng.randint(1, 4)))

    async def busy(self):
        """Acquire waits for its sensor frame: meanwhile commands other than
        RStatus/RERROR are refused (BUSY) and write nothing."""
        n = await self.load_model()
        await self.send(Cmd.ACQUIRE)
        for _ in range(self.rng.randint(1, 3)):
            cmd = self.rng.choice((Cmd.RID, Cmd.RSPEC, Cmd.WTENSOR, Cmd.INFERENCE, Cmd.WMODEL, Cmd.RTENSOR))
            info = COMMANDS[cmd]
            await self.send(cmd, bytes(n) if cmd == Cmd.WTENSOR else (bytes(8) if info.kind.name == "WRITE" else b""),
                            read_len=info.read_len or 0, tag="while busy")
            await self.peek()
        await self.sensor_frame(bytes(self.rng.getrandbits(8) for _ in range(n)))
        await self.wait_idle()

    async def truncated_read(self):
        cmd = self.rng.choice((Cmd.RID, Cmd.RSPEC, Cmd.RSTATUS, Cmd.RERROR))
        n = COMMANDS[cmd].read_len
        await self.send(cmd, read_len=self.rng.choice([k for k in (0, 1, 2, n - 1, n + 1, n + 4) if k >= 0 and k != n]),
                        tag="wrong read length")

    async def cs_mid_command(self):
        width = 4 if self._qpi() else 1
        await self.send(self.rng.choice(list(Cmd)), bits=width * self.rng.randint(1, 8 // width - 1),
                        tag="CS_N up inside the command byte")

    async def cs_mid_data(self):
        width = 4 if self._qpi() else 1
        nbytes = 4 * self.rng.randint(1, 4)
        cut = 8 + 8 * self.rng.randrange(nbytes) + width * self.rng.randint(1, 8 // width - 1)
        await self.send(self.rng.choice((Cmd.WTENSOR, Cmd.WMODEL)), bytes(nbytes), bits=cut,
                        tag="CS_N up inside a data byte")

    async def bad_length(self):
        choice = self.rng.randrange(3)
        if choice == 0:
            await self.send(Cmd.WTENSOR, bytes(4 * self.rng.randint(1, 8) + self.rng.randint(1, 3)))
        elif choice == 1:
            await self.send(self.rng.choice((Cmd.INFERENCE, Cmd.ACQUIRE)), bytes(4))
        else:
            n = await self.load_model()
            await self.send(Cmd.WTENSOR, bytes(n + 4), tag="not the model's input size")

    async def corrupt_model(self):
        await self.write_chunked(Cmd.WMODEL, corrupted(self.rng, pool_model(self.rng, layered=False).image))

    async def corrupt_server(self):
        image = bytes(self.rng.getrandbits(8) for _ in range(4 * self.rng.randint(1, 100)))
        await self.write_chunked(Cmd.WSERVER, image)

    async def inference_without_tensor(self):
        await self.load_model()
        await self.send(Cmd.INFERENCE)
        await self.wait_idle()

    async def reset_mid_chunks(self):
        await self.send(Cmd.WMODEL, bytes(CHUNK_SIZE))
        await self.wait_idle()
        await self.reset()
        await self.send(Cmd.WMODEL, bytes(4), tag="after reset: a new sequence")

    async def reset_mid_acquire(self):
        await self.load_model()
        await self.send(Cmd.ACQUIRE)
        await self.reset()
        await self.spec()

    async def reset_mid_inference(self):
        """Reset while the device runs a layered model (a status read shows
        WAIT_INFERENCE just before).  The device reboots: it comes back idle
        with no error and no model (RSpec sizes 0, RTimings empty), refuses
        an Inference with NO_MODEL until the model is sent again, and then
        runs it bit-exact.  The scoreboard predicts each answer.  The model's
        two uploads and the run after the reset go on the fast host path
        (not a pin corner: at pin level they took 36 of an
        ErrorInjectionTest's 51 s)."""
        t = pool_model(self.rng, layered=True)
        async with self.fast_path():
            await self.write_chunked(Cmd.WMODEL, t.image)
            await self.send(Cmd.WTENSOR, t.input)
            await self.settle()
        await self.send(Cmd.INFERENCE, tag="inference to interrupt")
        status, _ = await self.peek()
        if not status >> Status.WAIT_INFERENCE & 1:
            self.logger.warning("reset_mid_inference: the inference ended before the reset")
        await self.reset()
        await self.peek()
        await self.spec()
        await self.send(Cmd.RTIMINGS, read_len=0, tag="after reset: no timings")
        await self.send(Cmd.INFERENCE, tag="after reset: no model")
        await self.settle()
        async with self.fast_path():
            await ModelSeq("after reset", t, self.rng).start(self.sequencer)

    # -- further injections (CornerTest: the full regression only) -----------
    async def reset_idle(self):
        """A reset of an idle device (CS_N high): it boots again, no model."""
        await self.reset()
        await self.spec()

    async def reset_cs_low(self):
        """The SoC reset while CS_N is low inside a write (a WTensor, or the
        second chunk of a WModel sequence), the host going on clocking
        zeros.  The host port's SCLK side is not reset; the device that
        comes out of the reset sees the rest of a transaction whose command
        it never decoded and flags PARTIAL_BYTE when CS_N rises
        (DeviceModel.end_after_reset).  It then works as after any reset."""
        cpb = 2 if self._qpi() else 8
        nbytes = 4 * self.rng.randint(8, 24)
        if self.rng.random() < 0.5:
            cmd = Cmd.WTENSOR
        else:
            cmd = Cmd.WMODEL
            await self.send(Cmd.WMODEL, bytes(CHUNK_SIZE), tag="first chunk")
            await self.wait_idle()
        # At least 4 bytes after the command byte (the gateware has decoded
        # it) and 8 bytes before the end (QPI: the mode strap is sampled on
        # MISO for a few clocks after the reset; the zeros keep it low).
        after = cpb * (1 + self.rng.randint(4, nbytes // 4 * 4 - 8))
        await self.send(cmd, bytes(nbytes), kind="reset_in_frame", reset_after=after,
                        tag="SoC reset with CS_N low")
        await self.peek()

    async def partial_every_command(self):
        """CS_N released inside a byte after each command's command byte: a
        read's data byte, an action's extra byte, a write's data byte."""
        width = 4 if self._qpi() else 1
        cpb = 8 // width
        for cmd in self.rng.sample(list(Cmd), len(Cmd)):
            info = COMMANDS[cmd]
            cut = width * self.rng.randint(1, cpb - 1)
            if info.kind.name == "READ":
                n = info.read_len or 4
                clocks = cpb + 16 + cpb * self.rng.randrange(n) + cut // width
                await self.send(cmd, read_len=n, clocks=clocks, tag="CS_N up inside a read byte")
            elif info.kind.name == "WRITE":
                await self.send(cmd, bytes(8), bits=8 + 8 * self.rng.randrange(8) + cut,
                                tag="CS_N up inside a data byte")
            else:
                await self.send(cmd, bytes(4), bits=8 + cut, tag="CS_N up inside an extra byte")
            await self.settle()

    async def busy_every_command(self):
        """During an Acquire, every command but RStatus/RERROR (aliases
        too) is refused with BUSY and writes nothing."""
        n = await self.load_model()
        await self.send(Cmd.ACQUIRE)
        codes = [c for c in Cmd if not COMMANDS[c].allowed_while_busy] + list(ALIASES)
        for code in self.rng.sample(codes, len(codes)):
            cmd = ALIASES.get(code, code)
            info = COMMANDS[cmd]
            write = bytes(n) if cmd == Cmd.WTENSOR else (bytes(8) if info.kind.name == "WRITE" else b"")
            await self.send(code, write, read_len=info.read_len or 0, tag="while busy")
            await self.peek()
            await self.status()          # clear the BUSY error: the next one is flagged again
        await self.sensor_frame(bytes(self.rng.getrandbits(8) for _ in range(n)))
        await self.wait_idle()

    async def broken_sequence_every_command(self):
        """A chunk sequence broken by each command that may not come inside
        one (the other chunked write included)."""
        for other in self.rng.sample(list(Cmd), len(Cmd)):
            if other in ALLOWED_IN_SEQUENCE:
                continue
            cmd = self.rng.choice([c for c in (Cmd.WMODEL, Cmd.WSERVER) if c != other])
            await self.send(cmd, bytes(CHUNK_SIZE), tag="first chunk")
            await self.wait_idle()
            info = COMMANDS[other]
            await self.send(other, bytes(4) if info.kind.name == "WRITE" else b"", tag="breaks the sequence")
            await self.settle()

    async def window_overflow(self):
        """Writes past the end of each window: WTensor one word longer than
        the tensor window, and WModel/WServer sequences of full chunks up to
        the end of theirs, then one more chunk.  Nothing is written outside
        the windows (WINDOW_OVERFLOW).  Windows larger than WINDOW_FILL_MAX
        (the default configuration's 1 MiB tensor and 8 MiB model windows)
        take too long to fill even on the fast host path: they are skipped,
        and their bins excluded (coverage.protocol_exclusions).  The chunks
        that fill a window are ordinary writes: they go on the fast host path
        (at pin level the 64 KiB server window took 127 of a CornerTest's
        130 s); the write past the end goes on the test's own path."""
        cfg = ConfigDB().get(None, "", "SOC_CONFIG")
        if cfg.tensor_window_size <= WINDOW_FILL_MAX:
            await self.send(Cmd.WTENSOR, bytes(cfg.tensor_window_size + 4), tag="past the tensor window")
            await self.settle()
        for cmd, size in ((Cmd.WMODEL, cfg.model_window_size), (Cmd.WSERVER, cfg.server_window_size)):
            if size > WINDOW_FILL_MAX:
                continue
            async with self.fast_path():
                for i in range(size // CHUNK_SIZE):
                    await self.send(cmd, bytes(CHUNK_SIZE), tag=f"chunk {i}")
                    await self.wait_idle()
            await self.send(cmd, bytes(4 * self.rng.randint(1, 64)), tag="past the window")
            await self.settle()

    def _qpi(self):
        return ConfigDB().get(None, "", "QPI")


class ServerUploadSeq(HostSeq):
    """WServer with a valid server image (the RAM-linked build of the
    firmware, spec/server_image.py format), in 256-byte chunks, with the
    datasheet's alias code 0x81 or 0x04.  The server checks and starts it;
    the environment waits for its console line (the host has no way to see
    it), then the new server must answer: RID, an empty RSpec (it knows no
    model), and a model run bit-exact.

    The uploaded server runs from the server window: a later WServer would
    overwrite its code, so this is the last WServer of a test.

    The upload (about 30 KB, 120 chunks) runs on the fast host path
    whatever the test's own: it is not a pin corner, and at pin level it
    took 1.19M of a CornerTest's 2.86M cycles and 87 of its 210 s."""

    async def body(self):
        image = server_image()
        code = self.rng.choice((int(Cmd.WSERVER), 0x81))
        async with self.fast_path():
            await self.write_chunked(code, image)
        await self.send(kind="server_ready")
        await self.send(Cmd.RID, read_len=4, tag="new server: alive")
        await self.spec()
        t = pool_model(self.rng, layered=True)
        await ModelSeq("on the new server", t, self.rng).start(self.sequencer)


def server_image():
    """The server image of the simulated SoC's build (TSOC_BUILD_DIR)."""
    import os
    build = SimBuild(ConfigDB().get(None, "", "SOC_CONFIG"), os.environ["TSOC_BUILD_DIR"], log=lambda *_: None)
    return build.server_image()


class ModelSeq(HostSeq):
    """A YAML model (model_traffic.ModelTraffic) through the host protocol:
    WModel in chunks, RSpec, WTensor, Inference (half the time with no
    status poll before it, as the datasheet's typical cycle), RTensor,
    RTimings."""

    def __init__(self, name, traffic, rng=None, inferences=1):
        super().__init__(name, rng)
        self.traffic = traffic
        self.inferences = inferences

    async def body(self):
        t = self.traffic
        ConfigDB().get(None, "", "GOLDEN").register(t)
        self.logger.info(f"model {t.name}: {t.n_layers} layer(s), input {len(t.input)} B, output {t.output_bytes} B; "
                         f"float model vs Q format: max |error| {t.float_error:.5f}")
        await self.write_chunked(Cmd.WMODEL, t.image)
        await self.spec()
        for _ in range(self.inferences):
            await self.send(Cmd.WTENSOR, t.input, tag=f"{t.name}: input")
            # Half the time the datasheet's typical inference cycle: Inference
            # right after WTensor, no status poll (it queues behind the write).
            literal = self.rng.random() < 0.5
            if not literal:
                await self.settle()
            await self.send(Cmd.INFERENCE, tag=f"{t.name}: inference ({t.n_layers} layers)"
                            + (", right after WTensor" if literal else ""))
            await self.settle()
            await self.send(Cmd.RTENSOR, read_len=t.output_bytes, tag=f"{t.name}: output")
            await self.send(Cmd.RTIMINGS, read_len=4 * t.n_layers, tag=f"{t.name}: timings")
            await self.settle()
