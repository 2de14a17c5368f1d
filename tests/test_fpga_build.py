"""The small board's bitstream, end to end: firmware, Verilog, yosys,
nextpnr-ecp5, ecppack and the report (a few minutes on two busy cores).

The build is single-threaded and long, so it does not hold up the
simulations: when this test is selected, tests/conftest.py starts
`tsoc bitstream --board colorlight_i5 --set accelerator=0` in a background
process as the session
starts (on the second core, while the simulations run on the first) and moves
this test to the end of the session, where it waits for the build and checks
what it wrote.  Run alone, it starts the build itself.

It builds the board without its accelerator (`--set accelerator=0`): the
same board, CPU, bus, memories and nextpnr options as the target, in
minutes, with nextpnr's router1 in `make test` (half router2's time on this
netlist; conftest.FPGA_ROUTER) and the target's router2 in the long tier.
The target's own build, with its 4-MAC accelerator, takes about 9 minutes
of nextpnr; docs/fpga.md records it."""

import json

import pytest

from conftest import FPGA_BUILD, FPGA_ROUTER, fpga_build_process


@pytest.mark.sim
def test_colorlight_i5_bitstream(request):
    from tensorsoc.soc.targets import get
    target = get("colorlight_i5")
    build = fpga_build_process(request.config)
    status = build.wait(timeout=3600)
    text = build.log.read_text()
    assert status == 0, f"tsoc bitstream exited {status}:\n{text[-3000:]}"
    assert "timing not met" not in text

    bit = (FPGA_BUILD / "gateware" / "tensorsoc.bit").read_bytes()
    assert len(bit) > 50_000
    assert b"LFE5U-25F" in bit[:512]                    # ecppack's header comment names the device
    data = json.loads((FPGA_BUILD / "report.json").read_text())
    assert data["timing_met"] is True and data["board"] == "colorlight_i5"
    assert data["router"] == (FPGA_ROUTER or target.router), data["router"]
    util = data["utilisation"]
    # (no MULT18X18D: the VexRiscv minimal has no multiplier, and the PCOREs are left out)
    for cell, lo in (("LUT4", 2000), ("FF", 1000), ("DP16KD", 10), ("MULT18X18D", 0)):
        assert lo <= util[cell]["used"] <= util[cell]["available"], (cell, util[cell])
    fmax = {c["domain"]: c for c in data["fmax"]}
    assert fmax["sys"]["constraint_mhz"] == pytest.approx(target.config.sys_clk_freq / 1e6)
    assert 0.1 * 50 < fmax["sys"]["achieved_mhz"] < 400
    assert fmax["sys"]["achieved_mhz"] >= fmax["sys"]["constraint_mhz"]
    assert set(data["times_s"]) >= {"yosys", "nextpnr-ecp5", "ecppack", "total"}
    report = (FPGA_BUILD / "report.txt").read_text()
    assert report.startswith("tensorsoc bitstream report: colorlight_i5") and report.rstrip() in text
