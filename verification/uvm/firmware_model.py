"""The server firmware as the scoreboard predicts it, plugged into
verification/host/device_model.DeviceModel.

DeviceModel's ReferenceFirmware describes the protocol in general; this one
describes what *this* server (sw/firmware/server.c) does with each message,
so the scoreboard can predict every status word, error cause and read
length the SoC produces.

**The layered-model switch.**  ``FIRMWARE_RUNS_LAYERS`` says which server the
scoreboard expects:

* False -- a server without an op runtime: model images accepted, Inference
  of a model with layers refused with BAD_MODEL, a layer-less model run with
  an empty output (RTensor and RTimings of length 0).
* True -- the server runs every op (since commit 43ef649 in software on the
  MCORE, sw/firmware/model_run.c): RTensor returns the output block, which
  the scoreboard expects bit-exact from the golden model
  (verification/golden/cnn.py through model_traffic.GoldenTable), and
  RTimings one word per layer (measured times: only the length is
  predicted).

It is True now.  The environment variable TSOC_UVM_RUNS_LAYERS=0/1 overrides
it for one run; the regression report prints which behaviour was expected,
so the switch is never silent.
"""

import struct
import zlib

from tensorsoc.spec.memory_map import MEM_MAP
from tensorsoc.spec import model_image as mi
from tensorsoc.spec import server_image as si
from tensorsoc.spec.host_protocol import HW_TYPE_TENSORSOC, Cmd, ErrorCause, Msg, Status, Window, encode_spec
from tensorsoc.verification.host.device_model import Firmware, expected_rspec

FIRMWARE_RUNS_LAYERS = True
MAX_LAYERS = mi.MAX_LAYERS       # server.c: RTimings words it can hold
MAIN_RAM_BASE = MEM_MAP["main_ram"]


def expectation(runs_layers=FIRMWARE_RUNS_LAYERS):
    return ("layered models run: RTensor = golden output (bit-exact)" if runs_layers else
            "layered models refused at Inference with BAD_MODEL (no firmware op runtime); "
            "layer-less models run with an empty output")


