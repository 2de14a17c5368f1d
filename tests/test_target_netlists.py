"""Each board target's seed belongs to one netlist (soc/targets/*.py,
``netlist_sha256``): nextpnr's placement depends on the netlist as much as
on the seed, and an innocent-looking change (a signal renamed by Migen's
tracer, a register added to a shared block) re-rolls both boards'
placements, after which the recorded seed may not route or meet timing
(docs/fpga.md, "Choosing a seed").  These tests make such a change
visible where it is made instead of at the next board build."""

import pytest

from tensorsoc.soc.bitstream import BoardBuild, netlist_digest
from tensorsoc.soc.targets import TARGETS

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_netlist_is_the_one_its_seed_was_chosen_for(name, tmp_path):
    target = TARGETS[name]
    assert target.netlist_sha256, f"{name}: no netlist_sha256 recorded beside seed {target.seed}"
    lines = []
    build = BoardBuild(target, build_dir=tmp_path / name, log=lines.append, seed=target.seed,
                       nextpnr_args=(), seed_tries=target.seed_tries, lut_delay_target=target.lut_delay_target)
    build.generate()
    assert build.netlist_sha256 == target.netlist_sha256, (
        f"{name}: the gateware, configuration or tool options changed, so nextpnr's placement at the "
        f"target's seed {target.seed} is a new one, which may not route or meet timing. Build the board "
        f"(`make bitstream BOARD={name}`: it tries up to {target.seed_tries} seeds and says which routed), "
        f"then record that seed and netlist_sha256=\"{build.netlist_sha256}\" in soc/targets/{name}.py "
        f"with the figures in docs/fpga.md. (If the change is not meant to touch the gateware, compare the "
        f"generated tensorsoc.v with the one before it.)")
    assert any(f"the one seed {target.seed} was chosen for" in ln for ln in lines), lines


def test_a_changed_netlist_is_reported(tmp_path):
    """`tsoc bitstream` at the target's seed with another configuration
    says the placement is a new one."""
    target = TARGETS["colorlight_i5"]
    lines = []
    build = BoardBuild(target, target.config.with_overrides(host_write_pipe=1), tmp_path / "b", log=lines.append,
                       seed=target.seed, seed_tries=3, lut_delay_target=target.lut_delay_target)
    build.generate()
    assert build.netlist_sha256 != target.netlist_sha256
    assert any(f"is not the one the target's seed {target.seed} was chosen for" in ln
               and "the build tries up to 3 seeds" in ln for ln in lines), lines


def test_digest_ignores_comments_and_the_seed(tmp_path):
    g = tmp_path
    (g / "tensorsoc.ys").write_text("synth_ecp5 -top tensorsoc\n")
    (g / "tensorsoc.lpf").write_text("FREQUENCY PORT \"clk\" 25.0 MHz;\n")

    def digest(verilog, seed=1):
        (g / "tensorsoc.v").write_text(verilog)
        (g / "build_tensorsoc.sh").write_text(f"set -e\nyosys tensorsoc.ys\nnextpnr-ecp5 --json tensorsoc.json "
                                              f"--25k --seed {seed} \n")
        return netlist_digest(g)

    base = digest("// Date : 2026-12-01 01:30:14\nmodule top(input a, output b);\nassign b = a;\nendmodule\n")
    assert digest("// Date : 2026-12-02 09:00:00\n\nmodule top(input a, output b);\n/* a\n tree */\n"
                  "assign b = a;\nendmodule\n", seed=17) == base
    assert digest("module top(input a, output b);\nassign b = ~a;\nendmodule\n") != base
    (g / "tensorsoc.lpf").write_text("FREQUENCY PORT \"clk\" 50.0 MHz;\n")
    assert digest("module top(input a, output b);\nassign b = a;\nendmodule\n") != base
