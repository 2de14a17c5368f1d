"""The tensorsoc SoC: a VexRiscv MCORE with main RAM ("DDR"), UART console,
timer with a 64-bit cycle counter, and the hooks the accelerator cores use to
join it."""


from migen import Signal

from litex.build.io import CRG
from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore

from tensorsoc.spec.config import SoCConfig, DEFAULT
from tensorsoc.spec.memory_map import MEM_MAP   # noqa: F401 (exported to the firmware by LiteX's mem.h / soc.h)


def cpu_has_icache(cpu_variant):
    """Whether the VexRiscv variant fetches through an instruction cache
    (LiteX's ``minimal`` variants fetch every instruction over the bus)."""
    return not cpu_variant.startswith("minimal")


class FetchGap(LiteXModule):
    """Passes a Wishbone master's cycles on to ``bus`` with CYC and STB low
    for one clock after each acknowledge (or error), so that a round-robin
    arbiter that moves on only when its master lets go (LiteX's shared bus)
    serves the others between two back-to-back cycles of ``master``."""

    def __init__(self, master):
        self.bus = bus = wishbone.Interface.like(master)
        bus.bursting = master.bursting
        gap = Signal()
        self.sync += gap.eq(bus.ack | bus.err)
        self.comb += [
            master.connect(bus, omit={"cyc", "stb"}),
            bus.cyc.eq(master.cyc & ~gap),
            bus.stb.eq(master.stb & ~gap),
        ]


class RegisteredResponse(LiteXModule):
    """Passes a Wishbone master's cycles on to ``bus`` and the answers
    (ACK, ERR, DAT_R) back through flip-flops: the master sees the
    acknowledge a clock after the slave gives it, and CYC and STB are low
    towards the slave in that clock, so that the slave, done, starts
    nothing new before the master has seen its answer.  Each access takes
    one clock more.  ``TensorSoC.register_main_ram_answers`` puts one in
    front of main RAM when LiteDRAM's Wishbone bridge, whose acknowledge
    follows CYC and STB in the same clock, sits on the shared bus directly
    (docs/fpga_history.md, "Main RAM answers from flip-flops")."""

    def __init__(self, master):
        self.master = master
        self.bus = bus = wishbone.Interface.like(master)
        bus.bursting = master.bursting
        done = Signal()       # the slave answered in the last clock: the master sees it now
        ack, err = Signal(), Signal()
        dat_r = Signal(len(master.dat_r))
        self.sync += [
            done.eq(bus.cyc & bus.stb & (bus.ack | bus.err)),
            ack.eq(bus.cyc & bus.stb & bus.ack),
            err.eq(bus.cyc & bus.stb & bus.err),
            dat_r.eq(bus.dat_r),
        ]
        self.comb += [
            master.connect(bus, omit={"cyc", "stb", "ack", "err", "dat_r"}),
            bus.cyc.eq(master.cyc & ~done),
            bus.stb.eq(master.stb & ~done),
            master.ack.eq(ack),
            master.err.eq(err),
            master.dat_r.eq(dat_r),
        ]


