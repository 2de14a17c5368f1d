"""Builds the simulation SoC's Verilog with Verilator through cocotb's Python
runner and runs cocotb/pyuvm test modules on it."""

import contextlib
import fcntl
import json
import logging
import os
from pathlib import Path

from tensorsoc.soc.builder import SimBuild
from tensorsoc.soc.verilator import OPT_CFLAGS, SOC_FLAGS, setup_env
from tensorsoc.soc import gen_cache


@contextlib.contextmanager
def build_lock(build_dir):
    """Serialises builds of one folder across processes (two pytest sessions,
    parallel regression workers): Verilator's make is not safe to run twice
    in the same folder."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _fast_verilator_runner():
    """cocotb's Verilator runner without ``--public-flat-rw``: that flag makes
    every signal of the SoC visible to VPI and makes the simulation several times
    slower.
    The testbench needs the top-level ports (always visible) and the few
    signals listed in PUBLIC_SIGNALS (a Verilator control file)."""
    from cocotb_tools.runner import Verilator

    class FastVerilator(Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            return cmds
    runner = FastVerilator()
    runner.log.setLevel(logging.WARNING)   # not every command it runs
    return runner


# Internal signals the tests read: main RAM (window-bound checks).
PUBLIC_SIGNALS = [("tensorsoc", "main_ram")]


def _top_ports():
    """Names of the simulation SoC's top-level ports (soc/platforms/sim.py)."""
    from tensorsoc.soc.platforms.sim import _io, _host_io
    names = []
    for name, _, *subs in _io + _host_io():
        if subs and hasattr(subs[0], "name"):
            names += [f"{name}_{sub.name}" for sub in subs]
        else:
            names.append(name)
    return names


def _control_file(build: SimBuild):
    path = build.build_dir / "public.vlt"
    lines = ["`verilator_config"]
    lines += [f'public_flat_rw -module "tensorsoc" -var "{p}"' for p in _top_ports()]
    # Main RAM is an array only when integrated (not with --sdram: LiteDRAM's model).
    signals = PUBLIC_SIGNALS if getattr(build, "sdram", None) is None else []
    lines += [f'public_flat_rd -module "{m}" -var "{v}"' for m, v in signals]
    path.write_text("\n".join(lines) + "\n")
    return path


# In the simulator's folder: the generation key it was built from.
SIM_STAMP = "tsoc-simulator.json"


def cocotb_build(build: SimBuild, waves=False, log=None):
    """Generates the SoC (headers, firmware, Verilog) and verilates it for
    cocotb; both skipped when the folder holds them for the same inputs
    (soc/gen_cache.py: configuration, sources, tool versions; this module
    is one of the sources, so a change of the Verilator options rebuilds)."""
    log = log or build.log
    setup_env()
    with build_lock(build.build_dir):
        build.generate()
        stamp = sim_dir(build, waves) / SIM_STAMP
        built = gen_cache.read_stamp(stamp)
        if built and built.get("key") == build.inputs.key and (sim_dir(build, waves) / "tensorsoc").is_file():
            log(f"[sim] simulator up to date (inputs {build.inputs.short}): not rebuilt")
            return cocotb_runner(build, waves)
        gen_cache.clear_stamp(stamp)
        runner = _fast_verilator_runner()
        _build(runner, build, waves)
        gen_cache.write_stamp(stamp, {"key": build.inputs.key, "waves": waves})
    return runner


def cocotb_runner(build: SimBuild, waves=False):
    """A runner for the simulator :func:`cocotb_build` already made in
    ``build``'s folder (another process built it, e.g. the regression's
    scheduler): nothing is rebuilt, :func:`cocotb_test` runs it."""
    if not sim_dir(build, waves).is_dir():
        raise FileNotFoundError(f"no cocotb simulator in {sim_dir(build, waves)}: run cocotb_build first")
    setup_env()
    runner = _fast_verilator_runner()
    # test() derives the top level's language from the sources.
    runner.sources, runner.vhdl_sources, runner.verilog_sources = [], [], build.verilog_sources()
    return runner


def sim_dir(build: SimBuild, waves=False):
    """Folder of the cocotb simulator (a waveform-capable one apart: tracing
    slows every run)."""
    return build.build_dir / ("cocotb-waves" if waves else "cocotb")


def _build(runner, build, waves):
    runner.build(
        sources=[_control_file(build)] + build.verilog_sources(),
        hdl_toplevel="tensorsoc",
        build_dir=sim_dir(build, waves),
        # --timing: the SoC's own clock generator (cores/sim_clock.v), so
        # that no clock edge needs a step of cocotb.
        build_args=["--timing", "+define+TSOC_SIM_CLOCK_TIMING", *SOC_FLAGS,
                    "-CFLAGS", OPT_CFLAGS,
                    "-j", str(os.cpu_count() or 1)] + (["--trace-fst", "--trace-structs"] if waves else []),
        waves=waves,
        log_file=sim_dir(build, waves) / "build.log",
    )


def cocotb_test(runner, build: SimBuild, test_module, results_xml, waves=False, extra_env=None, testcase=None,
                trace_file=None):
    """Runs ``test_module`` in the gateware folder (where the ROM's .init file
    is); returns the path of the JUnit XML results."""
    env = {"TSOC_CONFIG_JSON": json.dumps(build.config.as_dict()),
           "TSOC_BUILD_DIR": str(build.build_dir),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           # LiteX's regular expressions without raw strings warn on every
           # import inside the simulator (cocotb logs each warning).
           "PYTHONWARNINGS": "ignore:invalid escape sequence:DeprecationWarning"}
    env.update(extra_env or {})
    return runner.test(
        test_module=test_module,
        hdl_toplevel="tensorsoc",
        build_dir=sim_dir(build, waves),
        test_dir=build.gateware_dir,
        test_args=["--trace-file", str(Path(trace_file).resolve())] if (waves and trace_file) else [],
        results_xml=str(Path(results_xml).resolve()),
        extra_env=env,
        waves=waves,
        testcase=testcase,
    )
