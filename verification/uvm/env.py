"""The environment: SPI/QPI agent, sensor agent, scoreboard, coverage, and
the SoC around them (clock, reset, console).

ConfigDB keys (set by :class:`SocEnv` from the test's settings):
``HOST_BFM``, ``SENSOR_BFM``, ``HOST_SEQR``, ``SENSOR_SEQR``, ``SOC_CONFIG``,
``QPI``, ``SEED``, ``COVERAGE``, ``RUNS_LAYERS`` (firmware_model),
``GOLDEN`` (model_traffic.GoldenTable), ``PREDICTION_FAULT`` (None, or
``CMD:BIT[:N]``: a deliberately wrong prediction, see scoreboard.py).
Settings come from the environment of the simulation process:
``TSOC_SEED``, ``TSOC_HOST_QPI``, ``TSOC_UVM_FAULT``, ``TSOC_UVM_OUT``
(folder for coverage.json / stats.json), ``TSOC_UVM_RUNS_LAYERS``.
"""

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.utils import get_sim_time
from pyuvm import ConfigDB, uvm_env, uvm_test

from tensorsoc.verification.soc.host_env import (SKIP_MEMTEST, Console, Sensor, host_transport, soc_config, start_clock,
                                       sys_period_ps)
from tensorsoc.verification.uvm.coverage import Coverage
from tensorsoc.verification.uvm.firmware_model import FIRMWARE_RUNS_LAYERS, expectation
from tensorsoc.verification.uvm.host_agent import HostAgent, HostBfm, pulse_reset
from tensorsoc.verification.uvm.model_traffic import GoldenTable
from tensorsoc.verification.uvm.scoreboard import Scoreboard
from tensorsoc.verification.uvm.sensor_agent import SensorAgent, SensorBfm


def settings():
    return {"seed": int(os.environ.get("TSOC_SEED", "1")),
            "qpi": os.environ.get("TSOC_HOST_QPI", "0") == "1",
            "fault": os.environ.get("TSOC_UVM_FAULT") or None,
            "out": os.environ.get("TSOC_UVM_OUT"),
            "runs_layers": os.environ.get("TSOC_UVM_RUNS_LAYERS", str(int(FIRMWARE_RUNS_LAYERS))) == "1"}


class SocEnv(uvm_env):
    def build_phase(self):
        s = settings()
        dut = cocotb.top
        cfg = soc_config()
        self.sys_period_ps = sys_period_ps(cfg)
        start_clock(dut, self.sys_period_ps, cfg)
        transport = host_transport(dut, self.sys_period_ps, qpi=s["qpi"], msb_first=bool(cfg.host_msb_first),
                                   switchable=True)
        dut.serial_sink_valid.value = 0
        dut.serial_sink_data.value = 0
        dut.sim_ctrl_boot_flags.value = SKIP_MEMTEST
        dut.sys_rst.value = 1
        self.console = Console(dut)
        self.coverage = Coverage(runs_layers=s["runs_layers"], config=cfg)
        self.coverage.notes.append(f"firmware expectation: {expectation(s['runs_layers'])}")
        cdb = ConfigDB()
        for key, value in (("HOST_BFM", HostBfm(transport, dut, self.console)),
                           ("SENSOR_BFM", SensorBfm(Sensor(dut))), ("SOC_CONFIG", cfg), ("QPI", s["qpi"]),
                           ("SEED", s["seed"]), ("COVERAGE", self.coverage), ("RUNS_LAYERS", s["runs_layers"]),
                           ("GOLDEN", GoldenTable()), ("PREDICTION_FAULT", s["fault"])):
            cdb.set(None, "*", key, value)
        self.settings = s
        self.host = HostAgent("host", self)
        self.sensor = SensorAgent("sensor", self)
        self.scoreboard = Scoreboard("scoreboard", self)

    def connect_phase(self):
        self.host.monitor.ap.connect(self.scoreboard.host_export)
        self.sensor.monitor.ap.connect(self.scoreboard.sensor_export)

    async def boot(self):
        """Releases reset and waits for the server firmware (first boot)."""
        await pulse_reset(cocotb.top, self.console)

    def extract_phase(self):
        # Before check_phase: a failing test still reports its cycles and coverage.
        out = self.settings["out"]
        if not out:
            return
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.coverage.save(out / "coverage.json")
        sb = self.scoreboard
        (out / "stats.json").write_text(json.dumps({
            "sim_time_ps": get_sim_time(unit="ps"), "cycles": int(get_sim_time(unit="ps") // self.sys_period_ps),
            "transactions": sb.checked, "mismatches": sb.mismatches[:50], "resets": sb.resets,
            "servers_started": sb.servers_started,
            "rtimings_checked": sb.timings[:20],
            "mode": "QPI" if self.settings["qpi"] else "SPI", "seed": self.settings["seed"],
            "float_errors": ConfigDB().get(None, "", "GOLDEN").float_errors}, indent=1))


class BaseTest(uvm_test):
    """Builds the environment, boots the SoC, runs :meth:`stimulus`."""

    def build_phase(self):
        self.env = SocEnv("env", self)

    async def run_phase(self):
        self.raise_objection()
        await self.env.boot()
        self.rng = random.Random(f"{type(self).__name__}-{self.env.settings['seed']}")
        self.host_seqr = ConfigDB().get(None, "", "HOST_SEQR")
        await self.stimulus()
        # Drain: the monitor publishes the last transaction when CS_N rises.
        from cocotb.triggers import Timer
        await Timer(1, unit="us")
        self.drop_objection()

    async def stimulus(self):
        raise NotImplementedError
