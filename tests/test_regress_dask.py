"""`tsoc regress` on Dask distributed: a LocalCluster of two worker
processes runs a small regression while workers are killed in the middle of
tests (the KILL_HOOK fault hook).  The test whose worker died once is run
again and passes; the one whose workers died twice is reported as lost.
Neither is ever missing from a report."""

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest

from tensorsoc.soc.builder import ROOT
from tensorsoc.verification.regress import cluster
from tensorsoc.verification.regress import plan as P

from conftest import SOC_BUILD_DIR

pytestmark = pytest.mark.sim

OUT = ROOT / "build" / "regress"
SEED, N, TEST = 5, 2, "ModelTest"          # the cheapest class: about 10 s a test


@pytest.mark.long
def test_killed_workers_are_retried_or_reported_lost(monkeypatch, capsys):
    from tensorsoc.cli import main
    out = OUT / "test-dask"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    # The plan's first test loses its worker in the middle of the test once,
    # the second at both attempts.
    monkeypatch.setenv(cluster.KILL_HOOK, "1,2")
    status = main(["regress", "--seed", str(SEED), "-n", str(N), "--tests", TEST, "-j", "2", "--no-waves-on-fail",
                   "--build-dir", str(SOC_BUILD_DIR), "--out", str(out)])
    console = capsys.readouterr().out
    print(console)
    assert status == 1, "a lost test fails the regression"
    first, second = P.plan(SEED, N, (TEST,))

    results = {r["name"]: r for r in json.loads((out / "results.json").read_text())["results"]}
    assert set(results) == {first.name, second.name}
    retried, lost = results[first.name], results[second.name]
    assert retried["passed"] and retried["attempts"] == 2 and retried["cycles"] > 10_000, retried
    assert not lost["passed"] and lost["lost"] and lost["attempts"] == 2, lost
    assert lost["message"].startswith("lost: its worker died at each of its 2 attempt(s)")
    assert (out / "tests" / first.name / ".killed-worker-0").exists()
    assert {p.name for p in (out / "tests" / second.name).glob(".killed-worker-*")} == \
        {".killed-worker-0", ".killed-worker-1"}
    assert retried["tier"] == "model" and retried["host_path"] == "fast"

    cases = {c.get("name"): c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    assert set(cases) == {first.name, second.name}
    assert cases[first.name].find("failure") is None
    assert cases[second.name].find("failure").get("type") == "lost"
    props = {p.get("name"): p.get("value") for p in cases[first.name].iter("property")}
    assert props["tier"] == "model" and props["host_path"] == "fast" and props["attempts"] == "2"
    html = (out / "report.html").read_text()
    assert html.count("<td>PASS</td>") == 1 and html.count("<td>LOST</td>") == 1
    assert "(1 lost: their workers died)" in html
    assert json.loads((out / "coverage.json").read_text())["hits"]       # the retried test's coverage merged

    assert "simulator " in console and "shared: " + str(SOC_BUILD_DIR) in console
    assert f"{first.name}: attempt 2 on" in console and f"{second.name}: attempt 2 on" in console
    assert "LOST" in console and "model/fast" in console
    # The killed attempts' simulations ended with their workers (worker.py).
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert not left, f"simulations of killed workers still running: {left}"
