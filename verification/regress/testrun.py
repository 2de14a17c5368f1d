"""One regression test: its simulation in a process of its own
(verification/regress/worker.py), and its result record, the row every
report is written from."""

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tensorsoc.verification.regress import report

ROOT = Path(__file__).resolve().parents[2]
# What a test leaves in its folder (a waveform run adds waves.log, waves.fst).
RESULT_FILES = ("test.log", "results.xml", "stats.json", "coverage.json")
KILL_AT = "server: ready"          # the console line of a booted SoC, in the test's log


def first_failure(result_dir, log):
    xml = Path(result_dir) / "results.xml"
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            for tag in ("failure", "error"):
                f = case.find(tag)
                if f is not None:
                    return (f.get("message") or f.text or tag).strip()
    stats = Path(result_dir) / "stats.json"
    if stats.exists():
        mism = json.loads(stats.read_text()).get("mismatches")
        if mism:
            return mism[0]
    tail = Path(log).read_text(errors="replace").splitlines()[-15:] if Path(log).exists() else []
    return "no result (simulator crashed?); log tail:\n" + "\n".join(tail)


def simulate(spec, build_dir, config, test_dir, fault=None, waves=False, kill_worker=False):
    """Runs ``spec`` on the simulator built in ``build_dir`` and writes its
    files into ``test_dir``; returns (passed, seconds, log).  The simulation
    gets a session of its own, which it ends if this process dies (worker.py).

    ``kill_worker`` (a fault hook of the regression's own test): kill this
    process with SIGKILL in the middle of the test, once the log shows
    KILL_AT (the SoC booted, the test's traffic begins)."""
    test_dir = Path(test_dir)
    test_dir.mkdir(parents=True, exist_ok=True)
    log = test_dir / ("waves.log" if waves else "test.log")
    if not waves:
        for name in RESULT_FILES:      # a previous attempt's, if a worker died running it
            (test_dir / name).unlink(missing_ok=True)
    args = {"test": spec.test, "mode": spec.mode, "seed": spec.seed, "host_path": spec.host_path,
            "out": str(test_dir), "fault": fault, "build_dir": str(build_dir), "config": config, "waves": waves}
    t0 = time.monotonic()
    with open(log, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "tensorsoc.verification.regress.worker", json.dumps(args)],
                                stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
                                env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1"))
        if kill_worker:
            _kill_self_at(proc, log, spec)
        returncode = proc.wait()
    return returncode == 0, time.monotonic() - t0, log


def _kill_self_at(proc, log, spec):
    while proc.poll() is None:
        if KILL_AT in log.read_text(errors="replace"):
            with open(log, "a") as f:
                print(f"[regress] fault hook: killing this worker (pid {os.getpid()}) in the middle of {spec.name}",
                      file=f, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.2)


def result(spec, test_dir, log, passed, seconds, fault=None, message=None, **extra):
    """The result record of one test (``message``: why it failed, when its
    folder cannot say)."""
    stats_file = Path(test_dir) / "stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    r = {"name": spec.name, "key": spec.key, "test": spec.test, "mode": spec.mode, "seed": spec.seed,
         "tier": spec.tier, "host_path": spec.host_path,
         "passed": passed, "seconds": seconds, "dir": str(test_dir), "log": str(log),
         "cycles": stats.get("cycles"), "transactions": stats.get("transactions"),
         "float_error": max(stats.get("float_errors", {}).values(), default=None),
         "message": "" if passed else message or first_failure(test_dir, log), **extra}
    r["rerun"] = report.rerun_command(r, fault)
    return r
