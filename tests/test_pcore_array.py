"""cocotb + Verilator tests of the PCORE array (verification/pcore/test_array.py):
every kernel bit-exact against the numpy reference and the ISS, with data laid
out as the TensorEngine lays it out; hardware counters against the ISS cycle
model; EXE_LOCKSTEP limits; TensorEngine access to the idle process space;
Wishbone control.  TSOC_PCORE_SWEEP=1 adds a second geometry."""

import os

import pytest

from tensorsoc.spec.config import SoCConfig


@pytest.mark.sim
def test_array_default_config():
    from tensorsoc.verification.pcore.run import run
    tests, fails, results = run(SoCConfig())
    assert tests >= 4 and fails == 0, f"{fails} of {tests} failed: see {results}"


@pytest.mark.sim
@pytest.mark.skipif(not os.environ.get("TSOC_PCORE_SWEEP"), reason="set TSOC_PCORE_SWEEP=1 for the geometry sweep")
@pytest.mark.parametrize("geometry", [dict(np=2, nt=2, vw=4),
                                      dict(np=8, nt=16, vw=8)])
def test_array_other_geometry(geometry):
    from tensorsoc.verification.pcore.run import run
    tests, fails, results = run(SoCConfig().with_overrides(**geometry))
    assert tests >= 4 and fails == 0, f"{fails} of {tests} failed: see {results}"


def test_add_pcore_array_to_a_litex_soc(tmp_path):
    """The SoC helper: a Wishbone slave region, the lane Verilog as a source."""
    from litex.build.generic_platform import Pins
    from litex.build.sim import SimPlatform
    from litex.soc.integration.soc_core import SoCMini
    from tensorsoc.cores.pcore.soc import PCOREArray, add_pcore_array

    from migen.genlib.io import CRG

    platform = SimPlatform("sim", [("sys_clk", 0, Pins(1)), ("sys_rst", 0, Pins(1))])
    soc = SoCMini(platform, clk_freq=int(1e8))
    soc.crg = CRG(platform.request("sys_clk"))
    config = SoCConfig()
    array = add_pcore_array(soc, config, origin=0x9000_0000, build_dir=tmp_path)
    assert isinstance(array, PCOREArray)
    assert soc.bus.regions["pcore"].origin == 0x9000_0000
    assert soc.bus.regions["pcore"].size == array.size
    assert any(str(tmp_path) in src[0] for src in platform.sources)
    soc.finalize()
    verilog = str(platform.get_verilog(soc))
    assert verilog.count("tsoc_pcore_lane lane") == config.np * config.vw


def test_register_map_doc_is_current():
    from pathlib import Path
    from tensorsoc.cores.pcore.soc import register_table_markdown
    doc = (Path(__file__).resolve().parents[1] / "docs" / "pcore.md").read_text()
    assert register_table_markdown() in doc, "docs/pcore.md register table: regenerate from cores/pcore/soc.py"
