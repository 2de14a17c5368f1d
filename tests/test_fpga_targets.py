"""FPGA board targets: every board elaborates and writes its gateware files
(Verilog, pin constraints, build script) without running the tools; the
SDRAM init gateware replays LiteDRAM's sequence; the report parser and the
timing check."""

import dataclasses
import json
import os
import re
import time
from pathlib import Path

import pytest

from tensorsoc.soc.builder import ROOT
from tensorsoc.soc.targets import TARGETS, TargetError, get

BUILD = ROOT / "build" / "test" / "fpga"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_board_elaborates(name):
    """Firmware against the board's headers, Verilog, .lpf and build script."""
    from tensorsoc.soc.bitstream import BoardBuild
    from tensorsoc.verification.soc.runner import build_lock
    target = get(name)
    build = BoardBuild(target, build_dir=BUILD / f"{name}-elab", log=lambda *_: None)
    with build_lock(build.build_dir):
        build.generate()
    gw = build.gateware_dir
    verilog = (gw / "tensorsoc.v").read_text()
    for instance in ("EHXPLLL", "VexRiscv", "ODDRX1F"):
        assert instance in verilog, f"{name}: no {instance} in the Verilog"
    # The firmware is in the ROM image LiteX writes beside the Verilog.
    rom_words = (gw / "tensorsoc_rom.init").read_text().split()
    fw = build.firmware_bin("rom").read_bytes()
    assert int(rom_words[0], 16) == int.from_bytes(fw[:4], "little")
    assert len(fw) <= target.config.rom_size

    # Every pin of the host port, the UART and the SDRAM is constrained.
    lpf = (gw / "tensorsoc.lpf").read_text()
    located = dict(re.findall(r'LOCATE COMP "([^"]+)" SITE "([^"]+)"', lpf))
    platform = target.make_platform()
    for resource in ("host_spi", "serial", "sdram", "sdram_clock", "clk25", platform.reset_name):
        for pad_pins in _pins_of(platform, resource):
            assert pad_pins in located.values(), f"{name}: pin {pad_pins} of {resource} not in the .lpf"
    assert located["host_spi_clk"] and located["serial_tx"]
    assert 'FREQUENCY NET "sys_clk"' in lpf
    assert ('FREQUENCY NET "accel_clk"' in lpf) == bool(target.config.accel_clk_freq)
    assert 'FREQUENCY PORT "host_spi_clk" 50.0 MHz' in lpf

    # The generated headers describe the board: SDRAM main RAM of the config's size.
    mem_h = (build.include_dir / "generated" / "mem.h").read_text()
    size = int(re.search(r"#define MAIN_RAM_SIZE (0x[0-9a-fA-F]+)", mem_h).group(1), 16)
    assert size == target.config.main_ram_size
    assert "CSR_SDRAM_BASE" in (build.include_dir / "generated" / "csr.h").read_text()
    script = (gw / "build_tensorsoc.sh").read_text()
    assert "--report tensorsoc_nextpnr.json" in script and "ecppack" in script
    assert "--threads 1" in script and "--router router2" in script

    # The accelerator: TensorEngine CSRs, the PCORE array's bus window and its
    # MyHDL lane Verilog beside the SoC's (yosys reads it by relative path).
    csr_h = (build.include_dir / "generated" / "csr.h").read_text()
    config_h = (build.include_dir / "tensorsoc_config.h").read_text()
    has_accel = target.config.accelerator == 1
    assert ("CSR_TENSOR_ENGINE_BASE" in csr_h) == has_accel
    assert ("PCORE_BASE" in mem_h) == has_accel
    # (tsoc_pcore_lane_sr.v: lanes sharing their rounding shifter, pcore_round_share)
    lane_v = re.findall(r"read_verilog (tsoc_pcore_lane\w*\.v)", (gw / "tensorsoc.ys").read_text())
    assert len(lane_v) == has_accel and all((gw / v).exists() for v in lane_v)
    assert re.search(rf"#define TSOC_ACCELERATOR\s+{target.config.accelerator}\b", config_h)
    assert re.search(rf"#define TSOC_NP\s+{target.config.np}\b", config_h)


def _pins_of(platform, resource):
    """The sites of a resource's pins (connector pins such as ``pmode:3`` resolved)."""
    resolve = platform.constraint_manager.connector_manager.resolve_identifiers
    for name, number, *items in platform.constraint_manager.available:
        if name != resource:
            continue
        for item in items:
            yield from resolve(getattr(item, "identifiers", []))
            for sub in getattr(item, "constraints", []):
                yield from resolve(getattr(sub, "identifiers", []))


