"""The simulation platform: plain top-level ports that the Verilator harness
(soc/sim/main.cpp) and the cocotb testbench drive directly."""

from litex.build.generic_platform import GenericPlatform, Pins, Subsignal


_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    # The accelerator's clock (SoCConfig.accel_clk_freq nonzero only).
    ("accel_clk", 0, Pins(1)),
    # The clock the SoC runs on (out), the sys_clk pin or, with en high, the
    # generator inside the model (cores/sim_control.py, SimClock).
    ("sim_clock", 0,
        Subsignal("en",  Pins(1)),
        Subsignal("clk", Pins(1)),
    ),
    # UART console as a byte stream (LiteX RS232PHYModel): one character per
    # handshake, so the console costs no simulated baud-rate time.
    ("serial", 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    ),
    # Firmware-driven end of simulation (cores/sim_control.py).
    ("sim_ctrl", 0,
        Subsignal("finish",     Pins(1)),
        Subsignal("exit_code",  Pins(8)),
        Subsignal("boot_flags", Pins(8)),
    ),
    # Sensor byte stream for Acquire.
    ("sensor", 0,
        Subsignal("valid", Pins(1)),
        Subsignal("ready", Pins(1)),
        Subsignal("data",  Pins(8)),
    ),
]


def _host_io():
    """SPI/QPI host port (cores/host_spi/): the testbench is the host, on the
    datasheet's pins (cores/host_spi/pins.py: CS_N, CLK, MOSI, MISO, Q0..Q3),
    and the fast host path's master (cores/host_spi/sim_master.py)."""
    from tensorsoc.cores.host_spi.pins import sim_io
    from tensorsoc.cores.host_spi.sim_master import fast_io
    return [sim_io(), fast_io()]


class SimPlatform(GenericPlatform):
    """Emits Verilog only: the build is done by soc/builder.py."""

    default_clk_name = "sys_clk"

    def __init__(self, extra_io=()):
        GenericPlatform.__init__(self, "sim", list(_io) + _host_io() + list(extra_io), name="tensorsoc_sim")

    def build(self, *args, **kwargs):
        raise NotImplementedError("use soc.builder to write the simulation sources")
