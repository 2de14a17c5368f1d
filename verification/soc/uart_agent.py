"""pyuvm agent for the simulation SoC's UART console stream.

The console leaves the SoC as a byte stream (``serial_source_*``: LiteX's
RS232PHYModel), one character per valid/ready handshake.  The BFM owns those
pins; the monitor turns bytes into lines on its analysis port.
"""

import cocotb
from cocotb.queue import Queue
from cocotb.triggers import ReadOnly, RisingEdge
from pyuvm import uvm_agent, uvm_analysis_port, uvm_monitor


class UartStreamBfm:
    """Owns the ``serial_source_*`` pins: always ready, queues every byte."""

    def __init__(self, dut):
        self.clk = dut.sim_clock_clk      # the SoC's clock (verification/soc/host_env.start_clock)
        self.valid = dut.serial_source_valid
        self.ready = dut.serial_source_ready
        self.data = dut.serial_source_data
        self.bytes = Queue()
        self._task = None

    def start(self):
        self.ready.value = 1
        if self._task is None:
            self._task = cocotb.start_soon(self._collect())

    async def _collect(self):
        # Wakes up only when a byte is offered, so the console costs no
        # per-cycle Python while the firmware computes.
        while True:
            await ReadOnly()
            if not int(self.valid.value):
                await RisingEdge(self.valid)
                await ReadOnly()
            while int(self.valid.value):
                self.bytes.put_nowait(int(self.data.value))
                await RisingEdge(self.clk)
                await ReadOnly()
            await RisingEdge(self.clk)


class UartLineMonitor(uvm_monitor):
    """Publishes each console line (without the line ending)."""

    def build_phase(self):
        self.ap = uvm_analysis_port("ap", self)
        self.bfm = self.cdb_get("UART_BFM")

    async def run_phase(self):
        self.bfm.start()
        line = bytearray()
        while True:
            b = await self.bfm.bytes.get()
            if b == ord("\n"):
                text = line.decode(errors="replace").rstrip("\r")
                self.logger.info(f"console: {text}")
                self.ap.write(text)
                line.clear()
            else:
                line.append(b)


class UartAgent(uvm_agent):
    """Passive agent: the console is output-only for now."""

    def build_phase(self):
        self.monitor = UartLineMonitor("monitor", self)
