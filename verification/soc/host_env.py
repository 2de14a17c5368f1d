"""Shared pieces of the SoC-level host-port tests: boot the SoC with a host
on its SPI/QPI pins, watch the console, drive the sensor port."""

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge, Timer

from tensorsoc.cores.sim_control import BOOT_FLAG
from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.host.cocotb_transport import CocotbTransport
from tensorsoc.sw.host.device import Device
from tensorsoc.verification.soc.uart_agent import UartStreamBfm
from tensorsoc.sw.host.cocotb_fast_transport import CocotbFastTransport

SKIP_MEMTEST = BOOT_FLAG["skip_memtest"]
TE_TRACE = BOOT_FLAG["te_trace"]       # firmware prints the TensorEngine trace of each accelerated layer
EXIT_AFTER_BOOT = BOOT_FLAG["exit_after_boot"]


HOST_PATHS = ("pins", "fast")


def soc_config():
    return SoCConfig(**json.loads(os.environ["TSOC_CONFIG_JSON"]))


def sys_period_ps(cfg, ns=None):
    """The SoC clock's period in ps (an even number, as cocotb's clock and
    cores/sim_clock.v need): the configuration's, or ``ns``."""
    return 2 * round(500 * (1e9 / cfg.sys_clk_freq if ns is None else float(ns)))


def start_clock(dut, period_ps, cfg):
    """Starts the SoC's clock: the generator inside the model (cores/sim_clock.v:
    no simulator step from cocotb per edge) at the configuration's frequency,
    or cocotb's C++ clock on the ``sys_clk`` pin for another period (tsoc
    bench host sweeps it).  Wait for edges of ``dut.sim_clock_clk``, the
    clock the SoC runs on either way."""
    if period_ps == sys_period_ps(cfg):
        dut.sim_clock_en.value = 1
    else:
        dut.sim_clock_en.value = 0
        Clock(dut.sys_clk, period_ps, unit="ps", impl="gpi").start()


def host_path(default="pins"):
    """Which host drives the SoC's host port: ``pins`` (Python on the pins,
    one step per SCLK edge: the protocol tests) or ``fast`` (the simulated
    master of cores/host_spi/sim_master.py, one Python step per chunk), from
    the environment's TSOC_HOST_PATH."""
    path = os.environ.get("TSOC_HOST_PATH") or default
    if path not in HOST_PATHS:
        raise ValueError(f"TSOC_HOST_PATH={path!r}: expected one of {', '.join(HOST_PATHS)}")
    return path


def host_transport(dut, sys_period_ps, qpi=False, msb_first=False, path=None, switchable=False, **kwargs):
    """The host transport of ``path`` (default: :func:`host_path`), strapped.
    ``switchable``: a transport that can change path between frames
    (``use_pins``: the simulation top's master, starting on ``path``)."""
    path = path or host_path()
    if path == "fast" or switchable:
        transport = CocotbFastTransport(dut, qpi=qpi, msb_first=msb_first, pin_level=path == "pins", **kwargs)
        transport.set_sys_period(sys_period_ps)
    else:
        transport = CocotbTransport(dut, qpi=qpi, msb_first=msb_first, **kwargs)
        if hasattr(dut, "host_fast_en"):      # the pins drive the port, whatever a test before left
            dut.host_fast_en.value = 0
    transport.strap()
    return transport


class Console:
    """Collects the UART console into lines."""

    def __init__(self, dut, echo=False):
        self.echo = echo
        self.bfm = UartStreamBfm(dut)
        self.lines = []
        self._partial = bytearray()
        self._task = cocotb.start_soon(self._run())

    async def _run(self):
        self.bfm.start()
        while True:
            b = await self.bfm.bytes.get()
            if b == ord("\n"):
                line = self._partial.decode(errors="replace").rstrip("\r")
                self.lines.append(line)
                if self.echo:
                    print(line, flush=True)
                else:
                    cocotb.log.info(f"console: {line}")
                self._partial.clear()
            else:
                self._partial.append(b)

    async def wait_for(self, text, timeout_ns=20_000_000, start=0):
        """Waits until a console line (from index ``start``) contains ``text``."""
        waited = 0
        while True:
            for line in self.lines[start:]:
                if text in line:
                    return line
            if waited >= timeout_ns:
                raise AssertionError(f"console never printed {text!r}; it printed:\n" + "\n".join(self.lines))
            await Timer(10_000, unit="ns")
            waited += 10_000


class Sensor:
    """Drives the sensor byte stream (valid/ready/data)."""

    def __init__(self, dut):
        self.dut = dut
        dut.sensor_valid.value = 0
        dut.sensor_data.value = 0

    async def send(self, data: bytes):
        """Offers each byte until the port takes it (valid and ready at a
        rising edge).  Drives at falling edges, so no write can race an
        edge."""
        clk = self.dut.sim_clock_clk
        await FallingEdge(clk)
        for b in data:
            self.dut.sensor_valid.value = 1
            self.dut.sensor_data.value = b
            while True:
                await ReadOnly()
                taken = int(self.dut.sensor_ready.value)
                await RisingEdge(clk)
                await FallingEdge(clk)
                if taken:
                    break
        self.dut.sensor_valid.value = 0


async def boot(dut, qpi=False, msb_first=False, flags=SKIP_MEMTEST, period_ns=20.0, timeout=0.02, echo=False,
               path=None, switchable=False):
    """Resets the SoC with the host's pins strapped for SPI or QPI and waits
    for the server firmware; returns (Device, Console, Sensor).  ``path``:
    the host path (default: TSOC_HOST_PATH, else pins); ``switchable``: a
    transport that can change path between frames (host_transport)."""
    cfg = soc_config()
    # TSOC_SIM_SYS_PERIOD_NS runs the SoC clock at another rate than the
    # configuration's (tsoc bench host: the SoC:SCLK ratio the port needs).
    period_ps = sys_period_ps(cfg, os.environ.get("TSOC_SIM_SYS_PERIOD_NS"))
    start_clock(dut, period_ps, cfg)
    transport = host_transport(dut, period_ps, qpi=qpi, msb_first=msb_first, path=path, switchable=switchable,
                               period_ns=period_ns)
    sensor = Sensor(dut)
    dut.serial_sink_valid.value = 0
    dut.serial_sink_data.value = 0
    dut.sim_ctrl_boot_flags.value = flags
    dut.sys_rst.value = 1
    await ClockCycles(dut.sim_clock_clk, 16)
    dut.sys_rst.value = 0
    # TSOC_HOST_ECHO=1 prints the firmware's console as it comes (debugging).
    console = Console(dut, echo=echo or bool(os.environ.get("TSOC_HOST_ECHO")))
    await console.wait_for("server: ready", timeout_ns=200_000_000)
    # TSOC_HOST_TIMEOUT_SCALE: the device's waits for an SoC whose MCORE is
    # slower (tests/test_host_soc.py, the Colorlight i5's VexRiscv minimal).
    scale = float(os.environ.get("TSOC_HOST_TIMEOUT_SCALE", "1"))
    return Device(transport, timeout=timeout, timeout_scale=scale), console, sensor
