"""UVM test: the MCORE boots its ROM firmware, prints the configuration
banner, tests main RAM and reports PASS, then ends the simulation with
status 0.  Run through verification/soc/runner.py (pytest:
tests/test_soc_boot.py)."""

import os
import re

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, ReadOnly, RisingEdge, Timer
from pyuvm import ConfigDB, uvm_env, uvm_root, uvm_subscriber, uvm_test

from tensorsoc.cores.sim_control import BOOT_FLAG
from tensorsoc.verification.soc.uart_agent import UartAgent, UartStreamBfm

RESET_CYCLES = 16


class SimControlBfm:
    """Owns clock, reset and the SimControl pads."""

    SKIP_MEMTEST = BOOT_FLAG["skip_memtest"]
    EXIT_AFTER_BOOT = BOOT_FLAG["exit_after_boot"]

    def __init__(self, dut, clk_period_ns, boot_flags=EXIT_AFTER_BOOT):
        self.dut = dut
        self.clk_period_ns = clk_period_ns
        self.boot_flags = boot_flags

    async def reset(self):
        Clock(self.dut.sys_clk, self.clk_period_ns, unit="ns").start()
        self.dut.sys_rst.value = 1
        self.dut.serial_sink_valid.value = 0
        self.dut.serial_sink_data.value = 0
        self.dut.sim_ctrl_boot_flags.value = self.boot_flags
        # Host port idle (CS_N high, SCLK low, MISO pulled up: SPI), no sensor data.
        self.dut.host_spi_cs_n.value = 1
        self.dut.host_spi_clk.value = 0
        self.dut.host_spi_mosi.value = 1
        self.dut.host_spi_miso_i.value = 1
        self.dut.host_spi_q_i.value = 0xF
        self.dut.sensor_valid.value = 0
        self.dut.sensor_data.value = 0
        await ClockCycles(self.dut.sys_clk, RESET_CYCLES)
        self.dut.sys_rst.value = 0

    async def wait_finish(self, max_cycles):
        """Returns the firmware's exit code, or None on time-out."""
        timeout = Timer(max_cycles * self.clk_period_ns, unit="ns")
        fired = await First(RisingEdge(self.dut.sim_ctrl_finish), timeout)
        if fired is timeout:
            return None
        await ReadOnly()
        return int(self.dut.sim_ctrl_exit_code.value)


class BootChecker(uvm_subscriber):
    """Checks the console lines against what the firmware must print."""

    EXPECTED = [
        ("banner", re.compile(r"^tensorsoc MCORE firmware \(rom\)$")),
        ("config", None),  # filled from the ConfigDB: the configuration the SoC was built with
        ("memtest result", re.compile(r"^memtest: PASS \(0 errors, \d+ cycles\)$")),
    ]

    def build_phase(self):
        self.lines = []
        cfg = self.cdb_get("SOC_CONFIG")
        self.expected = [(name, rx if rx else re.compile(
            rf"^  config : NP={cfg['np']} NT={cfg['nt']} VW={cfg['vw']}, "
            rf"peak {cfg['np'] * cfg['vw']} MACs/clock$")) for name, rx in self.EXPECTED]

    def write(self, line):
        self.lines.append(line)

    def check_phase(self):
        exit_code = self.cdb_get("EXIT_CODE")
        assert exit_code is not None, "the firmware did not finish before the cycle limit"
        for name, rx in self.expected:
            assert any(rx.match(l) for l in self.lines), \
                f"console never printed the {name} (pattern {rx.pattern!r}); it printed:\n" + "\n".join(self.lines)
        assert not any("FAIL" in l for l in self.lines), "console reported a failure"
        assert exit_code == 0, f"firmware exited with status {exit_code}"


class BootEnv(uvm_env):
    def build_phase(self):
        self.uart = UartAgent("uart", self)
        self.checker = BootChecker("checker", self)

    def connect_phase(self):
        self.uart.monitor.ap.connect(self.checker.analysis_export)


class BootTest(uvm_test):
    def build_phase(self):
        import json
        dut = cocotb.top
        cfg = json.loads(os.environ["TSOC_CONFIG_JSON"])
        ConfigDB().set(None, "*", "SOC_CONFIG", cfg)
        ConfigDB().set(None, "*", "UART_BFM", UartStreamBfm(dut))
        ConfigDB().set(None, "*", "SIM_CTRL_BFM", SimControlBfm(dut, 1e9 / cfg["sys_clk_freq"]))
        self.env = BootEnv("env", self)

    async def run_phase(self):
        self.raise_objection()
        ctl = ConfigDB().get(self, "", "SIM_CTRL_BFM")
        await ctl.reset()
        code = await ctl.wait_finish(int(os.environ.get("TSOC_MAX_CYCLES", "60000000")))
        # Let the monitor drain the last characters.
        await ClockCycles(cocotb.top.sys_clk, 8)
        ConfigDB().set(None, "*", "EXIT_CODE", code)
        self.drop_objection()


@cocotb.test()
async def boot_memtest(dut):
    """ROM firmware boots, prints the banner and passes the main-RAM test."""
    await uvm_root().run_test(BootTest)
