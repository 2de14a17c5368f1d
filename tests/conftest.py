import os
import subprocess
import sys

import pytest

from tensorsoc.soc.builder import ROOT

# The Colorlight i5 bitstream of tests/test_fpga_build.py, built in the
# background while the rest of the session runs.
FPGA_TEST = "tests/test_fpga_build.py::test_colorlight_i5_bitstream"
FPGA_BUILD = ROOT / "build" / "test" / "fpga" / "colorlight_i5"


def fpga_build_process(config):
    """The background `tsoc bitstream` of the i5 (started on first use):
    (Popen, log file)."""
    if getattr(config, "_tsoc_fpga", None) is None:
        FPGA_BUILD.mkdir(parents=True, exist_ok=True)
        log = FPGA_BUILD.parent / "colorlight_i5.out"
        with open(log, "w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "tensorsoc.cli", "bitstream", "--board", "colorlight_i5",
                                     "--build-dir", str(FPGA_BUILD)], cwd=ROOT, stdout=out,
                                    stderr=subprocess.STDOUT)
        config._tsoc_fpga = (proc, log)
    return config._tsoc_fpga


LONG = os.environ.get("TSOC_LONG") == "1"
SKIP_LONG = pytest.mark.skip(reason="long tier: `make regress` runs it (TSOC_LONG=1)")


@pytest.hookimpl(trylast=True)      # after -m / -k have deselected
def pytest_collection_modifyitems(session, config, items):
    """The long tier (@pytest.mark.long) is skipped unless TSOC_LONG=1.  The
    i5 bitstream test goes last, its build starts now (yosys and nextpnr are
    single-threaded: the second core builds while the simulations run)."""
    if not LONG:
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(SKIP_LONG)
    fpga = [i for i in items if i.nodeid == FPGA_TEST]
    if fpga and not config.option.collectonly:
        items[:] = [i for i in items if i.nodeid != FPGA_TEST] + fpga
        fpga_build_process(config)


def pytest_unconfigure(config):
    """A session that ends early does not leave the build running."""
    started = getattr(config, "_tsoc_fpga", None)
    if started is not None and started[0].poll() is None:
        started[0].kill()


@pytest.fixture(scope="session")
def soc_build():
    """The default-configuration simulation SoC, generated once per session
    under build/test/soc (headers, firmware, Verilog)."""
    from tensorsoc.soc.builder import SimBuild
    from tensorsoc.verification.soc.runner import build_lock
    build = SimBuild(build_dir=ROOT / "build" / "test" / "soc", log=lambda *_: None)
    with build_lock(build.build_dir):
        build.generate()
    return build


@pytest.fixture(scope="session")
def soc_simulator(soc_build):
    """soc_build with its Verilator harness binary built."""
    from tensorsoc.verification.soc.runner import build_lock
    with build_lock(soc_build.build_dir):
        soc_build.build_simulator()
    return soc_build
