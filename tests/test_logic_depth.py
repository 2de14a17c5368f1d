"""soc/logic_depth.py (`tsoc bench depth`): arrival times on a small yosys
JSON netlist built here, cell by cell."""

import json

import pytest

from tensorsoc.soc import logic_depth as ld
from tensorsoc.spec.errors import UserError

IN, OUT = "input", "output"


def ff(d, q):
    return {"type": "TRELLIS_FF", "port_directions": {"CLK": IN, "DI": IN, "Q": OUT},
            "connections": {"CLK": [1], "DI": [d], "Q": [q]}}


def lut(a, z, b="0"):
    return {"type": "LUT4", "port_directions": {"A": IN, "B": IN, "C": IN, "D": IN, "Z": OUT},
            "connections": {"A": [a], "B": [b], "C": ["0"], "D": ["0"], "Z": [z]}}


def ccu(a0, cin, s0, cout):
    ports = {p: IN for p in ("A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1", "CIN")}
    ports.update(S0=OUT, S1=OUT, COUT=OUT)
    con = {p: ["0"] for p in ports}
    con.update(A0=[a0], CIN=[cin], S0=[s0], S1=[s0 + 1000], COUT=[cout])
    return {"type": "CCU2C", "port_directions": ports, "connections": con}


def bram_out(q):
    return {"type": "DP16KD", "port_directions": {"CLKA": IN, "ADA0": IN, "DOA0": OUT},
            "connections": {"CLKA": [1], "ADA0": ["0"], "DOA0": [q]}}


def bram_in(a):
    return {"type": "DP16KD", "port_directions": {"CLKA": IN, "ADA0": IN, "DOA0": OUT},
            "connections": {"CLKA": [1], "ADA0": [a], "DOA0": ["x"]}}


def netlist():
    cells = {
        # two memories' address inputs, one LUT after a flip-flop each
        "g": ff("0", 50), "l5": lut(50, 51), "storage_1.0.0": bram_in(51), "storage_2.0.0": bram_in(51),
        # three LUTs between two flip-flops
        "a": ff("0", 10), "l1": lut(10, 11), "l2": lut(11, 12), "l3": lut(12, 13), "b": ff(13, 14),
        # one LUT after a block RAM's output
        "ram": bram_out(20), "l4": lut(20, 21), "c": ff(21, 22),
        # a flip-flop into a two-cell carry chain
        "d": ff("0", 30), "k1": ccu(30, "0", 31, 32), "k2": ccu("0", 32, 33, 34), "e": ff(33, 35),
        # a combinational loop (two LUTs) into a flip-flop
        "m1": lut(40, 41, b=42), "m2": lut(41, 40), "f": ff(40, 43),
    }
    names = {"a_q": [10], "b_q": [14], "mid": [12], "ram_do": [20], "c_q": [22], "sum": [33], "loop": [40]}
    return {"cells": cells, "netnames": {n: {"bits": b} for n, b in names.items()}}


def test_arrival_times():
    d = ld.Depth(netlist())
    hop = ld.LUT_NS + ld.NET_NS
    assert d.time(13) == pytest.approx(ld.CLK_TO_Q + 3 * hop)
    assert d.time(21) == pytest.approx(ld.BRAM_CLK_TO_OUT + hop)
    # the carry into the second cell of the chain has no net delay
    assert d.time(33) == pytest.approx(ld.CLK_TO_Q + ld.NET_NS + ld.CARRY_NS["cout"] + ld.CARRY_NS["cin_sum"])
    assert d.path(13) == [10, 11, 12, 13]
    assert d.signal(10) == "a_q" and d.signal(12) == "mid"


def test_ranking_and_loops():
    d = ld.Depth(netlist())
    rows = d.deepest(10)
    ends = [cell for _, _, cell, _, _ in rows]
    # the block RAM's path first (its clock-to-out), then the three LUTs, ..
    assert ends[:2] == ["c", "b"], rows
    assert rows[1][1] == 3                       # cells through: three LUTs
    assert "f" in ends and d.loops >= 1          # the loop ends, counted
    # each memory is an end point of its own
    assert "storage_1.0.0" in ends and "storage_2.0.0" in ends
    times = [t for t, *_ in rows]
    assert times == sorted(times, reverse=True)


def test_command(tmp_path, capsys):
    from tensorsoc.cli import main
    path = tmp_path / "n.json"
    path.write_text(json.dumps({"modules": {"tensorsoc": netlist()}}))
    assert main(["bench", "depth", str(path), "--paths", "2"]) == 0
    out = capsys.readouterr().out
    assert "1." in out and "-> c.DI" in out and "2." in out and "-> b.DI" in out
    assert main(["bench", "depth", str(path), "--top", "nope"]) == 1
    assert "no module 'nope'" in capsys.readouterr().err
    with pytest.raises(UserError):
        ld._read(tmp_path / "missing.json", "tensorsoc")
