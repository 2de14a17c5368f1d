import os
import signal
import subprocess
import sys
import time

import pytest

from tensorsoc.soc.builder import ROOT

# The long tier (@pytest.mark.long, `make regress`): TSOC_LONG=1.
LONG = os.environ.get("TSOC_LONG") == "1"

# The Colorlight i5 bitstream of tests/test_fpga_build.py, built in the
# background while the rest of the session runs.
FPGA_TEST = "tests/test_fpga_build.py::test_colorlight_i5_bitstream"
FPGA_BUILD = ROOT / "build" / "test" / "fpga" / "colorlight_i5"
FPGA_LOG = FPGA_BUILD.parent / "colorlight_i5.out"
FPGA_STATUS = FPGA_BUILD.parent / "colorlight_i5.status"     # the exit status, written when it ends
FPGA_PID = FPGA_BUILD.parent / "colorlight_i5.pid"
# Its router: in `make test` router1, in the long tier (`make regress`) the
# target's own, router2.  Measured alone on 2026-12-02 (seed 17, the target's
# static placer): router1 routed this 24%-full netlist in 157 s of nextpnr
# (sys 60.48 MHz), router2 in 313 s (54.09 MHz; 566 iterations); router2's
# own output is parsed in tests/test_fpga_targets.py on canned logs.
FPGA_ROUTER = None if LONG else "router1"
# The default-configuration SoC of the session (soc_build), whose cocotb
# simulator the regression tests run too (one build, not two).
SOC_BUILD_DIR = ROOT / "build" / "test" / "soc"

# Runs the build with its output in the log, then writes its exit status.
_WRAP = ("import os, subprocess, sys\n"
         "log, status, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]\n"
         "with open(log, 'w') as out:\n"
         "    rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)\n"
         "open(status + '.tmp', 'w').write(str(rc))\n"
         "os.replace(status + '.tmp', status)\n")


