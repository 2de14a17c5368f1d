"""Scoreboard: predicts every transaction with the behavioural device model
(verification/host/device_model.py + firmware_model.ServerFirmwareModel) and
fails on any difference in what the device drove: status words (busy bits,
error bit), RERROR causes, RID, RSpec, RTensor and RTimings data, and which
byte slots the device drove at all.

Time: the model does not know how long the firmware takes, so firmware and
hardware completions are *deferred* (firmware_model.DEFERRED) and released
when the device shows them: a whole RStatus/RERROR read whose busy bits are
clear where the model still has them set.  Sequences therefore poll after
every command that sets a busy bit; they send other commands to a busy device
only where it is busy for sure (Acquire waiting for its sensor frame).
"""

from collections import deque

import cocotb
from pyuvm import ConfigDB, uvm_component, uvm_tlm_analysis_fifo

from tensorsoc.spec.host_protocol import BUSY_MASK, DUMMY_CLOCKS, RERROR_STATUS_SHIFT, Cmd, ErrorCause, Status, Window
from tensorsoc.verification.host.device_model import DeviceModel
from tensorsoc.verification.uvm.coverage import NO_COMMAND, UNKNOWN
from tensorsoc.verification.uvm.firmware_model import ServerFirmwareModel
from tensorsoc.verification.soc.model_job import LAYER_LINE, software_lines

MAX_REPORTED = 20


def layer_under_half_us(lines, layer, sys_clk_freq):
    """The server's last console line for ``layer`` (printed before the
    inference is reported done) shows fewer cycles than round to 1 us, so
    RTimings rightly says 0 us for it (sw/firmware/model_run.c rounds to the
    nearest microsecond).  False when no line shows the layer."""
    for line in reversed(lines):
        m = LAYER_LINE.search(line)
        if m and int(m.group(1)) == layer:
            return int(m.group(5)) + sys_clk_freq // 2_000_000 < sys_clk_freq // 1_000_000
    return False


class PredictionFault:
    """Deliberate error in the prediction (proves the regression can fail):
    flips ``bit`` of the first predicted data byte of the ``nth`` (1-based)
    transaction with command ``cmd``."""

    def __init__(self, spec):
        name, bit, *nth = spec.split(":")
        self.cmd = Cmd[name.upper()]
        self.bit = int(bit)
        self.nth = int(nth[0]) if nth else 1
        self.seen = 0

    def apply(self, cmd, miso, first_data_slot):
        if cmd != self.cmd:
            return miso
        self.seen += 1
        if self.seen == self.nth and first_data_slot < len(miso) and miso[first_data_slot] is not None:
            miso = list(miso)
            miso[first_data_slot] ^= 1 << self.bit
        return miso