class TensorSoC(SoCCore):
    """tensorsoc SoC.

    ``config`` (spec.config.SoCConfig) holds every size.  ``rom_init`` is the
    firmware image as a list of 32-bit words (empty while generating the
    headers the firmware is compiled against).
    """

    mem_map = {**SoCCore.mem_map, **MEM_MAP}

    def __init__(self, platform, config: SoCConfig = DEFAULT, rom_init=None, uart_name="serial",
                 cpu_variant="standard", integrated_main_ram=True, crg=None):
        self.tsoc_config = config   # (LiteX uses self.config for its own dict)
        SoCCore.__init__(self, platform, config.sys_clk_freq,
            ident                    = "tensorsoc",
            # No build time in the identifier ROM: with it, every build was a
            # different netlist and nextpnr a different placement, so a board
            # result (or a failure) could not be reproduced, even at one seed.
            ident_version            = False,
            cpu_type                 = "vexriscv",
            cpu_variant              = cpu_variant,
            integrated_rom_size      = config.rom_size,
            integrated_rom_init      = rom_init or [],
            integrated_sram_size     = config.sram_size,
            # Boards with SDRAM/DDR pass integrated_main_ram=False and add
            # LiteDRAM as main_ram (soc/targets/).
            integrated_main_ram_size = config.main_ram_size if integrated_main_ram else 0,
            uart_name                = uart_name,
            uart_baudrate            = config.uart_baudrate,
            timer_uptime             = True,
            # A crossbar lets the TensorEngine's DMA reach main RAM while the
            # CPU polls CSRs or the host port writes a window; the smallest
            # FPGAs take one shared bus (``bus_shared``).
            bus_interconnect         = "shared" if config.bus_shared else "crossbar",
            # Incrementing bursts (cti) reach the memories: LiteX's SRAM then
            # acknowledges a beat per clock (the TensorEngine's DMA and the
            # CPU's cache refills), classic cycles take two.
            bus_bursting             = True,
        )
        if config.bus_shared and not cpu_has_icache(cpu_variant):
            # Without an instruction cache every fetch is a bus cycle, and
            # VexRiscv keeps CYC up from one fetch to the next: LiteX's
            # arbiter (round robin, moving on when the master lets go) would
            # leave the bus to the CPU, and the host port's read DMA came
            # late (RTensor's first byte wrong).  A one-clock gap after each
            # fetch lets the other masters in.
            self.ibus_gap = FetchGap(self.bus.masters["cpu_bus0"])
            self.bus.masters["cpu_bus0"] = self.ibus_gap.bus
        # Simulation: the clock and reset are top-level pins.  Boards pass
        # their own CRG (PLL, reset synchroniser, extra clock domains).
        self.crg = crg if crg is not None else CRG(platform.request(platform.default_clk_name),
                                                   rst=platform.request("sys_rst", loose=True))
        # Host windows at the top of main RAM (the host can write only these).
        self.windows = config.windows(MEM_MAP["main_ram"])
        for name, (base, size) in self.windows.items():
            self.add_constant(f"{name.upper()}_WINDOW_BASE", base)
            self.add_constant(f"{name.upper()}_WINDOW_SIZE", size)

    # Every core joins the SoC through this one method -----------------------
    def add_core(self, name, module, *, slaves=(), masters=(), irq=False, sources=()):
        """Add a core: the only way a core joins the SoC (the PCORE array,
        the TensorEngine and its instruction fetch, the host port, the
        simulation's host master and control).

        ``name``    the submodule's name, which is also its CSR bank's
                    (``module``'s CSRs are collected automatically; LiteX's
                    csr.h then has ``<name>_<csr>_read()/_write()``).
        ``module``  a LiteXModule.
        ``slaves``  (region_name, wishbone.Interface, origin, size, mode)
                    windows the CPU (and the host, where allowed) reaches on
                    the bus, uncached; origin None lets LiteX place it.
        ``masters`` wishbone.Interface bus masters (e.g. a DMA), named
                    ``<name>_master<i>``.
        ``irq``     connect ``module.ev`` to the CPU's interrupt controller.
        ``sources`` Verilog files the module instantiates (platform sources).
        Returns ``module``.
        """
        self.add_module(name=name, module=module)
        for region_name, bus, origin, size, mode in slaves:
            self.bus.add_slave(region_name, bus, SoCRegion(origin=origin, size=size, mode=mode, cached=False))
        for i, bus in enumerate(masters):
            self.bus.add_master(name=f"{name}_master{i}", master=bus)
        if irq:
            self.irq.add(name, use_loc_if_exists=True)
        for src in sources:
            self.platform.add_source(str(src))
        return module

    def add_host_port(self, pads, sensor_pads, msb_first=None):
        """The SPI/QPI host port (cores/host_spi/) with its DMA into the windows.
        The bit order is the configuration's unless ``msb_first`` is given."""
        msb_first = bool(self.tsoc_config.host_msb_first) if msb_first is None else msb_first
        from tensorsoc.cores.host_spi.core import host_port
        from tensorsoc.spec.host_protocol import Window
        windows = {Window.MODEL: self.windows["model"], Window.TENSOR: self.windows["tensor"],
                   Window.SERVER: self.windows["server"]}
        port = host_port(pads, sensor_pads, windows, msb_first=msb_first,
                         bus_data_width=self.bus.data_width, bus_adr_width=self.bus.address_width,
                         sensor=bool(self.tsoc_config.host_sensor),
                         readback=bool(self.tsoc_config.csr_readback),
                         write_pipe=bool(self.tsoc_config.host_write_pipe))
        self.add_core("host_port", port, masters=[port.wb_write, port.wb_read]
                      + ([port.sensor.bus] if port.sensor is not None else []))
        self.add_constant("HOST_PORT_MSB_FIRST", int(msb_first))

    def add_accelerator(self, build_dir=None, fetch=True):
        """The TensorEngine (CSRs ``tensor_engine``, a DMA master over main
        RAM) and the PCORE array it drives (CSRs ``pcore``, its instruction
        memory as Wishbone slave ``pcore``), sized by the configuration; with ``fetch``,
        its instruction fetch (CSRs ``tensor_engine_fetch``, a bus master that
        reads a program from main RAM into the engine's queue or a kernel into
        the PCORE instruction memory).

        With ``accel_clk_freq`` 0 they run in ``sys`` on the SoC bus and CSR
        bank.  Otherwise they run in the clock domain ``accel`` (the CRG
        provides it) behind clock-domain crossings (soc/accel_domain.py);
        their CSRs and bus regions keep their names."""
        from tensorsoc.cores.tensor_engine.core import add_tensor_engine
        from tensorsoc.cores.tensor_engine.fetch import add_tensor_engine_fetch
        if not self.tsoc_config.accel_clk_freq:
            self.tensor_engine, self.pcore = add_tensor_engine(self, self.tsoc_config, build_dir=build_dir)
            if fetch:
                self.tensor_engine_fetch = add_tensor_engine_fetch(self, self.tensor_engine, self.pcore,
                                                                   readback=bool(self.tsoc_config.csr_readback))
            return
        from tensorsoc.soc.accel_domain import AcceleratorCores, AcceleratorDomain
        cores = AcceleratorCores(self)
        engine, array = add_tensor_engine(cores, self.tsoc_config, build_dir=build_dir)
        if fetch:
            add_tensor_engine_fetch(cores, engine, array, readback=bool(self.tsoc_config.csr_readback))
        AcceleratorDomain(self, cores).add_to(self, "accel")

    def add_sim_sdram(self, sdram):
        """Main RAM as SDRAM in simulation: LiteDRAM's controller and L2 cache
        in front of its SDRAM model (``litedram.phy.model.SDRAMPHYModel``,
        what LiteX's litex_sim ``--with-sdram`` uses), with the timings of
        ``sdram`` (soc.sim_sdram.SimSDRAM) at the SoC clock.  The SoC must be
        built with ``integrated_main_ram=False``.  No init sequence is needed:
        the model has no mode registers and LiteDRAM starts in hardware
        control."""
        from litedram.phy.model import SDRAMPHYModel
        cfg = self.tsoc_config
        module = sdram.module(cfg.sys_clk_freq)
        if cfg.main_ram_size > sdram.size:
            from tensorsoc.spec.config import ConfigError
            raise ConfigError(f"main_ram_size={cfg.main_ram_size}: the simulated {sdram.describe()} holds "
                              f"{sdram.size} bytes; main RAM must fit in it")
        self.sdrphy = SDRAMPHYModel(module=module, data_width=sdram.data_width, clk_freq=cfg.sys_clk_freq)
        self.add_sdram("sdram", phy=self.sdrphy, module=module, size=cfg.main_ram_size,
                       l2_cache_size=sdram.l2_cache_size,
                       l2_cache_min_data_width=sdram.l2_cache_min_data_width)
        self.register_main_ram_answers(sdram.l2_cache_size)

    def register_main_ram_answers(self, l2_cache_size):
        """On the shared bus (``bus_shared``) with no L2 cache, main RAM's
        answers come from flip-flops (RegisteredResponse).  Without it, the
        arbiter's granted request, LiteDRAM's Wishbone bridge (its
        acknowledge follows CYC and STB in the same clock) and the
        acknowledge back to every master were one path: from the host
        port's write queue (a block RAM's output) into the VexRiscv's
        write-back, 26.83 ns, the Colorlight i5 accelerator's sys critical
        path, and, with the CPU's side cut, into its fetch and the
        TensorEngine's instruction fetch just as long.  Call after
        ``add_sdram``, before the bus is finalised."""
        if not self.tsoc_config.bus_shared or l2_cache_size:
            return
        slave = self.bus.slaves["main_ram"]
        front = wishbone.Interface.like(slave)
        front.bursting = slave.bursting
        self.main_ram_reg = RegisteredResponse(front)
        self.comb += self.main_ram_reg.bus.connect(slave)
        self.bus.slaves["main_ram"] = self.main_ram_reg.master

    def add_sim_control(self):
        from tensorsoc.cores.sim_control import SimControl
        self.add_core("sim_ctrl", SimControl(self.platform.request("sim_ctrl")))
