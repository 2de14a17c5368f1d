"""The server firmware as the scoreboard predicts it, plugged into
verification/host/device_model.DeviceModel.

DeviceModel's ReferenceFirmware describes the protocol in general; this one
describes what *this* server (sw/firmware/server.c) does with each message,
so the scoreboard can predict every status word, error cause and read
length the SoC produces.

**The layered-model switch.**  Today the server accepts model images but
refuses to run a model with layers (BAD_MODEL at Inference: the op runtime is
not in the firmware yet), and runs a layer-less model with an empty output.
``FIRMWARE_RUNS_LAYERS`` says which behaviour the scoreboard expects.  When
the op runtime lands, set it to True (or pass ``runs_layers=True``): the
scoreboard then expects the golden model's output tensor bit-exact (RTensor)
and one RTimings word per layer, and every layered model of the regression
becomes a real end-to-end check.  Nothing switches silently: the regression
report prints which behaviour was expected.
"""

import struct
import zlib

from sw import model_image as mi
from sw.host.protocol import HW_TYPE_TENSORSOC, Cmd, ErrorCause, Msg, Status, Window, encode_spec
from verification.host.device_model import Firmware

FIRMWARE_RUNS_LAYERS = False
MAX_LAYERS = 64                  # server.c: RTimings words it can hold


def expectation(runs_layers=FIRMWARE_RUNS_LAYERS):
    return ("layered models run: RTensor = golden output (bit-exact)" if runs_layers else
            "layered models refused at Inference with BAD_MODEL (firmware op runtime not landed); "
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

    def boot(self, dev):
        self.model = None
        self.tensor_valid_len = 0
        self._publish_spec(dev)
        dev.set_read_data(Cmd.RTIMINGS, b"")

    def _publish_spec(self, dev):
        m = self.model or {"input_bytes": 0, "output_bytes": 0}
        dev.set_spec(encode_spec(hw_type=HW_TYPE_TENSORSOC, tiles=self.config.np,
                                 internal_kib=self.config.main_ram_size // 1024, flash_kib=0, external_kib=0,
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
        return {"input_bytes": inb, "output_bytes": outb, "n_layers": layers, "image": image}

    def _on_server_done(self, dev, length):
        # The regression uploads only images the server must refuse: a valid
        # one replaces the firmware (and this model with it).
        dev.finish(Status.BUSY_WRITE, ErrorCause.BAD_SERVER)

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
            if m["n_layers"]:
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
        """With an error, two stages as the firmware does it: the error bit
        now, the busy bit cleared by a later (deferred) job."""
        self._fw.last = (self._fw.last[0], error)
        if error is None:
            self._dev.finish(bit)
            return
        self._dev.raise_error(error)
        self._dev.after(DEFERRED, lambda: self._dev.finish(bit))

    def __getattr__(self, name):
        return getattr(self._dev, name)


# Transactions after which a deferred job would run on its own: never, in practice.
DEFERRED = 1 << 40
