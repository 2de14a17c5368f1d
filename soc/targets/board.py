"""``BoardTarget``: what a tensorsoc FPGA board build needs to know.

A target names the platform (soc/platforms/), the SoC configuration chosen for
the board's FPGA, the clocks and the SDRAM; ``make_soc`` elaborates the
TensorSoC for it.  Each board module in this package defines one ``TARGET``.
"""

from dataclasses import dataclass, field
from typing import Callable

from tensorsoc.spec.config import SoCConfig
from tensorsoc.soc.builder import quiet_litex


# The host protocol's fastest SCLK (inference-engine datasheet: 20 ns cycle).
HOST_SCLK_MAX_FREQ = 50_000_000
# The lowest SoC:SCLK clock ratio at which the host port passes its checks
# and an 8 KiB WTensor, per link mode, with integrated main RAM (one access
# per clock): `tsoc bench host` (docs/host_port.md, "Clock ratio").  A board
# whose main RAM is slower has its own (BoardTarget.host_sys_per_sclk).
HOST_SYS_PER_SCLK = {"SPI": 0.5, "QPI": 2 / 3}


def host_sclk_max(sys_clk_freq, mode="QPI", sys_per_sclk=None):
    """The fastest SCLK a host may use in ``mode`` ("SPI" or "QPI") with a
    SoC clocked at ``sys_clk_freq``; ``sys_per_sclk`` the board's ratios
    (default: integrated main RAM's)."""
    ratio = (sys_per_sclk or HOST_SYS_PER_SCLK)[mode]
    return min(HOST_SCLK_MAX_FREQ, int(sys_clk_freq / ratio + 0.5))


class TargetError(ValueError):
    pass


