"""Sensor agent: drives frames into the SoC's sensor port for Acquire.

The BFM wraps verification/soc/host_env.Sensor (valid/ready/data pins); the
monitor publishes each frame the port took, so the scoreboard knows what the
device captured."""

from cocotb.queue import Queue
from cocotb.utils import get_sim_time
from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_driver, uvm_monitor, uvm_sequencer

from tensorsoc.verification.uvm.items import SensorFrame


class SensorBfm:
    def __init__(self, sensor):
        self.sensor = sensor
        self.taken = Queue()

    async def send(self, data):
        await self.sensor.send(data)
        self.taken.put_nowait(SensorFrame(bytes(data), get_sim_time(unit="ps")))


class SensorDriver(uvm_driver):
    def build_phase(self):
        self.bfm = ConfigDB().get(self, "", "SENSOR_BFM")

    async def run_phase(self):
        while True:
            item = await self.seq_item_port.get_next_item()
            await self.bfm.send(item.data)
            self.seq_item_port.item_done()


class SensorMonitor(uvm_monitor):
    def build_phase(self):
        self.ap = uvm_analysis_port("ap", self)
        self.bfm = ConfigDB().get(self, "", "SENSOR_BFM")

    async def run_phase(self):
        while True:
            self.ap.write(await self.bfm.taken.get())


class SensorAgent(uvm_agent):
    def build_phase(self):
        self.seqr = uvm_sequencer("seqr", self)
        ConfigDB().set(None, "*", "SENSOR_SEQR", self.seqr)
        self.driver = SensorDriver("driver", self)
        self.monitor = SensorMonitor("monitor", self)

    def connect_phase(self):
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)