class FpgaBuild:
    """The background `tsoc bitstream --board colorlight_i5 --set
    accelerator=0`, in a process
    group of its own (stopping it stops nextpnr too).  Whoever started it or
    not (an xdist worker waits for the build its controller started), the
    exit status comes from FPGA_STATUS."""

    def __init__(self, proc=None):
        self.proc = proc
        self.log = FPGA_LOG

    @classmethod
    def start(cls):
        FPGA_BUILD.mkdir(parents=True, exist_ok=True)
        FPGA_STATUS.unlink(missing_ok=True)
        # MCORE only: the target's accelerator takes about 9 minutes of
        # nextpnr; without it the same board, CPU, bus and nextpnr options
        # build in minutes.  FPGA_ROUTER: see its comment.
        cmd = [sys.executable, "-m", "tensorsoc.cli", "bitstream", "--board", "colorlight_i5",
               "--set", "accelerator=0", "--build-dir", str(FPGA_BUILD), *(["--router", FPGA_ROUTER] if FPGA_ROUTER else [])]
        proc = subprocess.Popen([sys.executable, "-c", _WRAP, str(FPGA_LOG), str(FPGA_STATUS), *cmd], cwd=ROOT,
                                start_new_session=True)
        FPGA_PID.write_text(str(proc.pid))
        return cls(proc)

    def running(self):
        if self.proc is not None:
            return self.proc.poll() is None
        try:
            os.kill(int(FPGA_PID.read_text()), 0)
        except (OSError, ValueError):
            return False
        return True

    def wait(self, timeout):
        """The build's exit status (after at most ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while not FPGA_STATUS.exists():
            if not self.running() and not FPGA_STATUS.exists():
                raise RuntimeError(f"the background bitstream build (pid in {FPGA_PID}) ended without an exit "
                                   f"status; its output: {FPGA_LOG}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the background bitstream build did not end within {timeout} s ({FPGA_LOG})")
            time.sleep(2)
        return int(FPGA_STATUS.read_text())

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait()


def _xdist_worker(config):
    return hasattr(config, "workerinput")


def fpga_build_process(config):
    """The background i5 build: started on first use, or, in an xdist
    worker, the one the controller started when the workers had collected."""
    if getattr(config, "_tsoc_fpga", None) is None:
        config._tsoc_fpga = FpgaBuild() if _xdist_worker(config) else FpgaBuild.start()
    return config._tsoc_fpga


SKIP_LONG = pytest.mark.skip(reason="long tier: `make regress` runs it (TSOC_LONG=1)")

# `make test` runs on two cores with pytest-xdist (--dist loadfile, with
# the scheduler below): each test file is one unit of work, kept on one
# worker, except these families, which share build folders whose runs write
# the same files (the TensorEngine top's run folder) or outputs
# (build/regress) and go to one worker together.  The files holding the
# longest simulations go first (measured: the TensorEngine family about 500
# s, the host port's SoC tests about 480 s of one core), the quick Python
# units fill the gaps at the end.
FAMILIES = {"test_te_engine.py": "te", "test_te_fetch.py": "te", "test_te_layers.py": "te",
            "test_te_trace.py": "te", "test_model_report.py": "te",
            "test_regress_sim.py": "regress", "test_regress_dask.py": "regress",
            "test_pcore_array.py": "pcore", "test_pcore_lane.py": "pcore"}
FIRST = ["te", "test_host_soc.py", "regress", "test_soc_sim.py", "test_host_datasheet.py", "test_wishbone_cdc.py",
         "test_fpga_targets.py", "test_board_soc.py", "pcore", "test_sim_gen_cache.py"]


def _group_of(path):
    """The unit of work of a test file (``path``: its node id's file part)."""
    name = path.rsplit("/", 1)[-1]
    return FAMILIES.get(name, name)


def _group(item):
    return _group_of(item.nodeid.split("::")[0])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's --dist loadfile with the families above as single units (its
    loadgroup, which would read xdist_group marks, renames node ids in a way
    pytest 9 ignores: every test went out on its own)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FamilyScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return _group_of(nodeid.split("::")[0])
    return FamilyScheduling(config, log)


@pytest.hookimpl(trylast=True)      # after -m / -k have deselected
def pytest_collection_modifyitems(session, config, items):
    """The long tier (@pytest.mark.long) is skipped unless TSOC_LONG=1.  The
    groups are ordered longest first, the i5 bitstream test goes last, and,
    without xdist, its build starts now (yosys and nextpnr are
    single-threaded: the second core builds while the simulations run).
    With xdist the controller starts it once the workers have collected."""
    if not LONG:
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(SKIP_LONG)
    rank = {g: i for i, g in enumerate(FIRST)}
    fpga = [i for i in items if i.nodeid == FPGA_TEST]
    rest = [i for i in items if i.nodeid != FPGA_TEST]
    items[:] = sorted(rest, key=lambda i: rank.get(_group(i), len(rank))) + fpga
    if fpga and not config.option.collectonly and not _xdist_worker(config):
        fpga_build_process(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist's controller: the workers collected the i5 bitstream test, so
    its build starts (once, on the controller; the worker that gets the
    test waits for it)."""
    config = node.config
    if (getattr(config, "_tsoc_fpga", None) is None and not config.option.collectonly
            and FPGA_TEST in ids):
        config._tsoc_fpga = FpgaBuild.start()


def pytest_unconfigure(config):
    """A session that ends early does not leave the build running."""
    started = getattr(config, "_tsoc_fpga", None)
    if started is not None:
        started.stop()


@pytest.fixture(scope="session")
def soc_build():
    """The default-configuration simulation SoC, generated once per session
    under build/test/soc (headers, firmware, Verilog)."""
    from tensorsoc.soc.builder import SimBuild
    from tensorsoc.verification.soc.runner import build_lock
    build = SimBuild(build_dir=SOC_BUILD_DIR, log=lambda *_: None)
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
