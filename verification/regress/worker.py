"""Runs one regression test in its own process (python -m
verification.regress.worker SPEC_JSON): the simulator prints to this
process's stdout, which the scheduler sends to the test's log file.

The test runs in a session of its own (testrun.simulate starts it so).  If
the process that started it dies (a Dask worker killed in the middle of a
test), Linux sends this process SIGTERM and it ends its whole session, the
simulator included: a retried test never races a leftover of itself."""

import ctypes
import json
import os
import signal
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from tensorsoc.soc.builder import SimBuild
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.soc.runner import cocotb_runner, cocotb_test

PR_SET_PDEATHSIG = 1


def end_session_with_parent():
    """Ends this session (this process and the simulator it starts) when the parent dies."""
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(os.getpgid(0), signal.SIGKILL))
    if sys.platform.startswith("linux"):
        parent = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:        # it died before prctl
            os.killpg(os.getpgid(0), signal.SIGKILL)


def run(spec):
    import cocotb
    build = SimBuild(SoCConfig(**spec["config"]), spec["build_dir"], log=lambda *_: None)
    out = Path(spec["out"])
    env = {"TSOC_SEED": str(spec["seed"]), "TSOC_HOST_QPI": "1" if spec["mode"].startswith("qpi") else "0",
           "TSOC_UVM_OUT": str(out), "TSOC_HOST_PATH": spec["host_path"],
           # The simulator finds cocotb's VPI library through its RUNPATH, the
           # building machine's venv: a shipped simulator needs this one's.
           "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [str(Path(cocotb.__file__).parent / "libs"),
                                                            os.environ.get("LD_LIBRARY_PATH")]))}
    if spec.get("fault"):
        env["TSOC_UVM_FAULT"] = spec["fault"]
    results = out / "results.xml"
    runner = cocotb_runner(build, waves=spec.get("waves", False))     # the scheduler built it once
    cocotb_test(runner, build, "tensorsoc.verification.uvm.tests", results, waves=spec.get("waves", False),
                extra_env=env, testcase=[spec["test"]], trace_file=out / "waves.fst" if spec.get("waves") else None)
    cases = ET.parse(results).getroot().findall(".//testcase")
    bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    return 0 if cases and not bad else 1


if __name__ == "__main__":
    end_session_with_parent()
    sys.exit(run(json.loads(sys.argv[1])))
