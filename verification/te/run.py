"""Build the stand-alone TensorEngine top and run its cocotb tests."""

import json
import os
from pathlib import Path

from tensorsoc.verification.te.top import REPO, TOPLEVEL, build

# te_levels=4: the engine the FPGA boards build (soc/targets/); the guide's
# examples run at the default 8 (tests/test_te_engine.py)
TEST_CONFIG = dict(np=2, nt=2, vw=4, pcore_private_words=32, pcore_shared_words=64, scratch_size=1024, te_levels=4,
                   te_vector_path=1, te_trace_depth=256, te_dst_levels=0, te_dst_overlap=1, te_ovl_bits=48,
                   pcore_round_share=1, pcore_processes=2)


def test_config():
    from tensorsoc.spec.config import SoCConfig
    return SoCConfig().with_overrides(**TEST_CONFIG)


def run(config=None, testcases=None, extra_env=None, waves=False, module="tensorsoc.verification.te.test_engine",
        ddr_bytes=None, quiet=False, array="model"):
    """Returns (tests, failures, results_xml).  ``array``: "model" (the PCORE
    memory model) or "real" (the PCORE array itself)."""
    from cocotb_tools.check_results import get_results
    from tensorsoc.verification.te.top import DDR_BYTES
    config = config or test_config()
    ddr_bytes = ddr_bytes or DDR_BYTES
    (REPO / "build" / "te").mkdir(parents=True, exist_ok=True)
    runner, bdir = build(config, waves=waves, log_file=str(REPO / "build" / "te" / "build.log"), ddr_bytes=ddr_bytes,
                         array=array)
    overrides = {k: getattr(config, k) for k in TEST_CONFIG}
    env = {"TSOC_TE_CONFIG": json.dumps(overrides), "TSOC_TE_DDR_BYTES": str(ddr_bytes),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    results = runner.test(test_module=module, hdl_toplevel=TOPLEVEL, testcase=testcases, extra_env=env,
                          waves=waves, test_dir=str(bdir / "run"),
                          log_file=str(bdir / "sim.log") if quiet else None,
                          build_dir=str(bdir / ("sim-waves" if waves else "sim")))
    tests, fails = get_results(Path(results))
    return tests, fails, results