@dataclass(frozen=True)
class BoardTarget:
    name: str                       # `tsoc bitstream --board NAME`
    title: str                      # one line for `--list` and docs
    make_platform: Callable         # () -> LatticePlatform
    config: SoCConfig               # NP/NT/VW, memory sizes, sys clock, UART
    sdram_module: type              # litedram.modules class of the fitted SDRAM
    clkin_freq: int = 25_000_000    # board oscillator
    l2_cache_size: int = 8192       # LiteDRAM L2 cache (bytes, block RAM)
    # LiteX defaults the L2 line to 128 bits: 16 byte-lane memories, one
    # DP16KD each whatever the cache size.  32 bits: 4 block RAMs for 8 KiB.
    l2_cache_min_data_width: int = 32
    # The lowest SoC:SCLK ratio per link mode with this board's main RAM:
    # `tsoc bench host --sdram NAME --set sys_clk_freq=...` (the SDRAM's
    # timings at the board's clock; docs/host_port.md, "Clock ratio").
    host_sys_per_sclk: dict = field(default_factory=lambda: dict(HOST_SYS_PER_SCLK))
    cpu_variant: str = "standard"
    # nextpnr's placement seed for `tsoc bitstream` without --seed (a
    # target whose seed is not 1 says why).
    seed: int = 1
    # soc.bitstream.netlist_digest of the build ``seed`` was chosen for
    # ("" : none recorded).  Any change to the gateware, the configuration
    # or the tool options re-rolls the placement at the same seed:
    # `tsoc bitstream` says so, and tests/test_target_netlists.py fails
    # until the target's build is run again and seed and digest recorded.
    netlist_sha256: str = ""
    # Seeds `tsoc bitstream` tries in all, from ``seed`` up, when router2
    # diverges (--seed-tries overrides): each new try places and routes the
    # same netlist again.
    seed_tries: int = 3
    # nextpnr's router (`tsoc bitstream --router` overrides): router2 routes
    # the congested 85F builds of docs/fpga.md where router1 took hours.
    router: str = "router2"
    # nextpnr options of the target's builds, before any --nextpnr-arg (an
    # option given there replaces the target's, value and all): what the
    # target's placement and clocks were measured with (docs/fpga.md).
    nextpnr_args: tuple = ()
    # yosys abc9's LUT-mapping delay target in ps (`tsoc bitstream
    # --lut-delay-target` overrides), or 0: synth_ecp5's own, fastest mapping.
    lut_delay_target: int = 0
    # {domain: MHz}: what nextpnr is told a clock domain ("sys" or "accel")
    # runs at, below its clock (`tsoc bitstream --pnr-constraint`
    # overrides).  The placer and router spend less on its paths; the build
    # checks the Fmax they reach against the clock itself (docs/fpga.md, "A
    # clock faster than its constraint").
    pnr_constraint_mhz: dict = field(default_factory=dict)
    notes: tuple = field(default=())  # facts the docs repeat (pins, alternatives)

    def host_sclk_max(self, mode):
        """The fastest SCLK a host may use with this board in ``mode``."""
        return host_sclk_max(self.config.sys_clk_freq, mode, self.host_sys_per_sclk)

    def make_soc(self, config: SoCConfig = None, rom_init=None, build_dir=None):
        """The board's TensorSoC: VexRiscv, ROM firmware, UART, SDRAM main RAM
        through LiteDRAM (initialised in gateware, see sdram_init.py), the
        SPI/QPI host port on the board's "host_spi" pins, the PLL clock
        domains of crg.py and, when the configuration says ``accelerator=1``,
        the TensorEngine and the PCORE array (their MyHDL lane Verilog is
        written to ``build_dir``)."""
        from migen import If
        from litedram.phy import GENSDRPHY
        from tensorsoc.soc.targets.crg import ECP5CRG
        from tensorsoc.soc.targets.host_spi_pins import HostSPIPins
        from tensorsoc.soc.targets.sdram_init import SDRAMInit
        from tensorsoc.soc.tensorsoc import TensorSoC

        quiet_litex()
        config = config or self.config
        platform = self.make_platform()
        crg = ECP5CRG(platform, self.clkin_freq, config.sys_clk_freq, config.accel_clk_freq or None)
        soc = TensorSoC(platform, config, rom_init=rom_init, uart_name="serial",
                        cpu_variant=self.cpu_variant, integrated_main_ram=False, crg=crg)

        soc.sdrphy = GENSDRPHY(platform.request("sdram"), config.sys_clk_freq)
        module = self.sdram_module(config.sys_clk_freq, "1:1")
        size = module.nbanks * module.nrows * module.ncols * soc.sdrphy.settings.databits // 8
        if size != config.main_ram_size:
            raise TargetError(f"board {self.name}: main_ram_size={config.main_ram_size} but the "
                              f"{self.sdram_module.__name__} SDRAM holds {size} bytes; main RAM is the SDRAM")
        soc.add_sdram("sdram", phy=soc.sdrphy, module=module, l2_cache_size=self.l2_cache_size,
                     l2_cache_min_data_width=self.l2_cache_min_data_width)
        soc.register_main_ram_answers(self.l2_cache_size)
        soc.sdram_init = SDRAMInit(soc.sdram.dfii, soc.sdrphy.settings, module.timing_settings,
                                   config.sys_clk_freq)
        # Hold the CPU in reset until the SDRAM is ready (this assignment
        # follows LiteX's own to cpu.reset, so it wins while init runs).
        soc.comb += If(~soc.sdram_init.done, soc.cpu.reset.eq(1))

        # The host port; SCLK runs up to the datasheet's 50 MHz.
        host_spi = platform.request("host_spi")
        soc.host_pins = HostSPIPins(host_spi)
        soc.add_host_port(soc.host_pins.pads, soc.host_pins.sensor_pads)
        platform.add_period_constraint(host_spi.clk, 1e9 / HOST_SCLK_MAX_FREQ)

        if config.accelerator:
            # In ``sys`` (accel_clk_freq 0) on the SoC bus directly, or in the
            # CRG's ``accel`` domain behind crossings (soc/accel_domain.py).
            soc.add_accelerator(build_dir=build_dir)
        return soc