class Scoreboard(uvm_component):
    def build_phase(self):
        self.host_fifo = uvm_tlm_analysis_fifo("host_fifo", self)
        self.sensor_fifo = uvm_tlm_analysis_fifo("sensor_fifo", self)
        self.host_export = self.host_fifo.analysis_export
        self.sensor_export = self.sensor_fifo.analysis_export
        cdb = ConfigDB()
        self.config = cdb.get(self, "", "SOC_CONFIG")
        self.qpi = cdb.get(self, "", "QPI")
        self.coverage = cdb.get(self, "", "COVERAGE")
        self.runs_layers = cdb.get(self, "", "RUNS_LAYERS")
        self.golden = cdb.get(self, "", "GOLDEN")
        fault = cdb.get(self, "", "PREDICTION_FAULT")
        self.fault = PredictionFault(fault) if fault else None
        self.mode = "QPI" if self.qpi else "SPI"
        self.mismatches = []
        self.checked = 0
        self.frames = []
        self.resets = 0
        self.history = deque(maxlen=8)      # recent transactions, for mismatch reports
        self.servers_started = 0            # servers uploaded with WServer that started
        self.timings = []                   # RTimings checked: per-layer us and the time seen
        self.last_inference = None          # (Inference sent, seen done) in ps, of the last one that ran
        self.model = self._new_model()

    def _new_model(self):
        w = self.config.windows(0)
        self.firmware = ServerFirmwareModel(self.config, self.runs_layers, self.golden)
        self.pending = None            # command whose completion the model still defers
        self.pending_since = 0
        return DeviceModel(self.firmware, qpi=self.qpi, sensor=self._sensor, chunk_delay=1 << 40,
                           sensor_delay=1 << 40,
                           window_sizes={Window.MODEL: w["model"][1], Window.TENSOR: w["tensor"][1],
                                         Window.SERVER: w["server"][1]})

    def _sensor(self):
        n = self.model.expected_input
        if n == 0:
            return b""
        return self.frames.pop(0)[:n] if self.frames else None

    async def run_phase(self):
        cocotb.start_soon(self._sensor_loop())
        while True:
            self.check(await self.host_fifo.get())

    async def _sensor_loop(self):
        while True:
            self.frames.append((await self.sensor_fifo.get()).data)

    # -- prediction ---------------------------------------------------------
    def _status_shown(self, obs):
        """Status bits a whole RStatus/RERROR read shows (None otherwise)."""
        if obs.cmd not in (Cmd.RSTATUS, Cmd.RERROR) or obs.clocks != obs.cpb * (1 + DUMMY_CLOCKS // obs.cpb + 4):
            return None
        first = 1 + DUMMY_CLOCKS // obs.cpb
        data = obs.device[first:first + 4]
        if any(b is None for b in data):
            return None
        word = int.from_bytes(bytes(data), "little")
        return word >> RERROR_STATUS_SHIFT if obs.cmd == Cmd.RERROR else word

    def _release(self, obs):
        """Runs deferred completions, one stage at a time, until the model
        shows the status the device shows (or nothing is left to run).  A
        firmware completion is one stage: the busy bit clears and its error,
        if any, is raised together (host_port_finish in the firmware)."""
        shown = self._status_shown(obs)
        if shown is None or not self.model.jobs:
            return
        mask = BUSY_MASK | 1 << Status.ERROR
        while self.model.jobs and (shown & mask) != (self.model.status & mask):
            self.model.step()
        if self.model.jobs:
            return
        self._resolve_pending(obs)

    def _resolve_pending(self, obs):
        """The firmware finished the pending command: its outcome is known."""
        if self.pending is None:
            return
        _, error = self.firmware.last if getattr(self.firmware, "last", None) else (None, None)
        self.coverage.sample_outcome(self.pending, error.name if error else "OK", self.mode)
        model = self.firmware.model
        if self.pending == Cmd.WMODEL.name and error is None and model:
            self.coverage.sample_model(model["image"], executed=False)
        if self.pending == Cmd.INFERENCE.name and error is None and model and model["n_layers"]:
            self.coverage.sample_model(model["image"], executed=True)
            self.last_inference = (self.pending_since, obs.time_ps)
        self.pending = None

    def check(self, obs):
        if obs.reset:
            self._reset(obs, "CS_N high")
            return
        if obs.server_ready:
            self._server_ready(obs)
            return
        if obs.clocks == 0:
            self.model.transaction(obs.host, 0)
            return
        self.history.append(self._describe(obs))
        if obs.reset_inside and obs.reset_clock >= obs.cpb:
            # The device that came out of the reset saw only the tail.
            self._reset(obs, "CS_N low (mid-transaction)")
            miso = self.model.end_after_reset(obs.clocks)
            self._compare(obs, self.model.outcomes[-1], miso, 1 + DUMMY_CLOCKS // obs.cpb)
            self.coverage.sample_outcome(NO_COMMAND, ErrorCause.PARTIAL_BYTE.name, self.mode)
            return
        if obs.reset_inside:
            self._reset(obs, "CS_N low (mid-transaction)")    # inside the command byte: decoded after it
        self._release(obs)
        jobs_before = len(self.model.jobs)
        miso = self.model.transaction(obs.host, obs.clocks)
        outcome = self.model.outcomes[-1]
        first = 1 + DUMMY_CLOCKS // obs.cpb
        if self.fault:
            miso = self.fault.apply(outcome.cmd, miso, first)
        self._compare(obs, outcome, miso, first)
        if outcome.cmd == Cmd.RTIMINGS and outcome.error is None and self.runs_layers \
                and not self.firmware.output_undefined:
            self._check_timings(obs, first)
        name = outcome.cmd.name if outcome.cmd is not None else (UNKNOWN if outcome.code is not None else NO_COMMAND)
        if outcome.error is not None:
            self.coverage.sample_outcome(name, outcome.error.name, self.mode)
        elif len(self.model.jobs) > jobs_before:
            self.pending = name       # outcome known when the firmware is done
            self.pending_since = obs.time_ps
            if outcome.cmd in (Cmd.WMODEL, Cmd.WSERVER) and len(obs.host) - 1 == 256:
                self.coverage.sample_outcome(name, "OK", self.mode)    # intermediate chunk
                self.pending = None
        else:
            self.coverage.sample_outcome(name, "OK", self.mode)
        shown = self._status_shown(obs)
        if shown is not None:
            self.coverage.sample_status(shown, self.mode)

    def _reset(self, obs, how):
        """An SoC reset: the device starts again from scratch (gateware and
        firmware), so does the model.  Covered by the state the model was in."""
        self.resets += 1
        self.coverage.sample_reset(self._reset_state(), how, self.mode)
        self.model = self._new_model()
        self.last_inference = None

    def _reset_state(self):
        m = self.model
        if m.busy >> Status.WAIT_INFERENCE & 1:
            return "WAIT_INFERENCE"
        if m.busy >> Status.WAIT_ACQUIRE & 1:
            return "WAIT_ACQUIRE"
        if m.sequence is not None:
            return "chunk sequence"
        return "BUSY_WRITE" if m.busy else "idle"

    def _server_ready(self, obs):
        """A server firmware started by WServer said it is ready: the model's
        deferred start of the new server runs now."""
        if not self.firmware.server_starting:
            self._mismatch(obs, 0, None, None, "a new server started, but the model expected none")
            return
        self.model.run_pending()
        self.servers_started += 1
        self._resolve_pending(obs)

    def _check_timings(self, obs, first):
        """RTimings values (server.c: one u32 per layer, the layer's cycles
        rounded to microseconds): every layer took time, and together they
        fit in the time the inference was seen to take -- from the Inference
        transaction to the status read that showed it done -- allowing for
        the rounding of each word."""
        data = obs.device[first:obs.clocks // obs.cpb]
        if any(b is None for b in data) or len(data) % 4 or not self.last_inference:
            return
        words = [int.from_bytes(bytes(data[i:i + 4]), "little") for i in range(0, len(data), 4)]
        start_ps, done_ps = self.last_inference
        window_us = (done_ps - start_ps) / 1e6
        self.timings.append({"layers_us": words, "window_us": window_us})
        zero = [i for i, w in enumerate(words) if w == 0 and not self._under_half_us(i)]
        if zero:
            self._mismatch(obs, first + 4 * zero[0], None, None,
                           f"RTimings: layer {zero[0]} took 0 us ({words}), and the server's console line "
                           f"does not show it under half a microsecond")
        elif sum(words) > window_us + 0.5 * len(words):
            self._mismatch(obs, first, None, None,
                           f"RTimings: layers sum to {sum(words)} us ({words}), more than the "
                           f"{window_us:.1f} us the inference was seen to take")

    def _under_half_us(self, layer):
        bfm = ConfigDB().get(self, "", "HOST_BFM")
        lines = getattr(getattr(bfm, "console", None), "lines", [])
        return layer_under_half_us(lines, layer, self.config.sys_clk_freq)

    def _compare(self, obs, outcome, miso, first):
        self.checked += 1
        cpb = obs.cpb
        whole = obs.clocks // cpb
        # RTimings values are measured times (checked by _check_timings);
        # RTensor after an inference on an overwritten model is undefined.
        mask_data = self.runs_layers and (outcome.cmd == Cmd.RTIMINGS or (
            outcome.cmd == Cmd.RTENSOR and self.firmware.output_undefined))
        for slot, (want, got) in enumerate(zip(miso, obs.device)):
            if (want is None) != (got is None):
                self._mismatch(obs, slot, want, got, "device drove" if got is not None else "device did not drive")
                return
            if want is not None and slot < whole and want != got and not mask_data:
                self._mismatch(obs, slot, want, got, "data")
                return

    @staticmethod
    def _describe(obs):
        cmd = obs.cmd.name if obs.cmd is not None else (f"0x{obs.code:02x}" if obs.code is not None else "(partial)")
        dev = bytes(b for b in obs.device if b is not None)
        return (f"{obs.time_ps / 1e6:10.3f} us {cmd:<9} {obs.clocks:5d} clocks host {obs.host[1:9].hex()}"
                f"{'..' if len(obs.host) > 9 else ''} device {dev[:12].hex()}{'..' if len(dev) > 12 else ''}")

    def _check_layers_on_accelerator(self):
        """With an accelerator in the SoC, every layer of every inference
        ran on it: the server's per-layer console lines say where each ran
        (the firmware decides, sw/firmware/accel.c), and none may say
        software (the models are compiled with require_accel)."""
        bfm = ConfigDB().get(self, "", "HOST_BFM")
        if not self.config.accelerator or getattr(bfm, "console", None) is None:
            return
        for line in software_lines(bfm.console.lines):
            self.mismatches.append(f"a layer ran in software on the device: {line!r}")

    def _mismatch(self, obs, slot, want, got, what):
        cmd = obs.cmd.name if obs.cmd is not None else f"code {obs.code}"
        fmt = lambda v: "-" if v is None else f"0x{v:02x}"
        first = 1 + DUMMY_CLOCKS // obs.cpb
        region = "command" if slot == 0 else ("dummy" if slot < first else f"data byte {slot - first}")
        values = f": expected {fmt(want)}, device {fmt(got)}" if (want, got) != (None, None) else ""
        msg = (f"t={obs.time_ps / 1e6:.3f} us {cmd} ({obs.clocks} clocks, {self.mode}): {what} at slot {slot} "
               f"({region}){values}; model status 0x{self.model.status:x}")
        self.mismatches.append(msg)
        if len(self.mismatches) <= MAX_REPORTED:
            self.logger.error(f"MISMATCH {msg}\n  last transactions:\n    " + "\n    ".join(self.history))

    def check_phase(self):
        self._check_layers_on_accelerator()
        self.logger.info(f"scoreboard: {self.checked} transactions checked, {len(self.mismatches)} mismatch(es), "
                         f"{self.resets} reset(s)")
        assert not self.mismatches, f"{len(self.mismatches)} mismatch(es); first: {self.mismatches[0]}"
        assert self.checked > 0, "scoreboard saw no transaction"
