"""The MyHDL lane datapath against the golden fixed-point model: exhaustively
at 4-bit data / 8-bit accumulator, randomly at 16/32 bits, in MyHDL's
simulator and (sim-marked) as converted Verilog in Verilator."""

import os
from pathlib import Path

import numpy as np
import pytest

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.lane import generate_verilog, module_name
from tensorsoc.verification.pcore.lane_model import expected, stimulus
from tensorsoc.verification.pcore.lane_myhdl import run_lane


def _check(op, stim, got, width, acc_width):
    res, acc, flag = expected(op, stim["a"], stim["b"], stim["acc"], stim["flag"], stim["sh"],
                              width, acc_width)
    for name, want in (("result", res), ("acc_out", acc), ("flag_out", flag)):
        if want is None:
            continue
        bad = np.nonzero(got[name] != want)[0]
        assert not len(bad), (
            f"{op}: {len(bad)} wrong {name}; first a={stim['a'][bad[0]]} b={stim['b'][bad[0]]} "
            f"acc={stim['acc'][bad[0]]} flag={stim['flag'][bad[0]]} sh={stim['sh'][bad[0]]}: "
            f"got {got[name][bad[0]]}, expected {want[bad[0]]}")


@pytest.mark.parametrize("op", list(isa.OP))
def test_lane_exhaustive_small_width(op):
    stim = stimulus(op, 4, 8)
    _check(op, stim, run_lane(stim, 4, 8), 4, 8)


def test_lane_random_16_bit():
    rng = np.random.default_rng(2026)
    stims = [stimulus(op, 16, 32, rng, 400) for op in isa.OP]
    merged = {k: np.concatenate([s[k] for s in stims]) for k in stims[0]}
    got = run_lane(merged, 16, 32)
    start = 0
    for op, s in zip(isa.OP, stims):
        n = len(s["op"])
        _check(op, s, {k: v[start:start + n] for k, v in got.items()}, 16, 32)
        start += n


def test_lane_converts_to_verilog(tmp_path):
    path = generate_verilog(tmp_path)
    text = Path(path).read_text()
    assert f"module {module_name()}" in text
    for port in ("input signed [15:0] a;", "input signed [31:0] acc_in;", "output signed [15:0] result;"):
        assert port in text


@pytest.mark.sim
@pytest.mark.parametrize("width,acc_width,mode", [(4, 8, "exhaustive"), (16, 32, "random")])
def test_lane_verilog(width, acc_width, mode):
    from cocotb_tools.check_results import get_results
    from tensorsoc.verification.pcore.build import REPO, build_lane
    runner, bdir, top = build_lane(width, acc_width)
    env = {"TSOC_LANE_WIDTH": str(width), "TSOC_LANE_ACC_WIDTH": str(acc_width), "TSOC_LANE_MODE": mode,
           "TSOC_LANE_VECTORS": os.environ.get("TSOC_LANE_VECTORS", "3000"),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    results = runner.test(test_module="tensorsoc.verification.pcore.test_lane", hdl_toplevel=top,
                          test_dir=str(bdir / "run"), build_dir=str(bdir / "sim"), extra_env=env)
    tests, fails = get_results(Path(results))
    assert tests == 1 and fails == 0
