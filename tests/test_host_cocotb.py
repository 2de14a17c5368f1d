"""CocotbTransport's bit-level encoding and timing against an independent
Verilog SPI/QPI slave (verification/host/host_spi_loopback.v) in Verilator."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "verification" / "host"
TESTS = ["bit_order", "echo", "clock_counts", "timings", "contention"]


def test_cocotb_transport_loopback():
    from cocotb_tools.runner import get_runner
    from tensorsoc.soc.verilator import setup_env
    setup_env()
    build_dir = REPO / "build" / "host_loopback"
    (build_dir / "results.xml").unlink(missing_ok=True)
    runner = get_runner("verilator")
    runner.build(sources=[HERE / "host_spi_loopback.v"], hdl_toplevel="host_spi_loopback",
                 build_dir=build_dir, build_args=["-Wno-fatal", "-Wno-lint", "-Wno-style", "-j", "1"],
                 timescale=("1ns", "1ps"), log_file=build_dir / "build.log")
    results = build_dir / "results.xml"
    try:
        runner.test(test_module="tensorsoc.verification.host.loopback_tests", hdl_toplevel="host_spi_loopback",
                    build_dir=build_dir, results_xml=str(results), timescale=("1ns", "1ps"),
                    extra_env={"PYTHONPATH": str(REPO)}, log_file=build_dir / "test.log")
    except SystemExit:      # the runner exits on failing tests; the results file says which
        pass
    cases = ET.parse(results).getroot().findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(TESTS)
    failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failed, f"cocotb loopback tests failed: {failed}; see {build_dir / 'test.log'}"
