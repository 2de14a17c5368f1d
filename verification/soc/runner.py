"""Builds the simulation SoC's Verilog with Verilator through cocotb's Python
runner and runs cocotb/pyuvm test modules on it."""

import json
import os
from pathlib import Path

from soc.builder import SimBuild
from verification.verilator import setup_env


def cocotb_build(build: SimBuild, waves=False):
    """Generates the SoC (headers, firmware, Verilog) and verilates it for cocotb."""
    from cocotb_tools.runner import get_runner
    setup_env()
    build.generate()
    runner = get_runner("verilator")
    runner.build(
        sources=build.verilog_sources(),
        hdl_toplevel="tensorsoc",
        build_dir=build.build_dir / "cocotb",
        build_args=["-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "fast", "--x-initial", "fast",
                    "-j", str(os.cpu_count() or 1)] + (["--trace-fst", "--trace-structs"] if waves else []),
        waves=waves,
        log_file=build.build_dir / "cocotb" / "build.log",
    )
    return runner


def cocotb_test(runner, build: SimBuild, test_module, results_xml, waves=False, extra_env=None):
    """Runs ``test_module`` in the gateware folder (where the ROM's .init file
    is); returns the path of the JUnit XML results."""
    env = {"TSOC_CONFIG_JSON": json.dumps(build.config.as_dict()),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.update(extra_env or {})
    return runner.test(
        test_module=test_module,
        hdl_toplevel="tensorsoc",
        build_dir=build.build_dir / "cocotb",
        test_dir=build.gateware_dir,
        results_xml=str(Path(results_xml).resolve()),
        extra_env=env,
        waves=waves,
    )
