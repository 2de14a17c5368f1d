"""soc/congestion.py (`tsoc bench congestion`): router2's heatmaps summed by
block, by signal and by region, on files written as nextpnr writes them."""

import pytest

from tensorsoc.soc import congestion
from tensorsoc.spec.errors import UserError


def _write(d, n, nets, grid):
    (d / f"heat_congestion_by_net_{n}.csv").write_text("".join(f"{k},{v}\n" for k, v in nets))
    (d / f"heat_congestion_by_coordinate_{n}.csv").write_text(
        "".join(",".join(str(v) for v in col) + ",\n" for col in grid))


def _grid(width, height, hot=None):
    """grid[x][y]: 1 everywhere, ``hot`` = (x, y, v) adds v at one tile."""
    g = [[1] * height for _ in range(width)]
    if hot:
        x, y, v = hot
        g[x][y] += v
    return g


@pytest.fixture
def heatmaps(tmp_path):
    nets = [("lane3.b_sat_LUT4_Z[7]", 40), ("lane3.b_sat[2]", 10),
            ("soc_pcore_array_core_pcore_m_b_LUT4_Z_1_A[3]", 30),
            ("soc_engine_tensorenginecore_src_gen_idx0[1]", 5),
            ("VexRiscv.decode_INSTRUCTION_LUT4_Z[4]", 7), ("$abc$123$auto", 3), ("quiet[0]", 0)]
    _write(tmp_path, 3, nets, _grid(24, 16, hot=(17, 9, 100)))
    _write(tmp_path, 4, nets, _grid(24, 16, hot=(17, 9, 100)))
    _write(tmp_path, 12, [("lane0.a[0]", 1)], _grid(24, 16))
    return tmp_path


def test_blocks_signals_and_regions(heatmaps):
    c, chosen = congestion.load(heatmaps, iterations="3-4")
    assert chosen == [3, 4]
    assert c.blocks["pcore_lanes"]["overuse"] == 2 * 50 and c.blocks["pcore_lanes"]["nets"] == 2   # distinct nets
    assert c.blocks["pcore"]["overuse"] == 60
    assert c.blocks["te_src_agen"]["overuse"] == 10
    assert c.blocks["cpu"]["overuse"] == 14
    assert c.total == 2 * (40 + 10 + 30 + 5 + 7 + 3)
    assert c.signals[("pcore_lanes", "lane3.b_sat")] == 100
    assert c.signals[("pcore", "soc_pcore_array_core_pcore_m_b")] == 60
    assert c.signals[("cpu", "VexRiscv.decode_INSTRUCTION")] == 14
    # the hot tile (17, 9) is in the region X 16..23, Y 8..15: 64 tiles of 2 plus 2 x 100
    regs = c.regions()
    assert regs[0] == (2 * 64 + 200, 16, 8)
    assert len(regs) == 3 * 2
    lines = c.region_lines(3)
    assert "chip 24 x 16 tiles" in lines[0] and "X 16..23, Y 8..15" in lines[1]


def test_the_last_iteration_by_default(heatmaps):
    c, chosen = congestion.load(heatmaps)
    assert chosen == [12] and c.total == 1 and c.blocks["pcore_lanes"]["overuse"] == 1


def test_errors_name_the_fix(heatmaps, tmp_path):
    with pytest.raises(UserError, match="no heatmap of those iterations here .there are 3..12."):
        congestion.load(heatmaps, iterations="5-9")
    with pytest.raises(UserError, match="expected N or A-B"):
        congestion.load(heatmaps, iterations="last")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="--router2-heatmap heat .tsoc bitstream ... --nextpnr-arg=--router2-heatmap"):
        congestion.load(empty)
    (heatmaps / "heat_congestion_by_net_20.csv").write_text("a,1\nbroken line\n")
    with pytest.raises(UserError, match=r"heat_congestion_by_net_20.csv, line 2: expected 'net,overused wires'"):
        congestion.load(heatmaps, iterations="20")


def test_cli(heatmaps, capsys):
    from tensorsoc.cli import main
    assert main(["bench", "congestion", str(heatmaps), "--iterations", "3-4", "--lines", "2"]) == 0
    out = capsys.readouterr().out
    assert "iterations 3..4 summed" in out
    assert out.index("pcore_lanes") < out.index("pcore ") < out.index("cpu")
    assert "lane3.b_sat" in out and "X 16..23, Y 8..15" in out


def test_families_sum_the_copies_of_a_signal(tmp_path):
    """The copies of a signal in every PCORE, lane and rounder (yosys names
    the instances of the second PCORE on ``lane3_1``) sum to one family;
    other signals stay apart."""
    nets = [("lane3.b_sat[1]", 10), ("lane3_1.b_sat_LUT4_Z[0]", 20), ("lane0_7.b_sat[3]", 5),
            ("lane3_1.a[0]", 7), ("rounder0_2.x[4]", 4), ("rounder1.x_LUT4_Z[0]", 6),
            ("pcore3_vregs.0.0_DOA0", 8), ("pcore0_vregs.0.1_DOB3", 2),
            ("soc_pcore_array_core_pcore2_tw_dat[5]", 3), ("soc_pcore_array_core_pcore5_tw_dat[1]", 1),
            ("soc_engine_tensorenginecore_bc_copy[0]", 9)]
    _write(tmp_path, 5, nets, _grid(16, 16))
    c, _ = congestion.load(tmp_path)
    fams = c.families()
    assert fams[("pcore_lanes", "lane*.b_sat")] == 35
    assert fams[("pcore_lanes", "lane*.a")] == 7
    assert fams[("pcore_lanes", "rounder*.x")] == 10
    assert fams[("pcore", "pcore*_vregs")] == 10
    assert fams[("pcore", "soc_pcore_array_core_pcore*_tw_dat")] == 4
    assert fams[("tensor_engine", "soc_engine_tensorenginecore_bc_copy")] == 9
    assert sum(fams.values()) == c.total
    # before folding, the lanes of the second PCORE are signals of their own
    assert c.signals[("pcore_lanes", "lane3_1.b_sat")] == 20
    lines = c.family_lines(2)
    assert "lane*.b_sat" in lines[0] and f"{100 * 35 / c.total:5.1f}%" in lines[0]


def test_cli_families(heatmaps, capsys):
    from tensorsoc.cli import main
    assert main(["bench", "congestion", str(heatmaps), "--iterations", "3-4", "--families"]) == 0
    out = capsys.readouterr().out
    assert "signal families" in out and "lane*.b_sat" in out
