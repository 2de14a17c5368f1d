"""Runs one regression test in its own process (python -m
verification.regress.worker SPEC_JSON): the simulator prints to this
process's stdout, which the scheduler sends to the test's log file."""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def run(spec):
    from soc.builder import SimBuild
    from soc.config import SoCConfig
    from verification.soc.runner import cocotb_runner, cocotb_test
    build = SimBuild(SoCConfig(**spec["config"]), spec["build_dir"], log=lambda *_: None)
    out = Path(spec["out"])
    env = {"TSOC_SEED": str(spec["seed"]), "TSOC_HOST_QPI": "1" if spec["mode"].startswith("qpi") else "0",
           "TSOC_UVM_OUT": str(out)}
    if spec.get("fault"):
        env["TSOC_UVM_FAULT"] = spec["fault"]
    results = out / "results.xml"
    runner = cocotb_runner(build, waves=spec.get("waves", False))     # the scheduler built it once
    cocotb_test(runner, build, "verification.uvm.tests", results, waves=spec.get("waves", False),
                extra_env=env, testcase=[spec["test"]], trace_file=out / "waves.fst" if spec.get("waves") else None)
    cases = ET.parse(results).getroot().findall(".//testcase")
    bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    return 0 if cases and not bad else 1


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
