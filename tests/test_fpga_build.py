"""The small board's bitstream, end to end: firmware, Verilog, yosys,
nextpnr-ecp5, ecppack and the report (a few minutes on two busy cores)."""

import json

import pytest

from soc.builder import ROOT

BUILD = ROOT / "build" / "test" / "fpga" / "colorlight_i5"


@pytest.mark.sim
def test_colorlight_i5_bitstream():
    from soc.bitstream import BoardBuild
    from soc.targets import get
    from verification.soc.runner import build_lock
    target = get("colorlight_i5")
    build = BoardBuild(target, build_dir=BUILD, log=lambda *_: None)
    with build_lock(build.build_dir):
        report = build.build()      # raises TimingError when a clock misses its constraint

    bit = build.bitstream.read_bytes()
    assert len(bit) > 50_000
    assert b"LFE5U-25F" in bit[:512]                    # ecppack's header comment names the device
    data = json.loads(build.report_json.read_text())
    assert data["timing_met"] is True and data["board"] == "colorlight_i5"
    util = data["utilisation"]
    for cell, lo in (("LUT4", 2000), ("FF", 1000), ("DP16KD", 10), ("MULT18X18D", 1)):
        assert lo <= util[cell]["used"] <= util[cell]["available"], (cell, util[cell])
    fmax = {c["domain"]: c for c in data["fmax"]}
    assert fmax["sys"]["constraint_mhz"] == pytest.approx(target.config.sys_clk_freq / 1e6)
    assert 0.1 * 50 < fmax["sys"]["achieved_mhz"] < 400
    assert fmax["sys"]["achieved_mhz"] >= fmax["sys"]["constraint_mhz"]
    assert set(data["times_s"]) >= {"yosys", "nextpnr-ecp5", "ecppack", "total"}
    assert report.text() == build.report_txt.read_text()
