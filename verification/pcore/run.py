"""Run the cocotb tests of the PCORE array in Verilator (build once per
configuration, then any set of test cases)."""

import json
import os
from pathlib import Path

from tensorsoc.verification.pcore.build import REPO, TOPLEVEL, build


class SimulationFailed(Exception):
    pass


def run(config, testcases=None, extra_env=None, waves=False, quiet=False):
    """Build (if needed) and run ``testcases`` of verification/pcore/test_array.py.
    Returns (tests, failures, results_xml).  ``quiet`` sends the build and
    simulation output to build.log / sim.log in the build directory."""
    from cocotb_tools.check_results import get_results
    from tensorsoc.verification.pcore.build import build_dir_for
    logs = build_dir_for(config)
    logs.mkdir(parents=True, exist_ok=True)
    runner, bdir = build(config, waves=waves, log_file=str(logs / "build.log") if quiet else None)
    overrides = {k: v for k, v in config.as_dict().items()
                 if k in ("np", "nt", "vw", "pcore_private_words", "pcore_shared_words", "pcore_shift_dsp",
                          "pcore_round_share")}
    env = {"TSOC_PCORE_CONFIG": json.dumps(overrides),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    results = runner.test(test_module="tensorsoc.verification.pcore.test_array", hdl_toplevel=TOPLEVEL,
                          testcase=testcases, extra_env=env, waves=waves,
                          test_dir=str(bdir / "run"), build_dir=str(bdir / "sim"),
                          log_file=str(bdir / "sim.log") if quiet else None)
    tests, fails = get_results(Path(results))
    return tests, fails, results