def test_board_configurations():
    """The configurations docs/fpga.md documents: the 85F carries the largest
    accelerator that routes and meets timing (4 x 8 x 4 with four loop levels, in its own clock domain, with
    half the simulation's PCORE memory sizes and a quarter of its scratch-pad; VW = 8 has not routed); the docs'
    configuration table is the generated one."""
    from tensorsoc.soc.bitstream import config_table_markdown
    from tensorsoc.spec.config import DEFAULT
    ulx3s = get("ulx3s")
    c = ulx3s.config
    assert (c.accelerator, c.np, c.nt, c.vw, c.te_levels) == (1, 4, 8, 4, 4)
    assert c.peak_macs_per_clock == 16 and (c.sys_clk_freq, c.accel_clk_freq) == (40_000_000, 60_000_000)
    assert (c.pcore_private_words, c.pcore_shared_words, c.scratch_size) == (
        DEFAULT.pcore_private_words // 2, DEFAULT.pcore_shared_words // 2, DEFAULT.scratch_size // 4)
    docs = (ROOT / "docs" / "fpga.md").read_text()
    assert config_table_markdown() in docs, "docs/fpga.md: regenerate the table (soc.bitstream.config_table_markdown)"


def test_accelerator_in_its_own_clock_domain():
    """accel_clk_freq puts the accelerator in the CRG's ``accel`` domain:
    its CSR banks move to the bus region ``accel_csr`` under their names,
    its bus masters go through a crossing each, that region and the PCORE
    instruction memory through one, and the PLL gets the clock."""
    from tensorsoc.soc.accel_domain import CSR_REGION
    from tensorsoc.spec.config import ConfigError
    target = get("ulx3s")
    soc = target.make_soc(target.config.with_overrides(accel_clk_freq=75_000_000))
    region = soc.bus.regions[CSR_REGION]
    for bank in ("tensor_engine", "pcore", "tensor_engine_fetch"):
        origin = soc.csr.regions[bank].origin
        assert region.origin <= origin < region.origin + region.size, bank
    assert set(soc.accel.cdcs) == {"tensor_engine_master0", "tensor_engine_fetch_master0", "slaves"}
    assert {"pcore", CSR_REGION} <= set(soc.bus.regions)
    assert soc.crg.cd_accel is not None
    with pytest.raises(ConfigError, match="no accelerator"):
        get("colorlight_i5").config.with_overrides(accelerator=0, accel_clk_freq=75_000_000)


def test_pll_makes_the_clocks_asked_for_or_says_why_not():
    """The board PLL gives each clock within 100 ppm (LiteX's default 1%
    gave sys 30.26 MHz beside accel 47.92 for 30 and 48): a pair one VCO
    cannot make is refused with the frequencies it can."""
    from tensorsoc.soc.targets.crg import PLL_MARGIN
    target = get("ulx3s")
    soc = target.make_soc(target.config)
    outputs = soc.crg.pll.clkouts.values()
    assert sorted((f, m) for _, f, _, m, _ in outputs) == [(40e6, PLL_MARGIN), (40e6, PLL_MARGIN), (60e6, PLL_MARGIN)]
    config = soc.crg.pll.compute_config()      # (as LiteX does when it finalises the PLL)
    assert (config["vco"], config["clko0_div"], config["clko2_div"]) == (600e6, 15, 10)
    # a TargetError: `tsoc bitstream` prints it as an error, not a traceback
    with pytest.raises(TargetError, match=r"cannot make sys 30 MHz and accel 48 MHz .*"
                       r"the nearest it makes: --set accel_clk_freq=46875000 or 50000000$"):
        target.make_soc(target.config.with_overrides(sys_clk_freq=30_000_000, accel_clk_freq=48_000_000))


def test_board_config_must_match_sdram():
    target = get("colorlight_i5")
    with pytest.raises(TargetError, match="main_ram_size"):
        target.make_soc(target.config.with_overrides(main_ram_size=4 * 1024 * 1024, model_window_size=1024 * 1024))


def test_unknown_board():
    with pytest.raises(TargetError, match="ulx3s"):
        get("nexys")


def test_cli_lists_boards(capsys):
    from tensorsoc.cli import main
    assert main(["bitstream", "--list"]) == 0
    out = capsys.readouterr().out
    for name in TARGETS:
        assert name in out


# SDRAM initialisation ---------------------------------------------------------

def test_sdram_init_replays_litedram_sequence():
    """Run SDRAMInit against a DFI interface and check every command, its
    address, its order and the clocks that follow it."""
    from migen import Signal
    from migen.sim import run_simulation
    from litedram.common import PhySettings
    from litedram.modules import MT48LC16M16
    from litedram.phy.dfi import Interface
    from tensorsoc.soc.targets.sdram_init import SDRAMInit

    class FakeDFII:
        def __init__(self):
            self.ext_dfi = Interface(13, 2, 1, 16, 1)
            self.ext_dfi_sel = Signal()

    clk_freq = 1e6   # 200 us power-up wait = 200 clocks: a short simulation
    module = MT48LC16M16(clk_freq, "1:1")
    phy_settings = PhySettings(phytype="GENSDRPHY", memtype="SDR", databits=16, dfi_databits=16,
                               nranks=1, nphases=1, rdphase=0, wrphase=0, cl=2, read_latency=3,
                               write_latency=0)
    dfii = FakeDFII()
    dut = SDRAMInit(dfii, phy_settings, module.timing_settings, clk_freq)
    phase = dfii.ext_dfi.phases[0]
    seen = []     # (cycle, cmd bits, address, bank, cke)
    state = {}

    def monitor():
        for cycle in range(sum(s[4] + 2 for s in dut.steps) + 10):
            cs = (yield phase.cs_n) == 0
            if cs:
                cmd = ((yield phase.ras_n) == 0, (yield phase.cas_n) == 0, (yield phase.we_n) == 0)
                seen.append((cycle, cmd, (yield phase.address), (yield phase.bank)))
            if (yield dut.done):
                state["done"] = cycle
                state["sel_after"] = (yield dfii.ext_dfi_sel)
                state["cke"] = (yield phase.cke)
                return
            assert (yield dfii.ext_dfi_sel) == 1
            if (yield phase.cke) and "first_cke" not in state:
                state["first_cke"] = cycle
            yield

    run_simulation(dut, monitor())
    assert "done" in state, "SDRAMInit never finished"
    assert state["sel_after"] == 0, "the controller must get the DFI back"
    commands = [s for s in dut.steps if "cs" in s[3]]
    assert len(seen) == len(commands)
    for (cycle, (ras, cas, we), address, bank), (comment, want_addr, want_bank, flags, wait) in zip(seen, commands):
        assert (ras, cas, we) == ("ras" in flags, "cas" in flags, "we" in flags), comment
        assert (address, bank) == (want_addr, want_bank), comment
    # Precharge all (A10), mode register with CL in bits 6:4, as LiteDRAM.
    assert seen[0][2] & 0x400 and seen[0][1] == (True, False, True)
    assert seen[-1][1] == (True, True, True) and (seen[-1][2] >> 4) & 7 == phy_settings.cl
    # 200 us of CKE before the first command; commands spaced by their waits.
    assert seen[0][0] - state["first_cke"] >= 200
    for (c0, *_), (c1, *_), step in zip(seen, seen[1:], commands):
        assert c1 - c0 > step[4] >= max(module.timing_settings.tRP, module.timing_settings.tRFC)
    assert state["cke"] == 1


# Report -----------------------------------------------------------------------

NEXTPNR_REPORT = {
    "utilization": {
        "DP16KD": {"available": 56, "used": 30},
        "MULT18X18D": {"available": 28, "used": 4},
        "TRELLIS_COMB": {"available": 24288, "used": 8000},
        "TRELLIS_FF": {"available": 24288, "used": 4000},
    },
    "fmax": {
        "$glbnet$sys_clk": {"achieved": 59.12, "constraint": 50.0},
        "$glbnet$host_spi_clk$TRELLIS_IO_IN": {"achieved": 88.9, "constraint": 50.0},
        "$glbnet$accel_clk": {"achieved": 71.0, "constraint": 75.0},
        "clk25$TRELLIS_IO_IN": {"achieved": 400.0, "constraint": 0},
    },
}

NEXTPNR_LOG = """
Info: Max frequency for clock '$glbnet$sys_clk': 48.00 MHz (FAIL at 50.00 MHz)
Info: Max frequency for clock '$glbnet$sys_clk': 57.51 MHz (PASS at 50.00 MHz)
Info: Max frequency for clock '$glbnet$host_spi_clk$TRELLIS_IO_IN': 120.00 MHz (PASS at 50.00 MHz)
"""


def test_parse_nextpnr_report():
    from tensorsoc.soc.bitstream import parse_nextpnr_report
    util, fmax = parse_nextpnr_report(NEXTPNR_REPORT, ("sys", "sys_ps", "accel"))
    assert util["DP16KD"] == {"used": 30, "available": 56}
    by_domain = {c.domain: c for c in fmax}
    assert set(by_domain) == {"sys", "accel", "host_spi_clk"}   # clk25: no constraint
    assert by_domain["sys"].met and by_domain["sys"].achieved_mhz == 59.12
    assert not by_domain["accel"].met
    assert by_domain["accel"].slack_ns == pytest.approx(1e3 / 75 - 1e3 / 71)


def test_report_folds_the_cs_n_ripple_clocks_into_one_line():
    """The host port's CS_N counter is a ripple counter, a clock per bit
    (and nextpnr may name a LUT-inverted one too): report.txt gives them one
    line, the slowest with how many there are; report.json keeps each."""
    from tensorsoc.soc.bitstream import Report, parse_nextpnr_report
    data = json.loads(json.dumps(NEXTPNR_REPORT))
    data["fmax"].update({f"soc_port_phy_epoch{i}": {"achieved": 894.45 - i, "constraint": 12.0} for i in range(7)})
    data["fmax"]["soc_port_phy_epoch2_LUT4_B_D_LUT4_Z_2_D[1]"] = {"achieved": 754.15, "constraint": 12.0}
    util, fmax = parse_nextpnr_report(data, ("sys", "accel"))
    r = Report(board="b", device="d", config={"np": 1, "nt": 8, "vw": 4, "accelerator": 1, "te_levels": 4,
                                              "main_ram_size": 1 << 20, "rom_size": 1 << 15, "sram_size": 1 << 13},
               clocks_mhz={"sys": 50.0}, utilisation=util, fmax=fmax)
    text = r.text()
    assert "epoch" not in text and text.count("CS_N counter") == 1, text
    assert "CS_N counter    754.15 MHz  (constraint 12.00 MHz, slack +82.01 ns) PASS; " \
           "the slowest of its 8 ripple clocks" in text
    assert "(accelerator, 4 loop levels)" in text
    assert len(r.as_dict()["fmax"]) == 3 + 8


def test_parse_nextpnr_log_keeps_the_final_figure():
    from tensorsoc.soc.bitstream import parse_nextpnr_log
    fmax = {c.domain: c for c in parse_nextpnr_log(NEXTPNR_LOG, ("sys",))}
    assert fmax["sys"].achieved_mhz == 57.51 and fmax["sys"].met
    assert fmax["host_spi_clk"].achieved_mhz == 120.0


def fake_build(monkeypatch, capsys, name, fmax=None, log=None, extra=(), constraint=None):
    """`tsoc bitstream --board colorlight_i5` with the tools replaced by
    NEXTPNR_REPORT (``fmax``: achieved MHz per clock net changed;
    ``constraint``: the constraint nextpnr reports, likewise) and ``log`` as
    nextpnr's log: (exit status, stderr, build folder)."""
    from tensorsoc.soc import bitstream
    from tensorsoc.cli import main

    def fake_tools(self, script=None):
        report = json.loads(json.dumps(NEXTPNR_REPORT))
        for net, mhz in (fmax or {}).items():
            report["fmax"][net]["achieved"] = mhz
        for net, mhz in (constraint or {}).items():
            report["fmax"][net]["constraint"] = mhz
        self.nextpnr_report.write_text(json.dumps(report))
        if log is not None:
            self.log_file.write_text(log)
        self.bitstream.write_bytes(b"\xff" * 16)
        return {"yosys": 1.0, "nextpnr-ecp5": 2.0, "ecppack": 0.1}

    monkeypatch.setattr(bitstream.BoardBuild, "run_tools", fake_tools)
    build_dir = BUILD / f"colorlight_i5-{name}"
    status = main(["bitstream", "--board", "colorlight_i5", "--build-dir", str(build_dir), *extra])
    return status, capsys.readouterr().err, build_dir


def test_timing_failure_fails_the_build(monkeypatch, capsys):
    """A clock below its constraint: report written, exit status 1, the
    failing domain named."""
    status, err, build_dir = fake_build(monkeypatch, capsys, "timing", extra=[
        "--seed", "3", "--nextpnr-arg=--router2-heatmap", "--nextpnr-arg", "heat map"])
    assert status == 1
    assert "timing not met on colorlight_i5" in err and "accel reached 71.00 MHz < 75.00 MHz" in err
    # the knob of the failing domain, not sys's
    assert "--set accel_clk_freq=HZ" in err and "sys_clk_freq" not in err
    # a clock no configuration field sets (the host port's SCLK): no knob to lower
    status, err, _ = fake_build(monkeypatch, capsys, "timing-sclk", fmax={
        "$glbnet$accel_clk": 80.0, "$glbnet$host_spi_clk$TRELLIS_IO_IN": 40.0})
    assert status == 1 and "host_spi_clk reached 40.00 MHz < 50.00 MHz" in err
    assert "fixed by the board or the host port's PHY" in err and "--set" not in err.split("timing not met")[1]
    report = json.loads((build_dir / "report.json").read_text())
    assert report["timing_met"] is False
    assert report["utilisation"]["DP16KD"]["used"] == 30
    text = (build_dir / "report.txt").read_text()
    assert "FAIL" in text
    # the seed and the extra nextpnr arguments: in the script (quoted) and the report
    # (after the target's own, BoardTarget.nextpnr_args)
    own = list(get("colorlight_i5").nextpnr_args)
    assert report["seed"] == 3 and report["nextpnr_args"] == [*own, "--router2-heatmap", "heat map"]
    assert report["router"] == "router2"
    assert f"  nextpnr     seed 3, router2 {' '.join(own)} --router2-heatmap heat map\n" in text
    script = (build_dir / "gateware" / "build_tensorsoc.sh").read_text()
    assert f"--router router2 {' '.join(own)} --router2-heatmap 'heat map'" in script and "--seed 3" in script


def test_a_relaxed_constraint_is_checked_against_the_clock(monkeypatch, capsys):
    """--pnr-constraint sys=40 on a 50 MHz sys: the .lpf tells nextpnr 40 MHz
    for sys and its phase-shifted SDRAM clock, and the build passes only
    when sys's Fmax reaches the 50 MHz it runs at."""
    pass_at = {"$glbnet$accel_clk": 80.0}
    told = {"$glbnet$sys_clk": 40.0}
    status, err, build_dir = fake_build(monkeypatch, capsys, "relaxed-fail", extra=["--pnr-constraint", "sys=40"],
                                        fmax={**pass_at, "$glbnet$sys_clk": 45.0}, constraint=told)
    lpf = (build_dir / "gateware" / "tensorsoc.lpf").read_text()
    assert 'FREQUENCY NET "sys_clk" 40 MHz;' in lpf and 'FREQUENCY NET "sys_ps_clk" 40 MHz;' in lpf
    # the clocks' own frequency in comments, for `tsoc bench seeds` (nextpnr skips them)
    from tensorsoc.soc.seed_screen import lpf_clocks
    assert lpf_clocks(lpf) == {"sys_clk": 50.0, "sys_ps_clk": 50.0}
    assert status == 1
    assert "sys reached 45.00 MHz < 50.00 MHz (its clock; nextpnr was told 40.00)" in err
    report = json.loads((build_dir / "report.json").read_text())
    sys_fmax = next(c for c in report["fmax"] if c["domain"] == "sys")
    assert sys_fmax["constraint_mhz"] == 40.0 and sys_fmax["clock_mhz"] == 50.0 and not sys_fmax["met"]
    assert report["pnr_constraint_mhz"] == {"sys": 40.0}

    status, err, build_dir = fake_build(monkeypatch, capsys, "relaxed-pass", extra=["--pnr-constraint", "sys=40"],
                                        fmax={**pass_at, "$glbnet$sys_clk": 52.0}, constraint=told)
    assert status == 0, err
    text = (build_dir / "report.txt").read_text()
    assert "nextpnr placed and routed for sys at 40 MHz" in text
    assert "sys              52.00 MHz  (runs at 50.00 MHz, nextpnr told 40.00, slack +0.77 ns) PASS" in text
    # the same netlist but other constraints: another placement, another digest
    plain = BUILD / "colorlight_i5-relaxed-plain"
    from tensorsoc.cli import main
    from tensorsoc.soc.bitstream import netlist_digest
    assert main(["bitstream", "--board", "colorlight_i5", "--no-tools", "--build-dir", str(plain)]) == 0
    assert netlist_digest(plain / "gateware") != netlist_digest(build_dir / "gateware")
    # comments in the .lpf do not change the digest (nextpnr skips them)
    lpf = plain / "gateware" / "tensorsoc.lpf"
    before = netlist_digest(plain / "gateware")
    lpf.write_text("# a comment\n" + lpf.read_text())
    assert netlist_digest(plain / "gateware") == before


@pytest.mark.parametrize("item, why", [
    ("sys", "expected DOMAIN=MHZ"), ("sdram=30", "expected DOMAIN=MHZ"), ("sys=fast", "expected DOMAIN=MHZ"),
    ("sys=60", "above the sys clock itself (50 MHz)"), ("accel=40", "has no accel clock"),
])
def test_pnr_constraint_refuses_bad_input(capsys, item, why):
    from tensorsoc.cli import main
    assert main(["bitstream", "--board", "colorlight_i5", "--pnr-constraint", item, "--no-tools",
                 "--build-dir", str(BUILD / "colorlight_i5-pnr-constraint")]) != 0
    assert why in capsys.readouterr().err


def test_nextpnr_arg_may_not_repeat_the_flows_options(capsys):
    from tensorsoc.cli import main
    assert main(["bitstream", "--board", "colorlight_i5", "--nextpnr-arg=--seed=4", "--no-tools",
                 "--build-dir", str(BUILD / "colorlight_i5-nextpnr-arg")]) != 0
    assert "--nextpnr-arg --seed=4: the flow sets nextpnr's --seed itself (use tsoc bitstream --seed)" \
        in capsys.readouterr().err
    assert main(["bitstream", "--board", "colorlight_i5", "--nextpnr-arg=--router", "--nextpnr-arg=router1",
                 "--no-tools", "--build-dir", str(BUILD / "colorlight_i5-nextpnr-arg")]) != 0
    assert "the flow sets nextpnr's --router itself (use tsoc bitstream --router)" in capsys.readouterr().err


def test_unknown_router_is_refused(capsys):
    from tensorsoc.soc import bitstream
    from tensorsoc.soc.builder import BuildError
    with pytest.raises(BuildError, match="--router router3: nextpnr's routers are router1, router2"):
        bitstream.BoardBuild(get("colorlight_i5"), build_dir=BUILD / "router3", router="router3")
    assert bitstream.BoardBuild(get("colorlight_i5"), build_dir=BUILD / "router3").router == "router2"


def test_router_option_reaches_nextpnr_and_the_report(monkeypatch, capsys):
    """--router router1: nextpnr's command line and the report name it."""
    status, err, build_dir = fake_build(monkeypatch, capsys, "router1", extra=["--router", "router1"])
    report = json.loads((build_dir / "report.json").read_text())
    assert report["router"] == "router1"
    target = get("colorlight_i5")
    assert f"  nextpnr     seed {target.seed}, router1 {' '.join(target.nextpnr_args)}\n" \
        in (build_dir / "report.txt").read_text()
    script = (build_dir / "gateware" / "build_tensorsoc.sh").read_text()
    assert "--router router1" in script and "--router router2" not in script


def test_cpu_variant_option_reaches_the_soc_and_the_report(monkeypatch, capsys):
    """--cpu-variant lite: the VexRiscv_Lite netlist is the SoC's CPU, the
    report says which variant was built and the firmware is compiled for
    rv32im; --cpu-variant minimal: VexRiscv_Min and rv32i; without it, the
    target's."""
    met = {"$glbnet$accel_clk": 80.0}      # every clock of the fake report met
    status, err, build_dir = fake_build(monkeypatch, capsys, "cpu-lite", fmax=met, extra=["--cpu-variant", "lite"])
    assert status == 0, err
    gateware = build_dir / "gateware"
    assert (gateware / "VexRiscv_Lite.v").exists() and not (gateware / "VexRiscv.v").exists()
    assert "VexRiscv_Lite.v" in (gateware / "tensorsoc.ys").read_text()    # what yosys reads
    assert json.loads((build_dir / "report.json").read_text())["cpu_variant"] == "lite"
    assert ", VexRiscv lite\n" in (build_dir / "report.txt").read_text()
    # the firmware's instruction set follows the variant's (LiteX's flags)
    firmware_mk = (build_dir / "soc" / "include" / "firmware.mk").read_text()
    assert "CPU_MARCH := rv32im\n" in firmware_mk
    status, err, build_dir = fake_build(monkeypatch, capsys, "cpu-minimal", fmax=met, extra=["--cpu-variant", "minimal"])
    assert status == 0, err
    assert (build_dir / "gateware" / "VexRiscv_Min.v").exists()
    assert "CPU_MARCH := rv32i\n" in (build_dir / "soc" / "include" / "firmware.mk").read_text()
    status, err, build_dir = fake_build(monkeypatch, capsys, "cpu-default", fmax=met)
    assert status == 0, err
    assert json.loads((build_dir / "report.json").read_text())["cpu_variant"] == get("colorlight_i5").cpu_variant


HOLD_LOG = """
Info: 2 Hold/min time violations (showing 10 worst paths):

Warning: Hold/min time violation for clock 'posedge $glbnet$sys_clk':
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source a_TRELLIS_FF_Q.Q

Warning: Hold/min time violation for path 'posedge host_spi_cs_n$TRELLIS_IO_IN' -> 'posedge $glbnet$sys_clk':
Info:       type curr  total name
"""


def test_parse_hold_violations():
    from tensorsoc.soc.bitstream import parse_hold_violations
    assert parse_hold_violations(NEXTPNR_LOG) == []
    assert parse_hold_violations(HOLD_LOG) == [
        "clock 'posedge $glbnet$sys_clk'",
        "path 'posedge host_spi_cs_n$TRELLIS_IO_IN' -> 'posedge $glbnet$sys_clk'"]


def test_hold_violation_fails_the_build(monkeypatch, capsys):
    """Every Fmax met but nextpnr lists a hold violation: the build fails
    and the report says which."""
    status, err, build_dir = fake_build(monkeypatch, capsys, "hold", fmax={"$glbnet$accel_clk": 80.0},
                                        log=HOLD_LOG)
    assert status == 1
    assert "hold violations on colorlight_i5: clock 'posedge $glbnet$sys_clk'" in err
    report = json.loads((build_dir / "report.json").read_text())
    assert report["timing_met"] is False and all(c["met"] for c in report["fmax"])
    assert len(report["hold_violations"]) == 2
    assert "hold        2 violation(s)" in (build_dir / "report.txt").read_text()


# router2's overused wires per iteration, shaped like the ULX3S builds of
# docs/fpga.md: one that converged (down to a few wires, hovering there for
# 80 iterations) and one that did not (fewest 762 at iteration 29, then
# growing).
CONVERGING = ([(i, int(50000 / i ** 1.6)) for i in range(1, 60)]
              + [(i, 2 + (i * 7) % 19) for i in range(60, 185)] + [(185, 0)])
DIVERGING = [(i, 762 + (29 - i) * 150) for i in range(1, 30)] + [(29 + k, 762 + 45 * k) for k in range(1, 60)]


def _router2_echo(iters):
    """Shell lines printing router2's iteration lines for [(iteration, overused wires)]."""
    return "".join(f"echo 'Info:     iter={i} wires=1 overused={o} overuse={o} archfail=NA'\n" for i, o in iters)


def test_router2_diverging():
    from tensorsoc.soc.bitstream import router2_diverging
    assert all(router2_diverging(CONVERGING[:n]) is None for n in range(1, len(CONVERGING) + 1))
    first = next(n for n in range(1, len(DIVERGING) + 1) if router2_diverging(DIVERGING[:n]))
    why = router2_diverging(DIVERGING[:first])
    # the fewest of the last 20 iterations passes twice the fewest so far
    assert DIVERGING[first - 20][1] > 2 * 762 >= DIVERGING[first - 21][1]
    assert "against 762 at iteration 29" in why and "not converging" in why
    # below the floor (the endgame of a converging run) nothing is stopped
    assert router2_diverging([(i, 10) for i in range(1, 40)] + [(i, 90) for i in range(40, 100)]) is None
    # ... unless it circles there: the fewest, 2 at iteration 412, not beaten for ROUTER2_STALL iterations
    from tensorsoc.soc.bitstream import ROUTER2_STALL
    circling = [(i, max(2, 400 - i)) for i in range(1, 413)] + [(i, 2 + i % 6) for i in range(413, 800)]
    first = next(n for n in range(1, len(circling) + 1) if router2_diverging(circling[:n]))
    assert circling[first - 1][0] == 398 + ROUTER2_STALL
    assert "2 at iteration 398" in router2_diverging(circling[:first])
    # a run that routes (0 overused wires) is never stopped by it
    assert router2_diverging([(i, max(0, 300 - i)) for i in range(1, 600)]) is None


def _router2_trace(name):
    """A recorded router2 run of tests/data/router2/: [(iteration, overused wires)]."""
    lines = (Path(__file__).parent / "data" / "router2" / f"{name}.txt").read_text().splitlines()
    return list(enumerate((int(v) for v in lines if not v.startswith("#")), start=1))


def test_router2_watchdog_on_the_25f_runs():
    """The Colorlight i5's 2 x 8 x 4 runs: the one that routed at iteration
    1,823 (its fewest stood 396 iterations, then rose past twice itself) and
    seed 2's, still converging at 400, are never stopped; router2 with its
    default weights is, as diverging.  With the ULX3S-shaped rules alone
    (a fixed 150-iteration stall, the factor rule at any iteration) the
    routed run was stopped at iteration 587."""
    from tensorsoc.soc.bitstream import router2_diverging
    for name in ("i5_2x8x4_seed1_routed", "i5_2x8x4_seed2_stopped"):
        run = _router2_trace(name)
        assert all(router2_diverging(run[:n]) is None for n in range(1, len(run) + 1)), name
    routed = _router2_trace("i5_2x8x4_seed1_routed")
    assert routed[-1] == (1823, 0)
    old_rules = dict(early=10 ** 9, stall=150, floor=10 ** 9)
    assert next(n for n in range(1, len(routed)) if router2_diverging(routed[:n], **old_rules)) == 587
    run = _router2_trace("i5_2x8x4_default_weights")
    first = next(n for n in range(1, len(run) + 1) if router2_diverging(run[:n]))
    assert run[first - 1][0] == 49 and "against 1661 at iteration 20" in router2_diverging(run[:first])
    # a fewest above the floor with no new one in the run's second half is a stall
    flat = [(i, max(500, 3000 - 10 * i)) for i in range(1, 700)]
    first = next(n for n in range(1, len(flat) + 1) if router2_diverging(flat[:n]))
    assert flat[first - 1][0] == 250 + 250 and "500 at iteration 250" in router2_diverging(flat[:first])


def test_tmg_ripup_stalled():
    """--tmg-ripup's rip-up after the design routed: stopped when its
    failing arcs stay flat for TMG_RIPUP_PATIENCE iterations (seed 5 of
    docs/fpga.md's builds), not while they fall or before the design routes."""
    from tensorsoc.soc.bitstream import FlowWatch, TMG_RIPUP_PATIENCE as P, tmg_ripup_stalled
    congesting = [(i, 500 - i, 0) for i in range(1, 200)]
    assert tmg_ripup_stalled(congesting) is None
    routed_at = 189
    flat = ([(i, 300 - i, 0) for i in range(1, routed_at)]
            + [(i, i % 3 if i > routed_at else 0, 266 + i % 12) for i in range(routed_at, 500)])
    first = next(n for n in range(1, len(flat) + 1) if tmg_ripup_stalled(flat[:n]))
    # the fewest failing arcs (266) first at iteration 192, then never fewer
    assert flat[first - 1][0] == 192 + P
    why = tmg_ripup_stalled(flat[:first])
    assert f"routed at iteration {routed_at}" in why and "at least 266 arcs" in why and "--tmg-ripup" in why
    # still improving: one fewer failing arc every 10 iterations
    falling = [(i, 0, 400 - (i - routed_at) // 10) for i in range(routed_at, routed_at + 300)]
    assert all(tmg_ripup_stalled(falling[:n]) is None for n in range(1, len(falling) + 1))
    watch = FlowWatch()
    watch.feed("Info:     iter=190 wires=51 overused=0 overuse=0 tmgfail=271 archfail=NA\n"
               "Info:     iter=191 wires=51 overused=2 overuse=2 archfail=NA\n")
    assert watch.router == [(190, 0), (191, 2)] and watch.tmg == [(190, 0, 271)]


def test_flow_watch_follows_the_log():
    """The progress line follows yosys's steps, nextpnr's placement and
    router2's iterations, from a log read in pieces that split lines."""
    from tensorsoc.soc.bitstream import FlowWatch
    log = ("1. Executing Verilog-2005 frontend: tensorsoc.v\n"
           "5.47.18.5. Executing ABC9.\n"
           "Info: Packing IOs..\n"
           "Info: Running main analytical placer, max placement attempts per cell = 1.\n"
           "Info:     at iteration #7, type ALL: wirelen solved = 1, spread = 2, legal = 3; time = 8.79s\n"
           "Info: Running simulated annealing placer for refinement.\n"
           "Info:   at iteration #5: temp = 0.000000, timing cost = 1, wirelen = 2\n"
           "Info: Running router2...\n"
           "Info:     iter=1 wires=664404 overused=50883 overuse=60622 archfail=NA\n"
           "Info:     iter=2 wires=681423 overused=32425 overuse=35011 archfail=NA\n"
           "Info:     iter=3 wires=689310 overused=40539 overuse=41199 archfail=NA\n"
           "Info: Program finished normally.\n")
    marks = {"ABC9.": "yosys 5.47.18.5 ABC9", "IOs..": "nextpnr packing",
             "= 8.79s": "nextpnr placing (HeAP iteration 7)",
             "wirelen = 2": "nextpnr refining the placement (iteration 5)",
             "overuse=41199 archfail=NA": "nextpnr routing, router2 iteration 3: 40539 overused wires "
                                          "(fewest 32425, at iteration 2)",
             "normally.": "ecppack"}
    watch = FlowWatch()
    pos = 0
    for mark, status in marks.items():
        end = log.index(mark) + len(mark) + 1        # through the newline
        watch.feed(log[pos:end - 5])                 # a piece ending mid-line: not read yet
        watch.feed(log[end - 5:end])
        pos = end
        assert watch.status() == status
    assert watch.router == [(1, 50883), (2, 32425), (3, 40539)]


def test_flow_watch_follows_router1():
    """router1's table: the arcs left, of those to route."""
    from tensorsoc.soc.bitstream import FlowWatch
    watch = FlowWatch()
    watch.feed("Info: Packing IOs..\n"
               "Info: Routing globals...\n"
               "Info: Routing..\n"
               "Info: Setting up routing queue.\n"
               "Info: Routing 68854 arcs.\n"
               "Info:            |   (re-)routed arcs  |   delta    | remaining|       time spent     |\n"
               "Info:    IterCnt |  w/ripup   wo/ripup |  w/r  wo/r |      arcs| batch(sec) total(sec)|\n"
               "Info:       1000 |       45        954 |   45   954 |     67965|       1.83       1.83|\n"
               "Info:       2000 |       81       1918 |   36   964 |     67015|       0.51       2.34|\n")
    assert watch.status() == "nextpnr routing, router1: 67015 of 68854 arcs left after 2000 iterations " \
                             "(81 ripped up)"
    assert watch.router == []


def test_diverging_router_stops_the_build(monkeypatch):
    """The tools' script prints a diverging router2 and would run on for a
    minute: the build stops it with an error naming the iterations and the
    fix, unless --keep-routing."""
    from tensorsoc.soc import bitstream
    from tensorsoc.soc.builder import BuildError
    monkeypatch.setattr(bitstream, "POLL_S", 0.05)
    build = bitstream.BoardBuild(get("colorlight_i5"), build_dir=BUILD / "router2-stop")
    build.gateware_dir.mkdir(parents=True, exist_ok=True)
    build.bin_dir.mkdir(parents=True, exist_ok=True)
    lines = _router2_echo(DIVERGING)
    pid_file = build.gateware_dir / "tools.pid"
    pid_file.unlink(missing_ok=True)
    # the script's shell records its pid first, then becomes a 2-minute sleep (not stopped: the build would end without the error)
    (build.gateware_dir / f"build_{bitstream.TOP}.sh").write_text(
        f"echo $$ > {pid_file.name}\n" + lines + "exec sleep 120\n")
    with pytest.raises(BuildError, match=r"router2 is not converging: .* try another --seed"):
        build.run_tools()
    with pytest.raises(ProcessLookupError):    # stopped and reaped, not waited for
        os.kill(int(pid_file.read_text()), 0)
    assert "overused=762" in build.log_file.read_text()
    # --keep-routing: the same script runs to its end (cut short here)
    (build.gateware_dir / f"build_{bitstream.TOP}.sh").write_text(lines + "exit 3\n")
    build.keep_routing = True
    with pytest.raises(BuildError, match=r"the FPGA tools failed \(exit 3"):
        build.run_tools()


def _run_tools_code(build_dir, prelude=""):
    """The Python code of a process that runs the Colorlight i5 build's
    ``run_tools`` in ``build_dir`` (its gateware/build_tensorsoc.sh), after
    ``prelude``."""
    return (prelude + "from tensorsoc.soc import bitstream\n"
            "from tensorsoc.soc.targets import get\n"
            f"b = bitstream.BoardBuild(get('colorlight_i5'), build_dir={str(build_dir)!r})\n"
            "b.bin_dir.mkdir(parents=True, exist_ok=True)\n"
            "b.run_tools()\n")


def _assert_stopped(pid):
    """Process ``pid`` is gone within five seconds (stopped, and reaped)."""
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)


def test_terminated_build_stops_its_tools():
    """A SIGTERM to `tsoc bitstream` (kill, a CI timeout) stops the tools
    too: they run in a session of their own and would otherwise go on."""
    import signal
    import subprocess
    import sys
    build_dir = BUILD / "sigterm"
    gw = build_dir / "gateware"
    gw.mkdir(parents=True, exist_ok=True)
    pid_file = gw / "tools.pid"
    pid_file.unlink(missing_ok=True)
    (gw / "build_tensorsoc.sh").write_text(f"echo $$ > {pid_file.name}\nexec sleep 120\n")
    proc = subprocess.Popen([sys.executable, "-c", _run_tools_code(build_dir)], cwd=ROOT)
    try:
        for _ in range(600):                       # the tools' shell has started (at most a minute)
            if pid_file.exists() and pid_file.read_text().strip():
                break
            assert proc.poll() is None, "run_tools ended before its tools started"
            time.sleep(0.1)
        tool_pid = int(pid_file.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        _assert_stopped(tool_pid)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_while_the_tools_start_stops_them():
    """A SIGTERM that comes while the tools are being started (here sent
    from inside subprocess.Popen, right after the tools' shell is created)
    stops them too: the handler is in place before they start, and holds
    the signal until run_tools knows them.  With the handler installed
    after the start, as before 2026-11-29, the signal killed the build and
    left the tools running; a loaded machine showed it in
    test_terminated_build_stops_its_tools."""
    import signal
    import subprocess
    import sys
    build_dir = BUILD / "sigterm_start"
    gw = build_dir / "gateware"
    gw.mkdir(parents=True, exist_ok=True)
    pid_file = gw / "tools.pid"
    pid_file.unlink(missing_ok=True)
    (gw / "build_tensorsoc.sh").write_text("exec sleep 120\n")
    prelude = ("import os, signal, subprocess\n"
               "real_popen = subprocess.Popen\n"
               "def popen(*args, **kwargs):\n"
               "    p = real_popen(*args, **kwargs)\n"
               f"    open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
               "    os.kill(os.getpid(), signal.SIGTERM)\n"
               "    return p\n"
               "subprocess.Popen = popen\n")
    proc = subprocess.Popen([sys.executable, "-c", _run_tools_code(build_dir, prelude)], cwd=ROOT)
    tool_pid = None
    try:
        assert proc.wait(timeout=120) == 128 + signal.SIGTERM
        tool_pid = int(pid_file.read_text())
        _assert_stopped(tool_pid)
    finally:
        if proc.poll() is None:
            proc.kill()
        if tool_pid is None and pid_file.exists() and pid_file.read_text().strip():
            tool_pid = int(pid_file.read_text())
        if tool_pid is not None:
            try:
                os.killpg(tool_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _seed_flow(name, diverging_seeds):
    """A board build whose tools are shell scripts in its bin/: LiteX's
    build script order (yosys, nextpnr-ecp5 --seed N, ecppack), a nextpnr
    that prints a diverging router2 at ``diverging_seeds`` (then would run
    for two minutes) and a converging one at the others."""
    from tensorsoc.soc import bitstream
    build = bitstream.BoardBuild(get("colorlight_i5"), build_dir=BUILD / name, seed=1)
    gw = build.gateware_dir
    gw.mkdir(parents=True, exist_ok=True)
    build.bin_dir.mkdir(parents=True, exist_ok=True)
    for f in gw.glob("*"):
        f.unlink()
    for f in build.build_dir.glob("build_seed*.log"):
        f.unlink()
    div = _router2_echo(DIVERGING)
    conv = _router2_echo(CONVERGING)
    tools = {
        "yosys": "echo yosys run >> runs.txt\necho '{}' > tensorsoc.json\n",
        "nextpnr-ecp5": ("seed=$(echo \"$@\" | sed 's/.*--seed \\([0-9]*\\).*/\\1/')\n"
                         "echo nextpnr seed $seed >> runs.txt\n"
                         f"echo 'nextpnr-ecp5 0 1 0' >> '{build.times_file}'\n"   # one second per run
                         f"case \" {' '.join(map(str, diverging_seeds))} \" in *\" $seed \"*)\n{div}exec sleep 120;;\nesac\n"
                         f"{conv}echo 'Info: Program finished normally.'\n"),
        "ecppack": "echo ecppack run >> runs.txt\ntouch tensorsoc.bit\n",
    }
    for tool, body in tools.items():
        (build.bin_dir / tool).write_text("#!/bin/sh\n" + body)
        (build.bin_dir / tool).chmod(0o755)
    (gw / f"build_{bitstream.TOP}.sh").write_text(
        "# Autogenerated by LiteX\nset -e\nyosys -l tensorsoc.rpt tensorsoc.ys\n"
        "nextpnr-ecp5 --json tensorsoc.json --lpf tensorsoc.lpf --textcfg tensorsoc.config --threads 1 "
        "--router router2 --25k --timing-allow-fail --seed 1 \n"
        "ecppack --compress tensorsoc.config --bit tensorsoc.bit\n")
    return build


def test_a_diverging_seed_is_retried_from_the_same_netlist(monkeypatch):
    """router2 diverges at seeds 1 and 2: the build keeps each stopped try's
    log, places and routes yosys's netlist again (yosys runs once) with the
    next seed, and ends with seed 3; the report names the seeds that
    diverged."""
    from tensorsoc.soc import bitstream
    monkeypatch.setattr(bitstream, "POLL_S", 0.05)
    build = _seed_flow("seed-retry", diverging_seeds=(1, 2))
    stale = build.build_dir / "build_seed7.log"        # an earlier build's try: removed
    stale.write_text("old\n")
    build.seed_tries = 3
    logged = []
    build.log = logged.append
    times = build.run_seeds()
    gw = build.gateware_dir
    assert (gw / "runs.txt").read_text().split("\n") == [
        "yosys run", "nextpnr seed 1", "nextpnr seed 2", "nextpnr seed 3", "ecppack run", ""]
    assert build.seed == 3
    assert [s for s, _ in build.seeds_diverged] == [1, 2]
    assert all("not converging" in why for _, why in build.seeds_diverged)
    for seed in (1, 2):
        assert "overused=762" in (build.build_dir / f"build_seed{seed}.log").read_text()
    assert "Program finished normally" in build.log_file.read_text()
    assert not stale.exists()
    assert "--seed 3" in (gw / "pnr_tensorsoc.sh").read_text() and "yosys" not in (gw / "pnr_tensorsoc.sh").read_text()
    assert any("with seed 2 (try 2 of 3" in m for m in logged)
    assert any("routed with seed 3" in m and "seed=3" in m for m in logged)
    assert times["nextpnr-ecp5"] == 3.0                # the run times of all three tries
    report = bitstream.Report(board="b", device="d", config={"np": 1, "nt": 1, "vw": 1, "main_ram_size": 0,
                                                               "rom_size": 0, "sram_size": 0},
                              clocks_mhz={}, utilisation={}, fmax=[], seed=build.seed,
                              seeds_diverged=build.seeds_diverged)
    assert "seed 3, router2 (router2 diverged at seeds 1, 2)" in report.text()
    report.seeds_diverged = build.seeds_diverged[:1]
    assert "seed 3, router2 (router2 diverged at seed 1)\n" in report.text()
    assert report.as_dict()["seeds_diverged"][0][0] == 1


def test_the_seed_tries_run_out(monkeypatch):
    """Every seed diverges: after --seed-tries seeds the build fails, naming
    them and the next seed to try; with one try it fails as before."""
    from tensorsoc.soc import bitstream
    from tensorsoc.soc.builder import BuildError
    monkeypatch.setattr(bitstream, "POLL_S", 0.05)
    build = _seed_flow("seed-out", diverging_seeds=(1, 2))
    build.seed_tries = 2
    build.log = lambda m: None
    with pytest.raises(BuildError, match=r"diverged at each of the 2 seeds tried \(1, 2\).*--seed 3 --seed-tries"):
        build.run_seeds()
    build = _seed_flow("seed-one", diverging_seeds=(1,))
    build.log = lambda m: None
    with pytest.raises(bitstream.RoutingDiverged, match=r"try another --seed"):
        build.run_seeds()
    assert (build.gateware_dir / "runs.txt").read_text().count("nextpnr") == 1
    with pytest.raises(BuildError, match="--seed-tries 0: at least 1"):
        bitstream.BoardBuild(get("colorlight_i5"), build_dir=BUILD / "seed-zero", seed_tries=0)


def test_target_nextpnr_args_come_first_and_a_given_option_replaces_its_own():
    """A target's nextpnr options (BoardTarget.nextpnr_args) reach nextpnr
    before --nextpnr-arg; an option given again replaces the target's, value
    and all, whichever way its value is written; the flow's own options are
    refused from the target as from the command line."""
    from tensorsoc.soc import bitstream
    from tensorsoc.soc.builder import BuildError
    own = ("--tmg-ripup", "--placer-heap-timingweight", "30")
    merge = bitstream.merge_nextpnr_args
    assert merge(own, []) == list(own)
    assert merge(own, ["--placer-heap-timingweight", "10"]) == ["--tmg-ripup", "--placer-heap-timingweight", "10"]
    assert merge(own, ["--placer-heap-timingweight=10"]) == ["--tmg-ripup", "--placer-heap-timingweight=10"]
    assert merge(own, ["--router2-heatmap", "heat map"]) == [*own, "--router2-heatmap", "heat map"]
    target = dataclasses.replace(get("colorlight_i5"), nextpnr_args=own)
    build = bitstream.BoardBuild(target, build_dir=BUILD / "target-nextpnr-args",
                                 nextpnr_args=["--placer-heap-timingweight=10"])
    assert build.nextpnr_args == ["--tmg-ripup", "--placer-heap-timingweight=10"]
    build = bitstream.BoardBuild(target, build_dir=BUILD / "target-nextpnr-args", nextpnr_args=["--router2-heatmap", "h"],
                                 target_nextpnr_args=False)
    assert build.nextpnr_args == ["--router2-heatmap", "h"]
    with pytest.raises(BuildError, match="the flow sets nextpnr's --seed itself"):
        bitstream.BoardBuild(dataclasses.replace(target, nextpnr_args=("--seed", "2")),
                             build_dir=BUILD / "target-nextpnr-args")


def test_lut_delay_target_maps_for_area(monkeypatch, capsys):
    """--lut-delay-target: synth_ecp5 is split around its LUT mapping,
    which runs abc9 with the delay target, and the report says so; a
    negative target is refused; without it, synth_ecp5 alone."""
    met = {"$glbnet$accel_clk": 80.0}
    status, err, build_dir = fake_build(monkeypatch, capsys, "lut-area", fmax=met,
                                        extra=["--lut-delay-target", "10000"])
    assert status == 0, err
    script = (build_dir / "gateware" / "tensorsoc.ys").read_text().splitlines()
    synth = [line for line in script if line.startswith("synth_ecp5")]
    assert [line.split()[-2:] for line in synth] == [["-run", ":map_luts"], ["-run", "map_cells:"]], synth
    first, second = script.index(synth[0]), script.index(synth[1])
    assert "abc9 -W 300 -D 10000" in script[first:second]
    assert script[second + 1].startswith("write_json")
    assert json.loads((build_dir / "report.json").read_text())["lut_delay_target"] == 10000
    assert "abc9 delay target 10000 ps" in (build_dir / "report.txt").read_text()
    # a target without a delay target of its own: synth_ecp5 alone
    from tensorsoc.soc.targets import TARGETS
    monkeypatch.setitem(TARGETS, "colorlight_i5", dataclasses.replace(TARGETS["colorlight_i5"], lut_delay_target=0))
    status, err, build_dir = fake_build(monkeypatch, capsys, "lut-default", fmax=met)
    assert status == 0, err
    synth = [line for line in (build_dir / "gateware" / "tensorsoc.ys").read_text().splitlines()
             if line.startswith("synth_ecp5")]
    assert len(synth) == 1 and "-run" not in synth[0] and "abc9" not in (build_dir / "gateware" / "tensorsoc.ys").read_text()
    status, err, _ = fake_build(monkeypatch, capsys, "lut-bad", extra=["--lut-delay-target", "-5"])
    assert status != 0 and "--lut-delay-target -5" in err
    # Without the option the target's own (BoardTarget.lut_delay_target); 0 overrides it.
    monkeypatch.setitem(TARGETS, "colorlight_i5", dataclasses.replace(TARGETS["colorlight_i5"], lut_delay_target=12000))
    status, err, build_dir = fake_build(monkeypatch, capsys, "lut-target", fmax=met)
    assert status == 0, err
    assert json.loads((build_dir / "report.json").read_text())["lut_delay_target"] == 12000
    status, err, build_dir = fake_build(monkeypatch, capsys, "lut-target-off", fmax=met, extra=["--lut-delay-target", "0"])
    assert status == 0, err
    assert json.loads((build_dir / "report.json").read_text())["lut_delay_target"] == 0


def test_shared_bus_gaps_the_minimal_cpus_fetches(monkeypatch, capsys):
    """bus_shared=1 with the VexRiscv minimal (no instruction cache: its
    fetches would hold the shared bus) puts a FetchGap on its instruction
    bus; lite (with a cache) does not.  (Nor does the crossbar: the ULX3S
    and i5 targets' netlists are those of before the gap.)"""
    met = {"$glbnet$accel_clk": 80.0}
    for name, variant, shared, gap in (("shared-min", "minimal", 1, True), ("shared-lite", "lite", 1, False)):
        status, err, build_dir = fake_build(monkeypatch, capsys, name, fmax=met,
                                            extra=["--cpu-variant", variant, "--set", f"bus_shared={shared}"])
        assert status == 0, err
        assert ("ibus_gap" in (build_dir / "gateware" / "tensorsoc.v").read_text()) == gap, name