class ServerFirmwareModel(Firmware):
    """``config``: the SoC configuration (tiles, RAM, tensor window);
    ``golden``: callable(image bytes, input bytes) -> output bytes, used only
    when ``runs_layers``."""

    def __init__(self, config, runs_layers=FIRMWARE_RUNS_LAYERS, golden=None):
        self.config = config
        self.runs_layers = runs_layers
        self.golden = golden
        self.model = None            # dict(input_bytes, output_bytes, n_layers, image)
        self.tensor_valid_len = 0
        self.server_starting = False  # a valid WServer finished; the new server has not announced itself
        self.servers_started = 0
        self.output_undefined = False  # the last inference ran on a model window overwritten since the load

    def boot(self, dev):
        self.model = None
        self.tensor_valid_len = 0
        self._publish_spec(dev)
        dev.set_read_data(Cmd.RTIMINGS, b"")

    def _publish_spec(self, dev):
        m = self.model or {"input_bytes": 0, "output_bytes": 0}
        dev.set_spec(encode_spec(hw_type=HW_TYPE_TENSORSOC, **expected_rspec(self.config),
                                 input_bytes=m["input_bytes"], output_bytes=m["output_bytes"]))
        dev.set_expected_input(m["input_bytes"])

    def on_message(self, dev, msg, length):
        # Completion is released by the scoreboard when the device shows it
        # (deferred: the model cannot know how long the firmware takes).
        dev.after(DEFERRED, lambda: self._handle(dev, msg, length))

    def _handle(self, dev, msg, length):
        self.last = (Msg(msg), None)
        getattr(self, f"_on_{Msg(msg).name.lower()}")(_Recorder(self, dev), length)

    def _on_model_done(self, dev, length):
        image = bytes(dev.windows[Window.MODEL][:length])
        self.model = self._check_image(image)
        self.tensor_valid_len = 0
        self._publish_spec(dev)
        dev.finish(Status.BUSY_WRITE, None if self.model else ErrorCause.BAD_MODEL)

    def _check_image(self, image):
        if len(image) < mi.HEADER_SIZE:
            return None
        magic, version, payload, crc, inb, outb, layers, _ = struct.unpack_from("<8I", image)
        if (magic != mi.MODEL_MAGIC or version != mi.FORMAT_VERSION or payload != len(image) - mi.HEADER_SIZE
                or zlib.crc32(image[mi.HEADER_SIZE:]) != crc or layers > MAX_LAYERS
                or inb > self.config.tensor_window_size):
            return None
        if self.runs_layers and not self._tables_valid(image):
            return None
        return {"input_bytes": inb, "output_bytes": outb, "n_layers": layers, "image": image}

    def _tables_valid(self, image):
        """model_run.c's model_validate: table sizes and bounds, arena below
        the model window, tensor regions, op operands and opcodes."""
        payload = len(image) - mi.HEADER_SIZE
        if payload < 4 * len(mi.MODEL_FIELDS):
            return False
        sec = dict(zip((f for f, _ in mi.MODEL_FIELDS), struct.unpack_from(f"<{len(mi.MODEL_FIELDS)}I", image,
                                                                         mi.HEADER_SIZE)))
        tw, ow = len(mi.TENSOR_FIELDS), len(mi.OP_FIELDS)
        if sec["tensor_words"] != tw or sec["op_words"] != ow:
            return False
        nt, no = sec["n_tensors"], sec["n_ops"]
        if (sec["tensor_table"] + 4 * tw * nt > payload or sec["op_table"] + 4 * ow * no > payload
                or sec["consts"] + sec["const_bytes"] > payload):
            return False
        windows = self.config.windows(MAIN_RAM_BASE)
        if MAIN_RAM_BASE + sec["arena_base"] + sec["arena_bytes"] > windows["model"][0]:
            return False
        word = lambda off: struct.unpack_from("<I", image, mi.HEADER_SIZE + off)[0]
        region = [f for f, _ in mi.TENSOR_FIELDS].index("region")
        if any(word(sec["tensor_table"] + 4 * (tw * i + region)) > mi.REGIONS["ARENA"] for i in range(nt)):
            return False
        names = [f for f, _ in mi.OP_FIELDS]
        operands = range(names.index("res"), names.index("batch") + 1)
        for i in range(no):
            op = [word(sec["op_table"] + 4 * (ow * i + k)) for k in range(ow)]
            if any(op[k] != mi.NONE and op[k] >= nt for k in operands):
                return False
            if not min(mi.OPCODES.values()) <= op[0] <= max(mi.OPCODES.values()):
                return False
        return True

    def _on_server_done(self, dev, length):
        """server.c server_written + boot.c server_image_check: a valid image
        (magic, length, CRC-32, and as long as the bytes written) is started:
        the command finishes without error, then the new server boots.  Its
        start is a later stage, released when the console shows it
        (Observed.server_ready): it forgets the model, publishes an empty
        RSpec and zero-length RTimings; the RTensor set-up, a gateware
        register, stays."""
        if not self._server_valid(bytes(dev.windows[Window.SERVER][:length]), length):
            dev.finish(Status.BUSY_WRITE, ErrorCause.BAD_SERVER)
            return
        self.server_starting = True
        dev.finish(Status.BUSY_WRITE, None)
        dev.after(DEFERRED, lambda: self._server_started(dev))

    def _server_valid(self, image, length):
        if len(image) < si.HEADER_SIZE:
            return False
        magic, payload, crc, _ = struct.unpack_from("<4I", image)
        window = self.config.server_window_size
        return (magic == si.SERVER_MAGIC and 0 < payload <= window - si.HEADER_SIZE
                and zlib.crc32(bytes(image[si.HEADER_SIZE:si.HEADER_SIZE + payload])) == crc
                and payload == length - si.HEADER_SIZE)

    def _server_started(self, dev):
        self.server_starting = False
        self.servers_started += 1
        self.boot(dev)

    def _on_tensor_done(self, dev, length):
        self.tensor_valid_len = length if self.model else 0
        dev.finish(Status.BUSY_WRITE, None if self.model else ErrorCause.NO_MODEL)

    def _on_inference(self, dev, length):
        m = self.model
        if not m:
            error = ErrorCause.NO_MODEL
        elif self.tensor_valid_len != m["input_bytes"]:
            error = ErrorCause.BAD_LENGTH
        elif m["n_layers"] and not self.runs_layers:
            error = ErrorCause.BAD_MODEL
        else:
            error = None
            # server.c runs whatever the model window holds: a failed WModel
            # since the load (its whole words are written, docs/host_protocol.md
            # rule 7) leaves a model the firmware still takes for valid, whose
            # output nobody can predict.
            self.output_undefined = bytes(dev.windows[Window.MODEL][:len(m["image"])]) != m["image"]
            if self.runs_layers:
                tensor = bytes(dev.windows[Window.TENSOR][:m["input_bytes"]])
                dev.set_read_data(Cmd.RTENSOR, self.golden(m["image"], tensor))
                dev.set_read_data(Cmd.RTIMINGS, bytes(4 * m["n_layers"]))
            else:
                dev.set_read_data(Cmd.RTENSOR, b"")
                dev.set_read_data(Cmd.RTIMINGS, b"")
        dev.finish(Status.WAIT_INFERENCE, error)

    def _on_acquire_done(self, dev, length):
        # server.c hands the host port a pointer to the tensor window and the
        # frame length (ztamMsgqWritePointer/WriteInt): RTensor then reads
        # the window itself, so later WTensor data shows through -- a live
        # view, not a copy.
        self.tensor_valid_len = length
        self.output_undefined = False
        dev.read_data[Cmd.RTENSOR] = memoryview(dev.windows[Window.TENSOR])[:length]
        error = ErrorCause.SENSOR if self.model and length != self.model["input_bytes"] else None
        dev.finish(Status.WAIT_ACQUIRE, error)


class _Recorder:
    """DeviceModel seen through the firmware: remembers the outcome of the
    message being handled (``ServerFirmwareModel.last``), even when the
    device keeps an earlier error's cause."""

    def __init__(self, fw, dev):
        self._fw, self._dev = fw, dev

    def finish(self, bit, error=None):
        """As the firmware does it (host_port_finish, one CSR write): the busy
        bit clears and the command's error, if any, is raised together."""
        self._fw.last = (self._fw.last[0], error)
        if error is not None:
            self._dev.raise_error(error)
        self._dev.finish(bit)

    def __getattr__(self, name):
        return getattr(self._dev, name)


# Transactions after which a deferred job would run on its own: never, in practice.
DEFERRED = 1 << 40
