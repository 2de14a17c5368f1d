"""SPI/QPI host agent: BFM, driver, monitor, agent.

The BFM owns the host pins.  Driving goes through the host library's
:class:`~sw.host.cocotb_transport.CocotbTransport` (the one bit-level host of
the project, error injection included); the BFM adds an independent pin
sampler that rebuilds every CS_N-low period from the wires, so the monitor
(and the scoreboard behind it) sees what really was on the bus, not what the
driver meant to send.
"""

import cocotb
from cocotb.queue import Queue
from cocotb.triggers import ClockCycles, FallingEdge, First, RisingEdge
from cocotb.utils import get_sim_time
from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_driver, uvm_monitor, uvm_sequencer

from tensorsoc.spec.host_protocol import ALIASES, Cmd
from tensorsoc.sw.host.transport import BitCodec
from tensorsoc.verification.uvm.items import Observed

IDLE = 0b1111
SERVER_CODES = {int(Cmd.WSERVER)} | {code for code, cmd in ALIASES.items() if cmd == Cmd.WSERVER}


class HostBfm:
    """``transport``: a strapped CocotbTransport on the SoC's host pins;
    ``dut``: the SoC (its ``sys_rst``); ``console``: the UART console, where
    the server firmware says it is ready after a reset or a WServer."""

    def __init__(self, transport, dut, console):
        self.transport = transport
        # A transport that can change host path between frames (the master
        # of the fast path, pin level when its en is low): use_path().
        self.switchable = hasattr(transport, "use_pins")
        self.own_path = "pins" if getattr(transport, "pin_level", not self.switchable) else "fast"
        self.qpi = transport.qpi
        self.codec = BitCodec(transport.qpi, transport.msb_first)
        self.dut = dut
        self.console = console
        self.observed = Queue()
        self._task = None
        self._reset_clock = None     # set while a reset happens inside a CS_N-low period
        self._clocks = 0             # SCLK cycles of the current CS_N-low period (sampler)
        self._server_mark = 0        # console line from which a WServer's new server counts

    # -- driving ---------------------------------------------------------------
    async def frame(self, item):
        t = self.transport
        if item.bits is not None:
            result = await t.partial(item.cmd, item.write, item.bits)
        else:
            result = await t.raw(item.cmd, item.write, item.read_len, item.dummy_clocks, item.clocks)
        return result.data

    async def reset(self):
        """CS_N high and the pins strapped (QPI is sampled at reset), reset,
        wait for the server firmware."""
        self.transport.strap()
        start = len(self.console.lines)
        await assert_reset(self.dut)
        await wait_server(self.console, start)
        self.observed.put_nowait(Observed(self.qpi, 0, b"", [], get_sim_time(unit="ps"), reset=True))

    async def reset_in_frame(self, item):
        """The SoC reset pulsed ``item.reset_after`` SCLK cycles into
        ``item``'s frame while the host goes on clocking with CS_N low; then
        wait for the server firmware.  The host drives the strap level on
        MISO (DQ1) through the reset only if the frame's data keeps it there
        (zeros in QPI; in SPI the host never drives DQ1), so the sequence
        sends zeros."""
        start = len(self.console.lines)
        frame = cocotb.start_soon(self.frame(item))
        for _ in range(item.reset_after):
            await RisingEdge(self.transport.sclk)
        # The clocks the monitor has counted (falling edges): one fewer.
        self._reset_clock = self._clocks if not self._wire_observed else item.reset_after - 1
        await assert_reset(self.dut)
        data = await frame
        await wait_server(self.console, start)
        return data

    async def server_ready(self):
        """Waits for the console line of a server firmware started by WServer
        (the host cannot see it: the status word is idle all along)."""
        await wait_server(self.console, self._server_mark)
        self.observed.put_nowait(Observed(self.qpi, 0, b"", [], get_sim_time(unit="ps"), server_ready=True))

    def mark_console(self):
        """Console lines from here on count for :meth:`server_ready`."""
        self._server_mark = len(self.console.lines)

    def use_path(self, path):
        """The next frames on host path ``path`` ("pins" or "fast"; None:
        the test's own).  A transport that cannot switch keeps its path and
        says so in the log."""
        path = path or self.own_path
        if self.switchable:
            self.transport.use_pins(path == "pins")
        elif path != self.own_path:
            cocotb.log.info(f"host path {path} asked for; this transport drives {self.own_path} only: staying on it")

    async def wait(self, ns):
        from cocotb.triggers import Timer
        await Timer(max(1, int(ns)), unit="ns")

    # -- sampling --------------------------------------------------------------
    def start(self):
        if hasattr(self.transport, "observers"):
            if self._observer not in self.transport.observers:
                self.transport.observers.append(self._observer)
        # The pin sampler for pin-level frames: it waits for CS_N on the
        # pins Python drives, which stay high while the master has the port.
        if (self.switchable or not hasattr(self.transport, "observers")) and self._task is None:
            self._task = cocotb.start_soon(self._sample())

    @property
    def _wire_observed(self):
        """The fast host path's master reports what was on the wire per
        frame (cores/host_spi/sim_master.py): the monitor takes it from
        there instead of waking at every SCLK edge."""
        return hasattr(self.transport, "observers") and not getattr(self.transport, "pin_level", False)

    def _observer(self, clocks, host, dev, drove):
        w = 1 if not self.qpi else 0
        hv = host.values()
        dv = [v << w for v in dev.values()]
        oe = [v << w for v in drove.values()]
        obs = self._rebuild(hv, dv, oe)
        if self._reset_clock is not None:
            obs.reset_inside, obs.reset_clock, self._reset_clock = True, self._reset_clock, None
        self.observed.put_nowait(obs)

    async def _sample(self):
        t = self.transport
        fall_clk, rise_cs, fall_cs = FallingEdge(t.clk), RisingEdge(t.cs_n), FallingEdge(t.cs_n)
        while True:
            await fall_cs
            host, dev, oe = [], [], []
            self._clocks = 0
            while True:
                trig = await First(fall_clk, rise_cs)
                if trig is rise_cs:
                    break
                h, o, d = t.lines()
                host.append(h)
                oe.append(o)
                dev.append(d)
                self._clocks = len(host)
            obs = self._rebuild(host, dev, oe)
            if self._reset_clock is not None:
                obs.reset_inside, obs.reset_clock, self._reset_clock = True, self._reset_clock, None
            self.observed.put_nowait(obs)

    def _rebuild(self, host, dev, oe):
        cpb = 2 if self.qpi else 8
        n = len(host)
        if self.qpi:
            host_vals, dev_vals, driven = host, dev, [o != 0 for o in oe]
        else:
            host_vals = [v & 1 for v in host]
            dev_vals = [v >> 1 & 1 for v in dev]
            driven = [bool(o & 0b0010) for o in oe]
        nslots = -(-n // cpb)
        pad = nslots * cpb - n
        host_bytes = self.codec.decode(host_vals + [0] * pad)
        dev_bytes = self.codec.decode(dev_vals + [1 if not self.qpi else IDLE] * pad)
        device = [dev_bytes[s] if any(driven[s * cpb:(s + 1) * cpb]) else None for s in range(nslots)]
        return Observed(self.qpi, n, host_bytes, device, get_sim_time(unit="ps"))


class HostDriver(uvm_driver):
    def build_phase(self):
        self.bfm = ConfigDB().get(self, "", "HOST_BFM")

    async def run_phase(self):
        while True:
            item = await self.seq_item_port.get_next_item()
            if item.kind == "reset":
                await self.bfm.reset()
            elif item.kind == "reset_in_frame":
                item.data = await self.bfm.reset_in_frame(item)
            elif item.kind == "server_ready":
                await self.bfm.server_ready()
            elif item.kind == "wait":
                await self.bfm.wait(item.wait_ns)
            elif item.kind == "host_path":
                self.bfm.use_path(item.path)
            else:
                if item.cmd in SERVER_CODES:
                    self.bfm.mark_console()      # a WServer may start a new server
                item.data = await self.bfm.frame(item)
            self.seq_item_port.item_done()


class HostMonitor(uvm_monitor):
    """Publishes every transaction rebuilt from the pins (and SoC resets)."""

    def build_phase(self):
        self.ap = uvm_analysis_port("ap", self)
        self.bfm = ConfigDB().get(self, "", "HOST_BFM")

    async def run_phase(self):
        self.bfm.start()
        while True:
            self.ap.write(await self.bfm.observed.get())


class HostAgent(uvm_agent):
    def build_phase(self):
        self.seqr = uvm_sequencer("seqr", self)
        ConfigDB().set(None, "*", "HOST_SEQR", self.seqr)
        self.driver = HostDriver("driver", self)
        self.monitor = HostMonitor("monitor", self)

    def connect_phase(self):
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)


async def assert_reset(dut, cycles=16):
    """The SoC reset as host_env.boot applies it (the sensor stream idle)."""
    dut.sensor_valid.value = 0
    dut.sys_rst.value = 1
    await ClockCycles(dut.sim_clock_clk, cycles)
    dut.sys_rst.value = 0


async def wait_server(console, start):
    """Waits for the server firmware's ready line (console lines from ``start``)."""
    await console.wait_for("server: ready", timeout_ns=200_000_000, start=start)


async def pulse_reset(dut, console):
    """Reset, then wait for the server."""
    start = len(console.lines)
    await assert_reset(dut)
    await wait_server(console, start)
