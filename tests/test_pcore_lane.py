"""The MyHDL lane datapath against the golden fixed-point model: exhaustively
at 4-bit data / 8-bit accumulator, randomly at 16/32 bits, in MyHDL's
simulator and (sim-marked) as converted Verilog in Verilator; each with the
fabric's rounding right shift and with the DSP blocks' (``dsp_shift``,
``SoCConfig.pcore_shift_dsp``)."""

import os
from pathlib import Path

import numpy as np
import pytest

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.lane import generate_verilog, module_name, rounder_name
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


# the lane's rounding right shift: in the fabric, through the DSP blocks
# (SoCConfig.pcore_shift_dsp), or a lane without one with the rounder its
# PCORE shares (SoCConfig.pcore_round_share > 1)
VARIANTS = ["fabric_shift", "dsp_shift", "shared_round"]
SHIFTS = pytest.mark.parametrize("variant", VARIANTS)


def _lane(stim, width, acc_width, variant):
    return run_lane(stim, width, acc_width, dsp_shift=variant == "dsp_shift",
                    shared_round=variant == "shared_round")


# The DSP lane (pcore_shift_dsp = 1, which neither board's target uses)
# exhaustively at 4 bits is in the long tier (40 s of one worker): in `make
# test` it runs the random 16-bit stimulus below, its bypass and its Verilog.
@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.long) if v == "dsp_shift" else v
                                     for v in VARIANTS])
@pytest.mark.parametrize("op", list(isa.OP))
def test_lane_exhaustive_small_width(op, variant):
    stim = stimulus(op, 4, 8)
    _check(op, stim, _lane(stim, 4, 8, variant), 4, 8)


@SHIFTS
def test_lane_random_16_bit(variant):
    rng = np.random.default_rng(2026)
    stims = [stimulus(op, 16, 32, rng, 400) for op in isa.OP]
    merged = {k: np.concatenate([s[k] for s in stims]) for k in stims[0]}
    got = _lane(merged, 16, 32, variant)
    start = 0
    for op, s in zip(isa.OP, stims):
        n = len(s["op"])
        _check(op, s, {k: v[start:start + n] for k, v in got.items()}, 16, 32)
        start += n


@SHIFTS
@pytest.mark.parametrize("width,acc_width", [(4, 8), (16, 32)])
def test_lane_accumulator_bypass(width, acc_width, variant):
    """``fwd``: mac and accadd add to the result of the instruction two clocks
    earlier (stage C's acc_out), not to acc_in; the accumulator-only ops
    without it, and macz/accset, ignore the bypass.  Random chains against
    the golden operations applied in order."""
    rng = np.random.default_rng(17 + width)
    ops = sorted(isa.CHAIN_OPS)
    n = 600
    stim = stimulus("mac", width, acc_width, rng, n)
    stim["sh"] = stimulus("accadd", width, acc_width, rng, n)["sh"]
    stim["op"] = np.array([isa.OP[ops[i]] for i in rng.integers(0, len(ops), n)], np.int64)
    stim["fwd"] = (rng.random(n) < 0.7).astype(np.int64)
    stim["fwd"][:2] = 0
    got = _lane(stim, width, acc_width, variant)
    acc_out = np.zeros(n, np.int64)
    for i in range(n):
        op = isa.OP_NAMES[int(stim["op"][i])]
        acc = acc_out[i - 2] if stim["fwd"][i] else stim["acc"][i]
        _, want, _ = expected(op, stim["a"][i:i + 1], stim["b"][i:i + 1], np.array([acc]), stim["flag"][i:i + 1],
                              stim["sh"][i:i + 1], width, acc_width)
        acc_out[i] = want[0]
    bad = np.nonzero(got["acc_out"] != acc_out)[0]
    assert not len(bad), f"{len(bad)} wrong accumulators; first at {bad[0]}: got {got['acc_out'][bad[0]]}, " \
                         f"expected {acc_out[bad[0]]}"
    assert stim["fwd"][2:].sum() > 100 and len(set(stim["op"])) == len(ops)


@SHIFTS
def test_lane_converts_to_verilog(tmp_path, variant):
    dsp_shift, shared_round = variant == "dsp_shift", variant == "shared_round"
    path = generate_verilog(tmp_path, dsp_shift=dsp_shift, shared_round=shared_round)
    text = Path(path).read_text()
    assert f"module {module_name(dsp_shift=dsp_shift, shared_round=shared_round)}" in text
    for port in ("input signed [15:0] a;", "input signed [31:0] acc_in;", "output signed [15:0] result;"):
        assert port in text
    # the DSP variant's rounding is the product x' * m, the fabric's a shift
    # by rlo; the shared rounder's lane has neither, its rounder (in the same
    # file) the shift
    assert ("a_rs * $signed({1'b0, a_rmul})" in text) == dsp_shift
    assert ("a_rs >>> $signed({1'b0, a_rlo})" in text) == (variant == "fabric_shift")
    assert ("output signed [31:0] rnd_p;" in text) == shared_round
    assert (f"module {rounder_name()}" in text) == shared_round
    assert ("a_rs >>> $signed({1'b0, rlo})" in text) == shared_round


# The DSP lane's Verilator runs (pcore_shift_dsp = 1, neither board's
# option; 39 s and 34 s of one worker) are in the long tier: `make test`
# checks its MyHDL source on the random 16-bit stimulus above and converts
# it to Verilog (test_lane_converts_to_verilog).
@pytest.mark.sim
@pytest.mark.parametrize("width,acc_width,mode,dsp_shift", [
    (4, 8, "exhaustive", False), (16, 32, "random", False),
    pytest.param(4, 8, "exhaustive", True, marks=pytest.mark.long),
    pytest.param(16, 32, "random", True, marks=pytest.mark.long)])
def test_lane_verilog(width, acc_width, mode, dsp_shift):
    from cocotb_tools.check_results import get_results
    from tensorsoc.verification.pcore.build import REPO, build_lane
    runner, bdir, top = build_lane(width, acc_width, dsp_shift)
    env = {"TSOC_LANE_WIDTH": str(width), "TSOC_LANE_ACC_WIDTH": str(acc_width), "TSOC_LANE_MODE": mode,
           "TSOC_LANE_VECTORS": os.environ.get("TSOC_LANE_VECTORS", "3000"),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    results = runner.test(test_module="tensorsoc.verification.pcore.test_lane", hdl_toplevel=top,
                          test_dir=str(bdir / "run"), build_dir=str(bdir / "sim"), extra_env=env)
    tests, fails = get_results(Path(results))
    assert tests == 1 and fails == 0
