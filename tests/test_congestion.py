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
