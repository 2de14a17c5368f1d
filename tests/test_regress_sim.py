"""The UVM regression on the simulated SoC: the short tier `make test` runs,
proof that the regression can fail, and the HTML report read by a real
browser (headless Debian Chromium)."""

import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tensorsoc.soc.builder import ROOT

from conftest import SOC_BUILD_DIR

pytestmark = pytest.mark.sim

OUT = ROOT / "build" / "regress"
CHROMIUM = "/usr/bin/chromium"


def regress(*args):
    from tensorsoc.cli import main
    return main(["regress", "-j", "2", "--no-waves-on-fail", "--build-dir", str(SOC_BUILD_DIR), *args])


def junit_cases(out):
    return ET.parse(out / "junit.xml").getroot().findall(".//testcase")


@pytest.fixture(scope="module")
def short_tier():
    """The short regression tier: one test of each class, SPI and QPI."""
    out = OUT / "test-short"
    shutil.rmtree(out, ignore_errors=True)
    status = regress("--seed", "11", "-n", "4", "--out", str(out))
    return status, out


def test_short_tier_passes(short_tier):
    status, out = short_tier
    cases = junit_cases(out)
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert status == 0 and len(cases) == 4 and not failed, f"failed: {failed}; see {out / 'report.html'}"
    summary = (out / "coverage.txt").read_text()
    hit, total = map(int, summary.split("command x outcome x mode")[1].split("bins hit")[0].split("]")[1].split("/"))
    assert total > 100 and hit >= 20, summary
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert int(props["cycles"]) > 10_000, props          # every test booted and ran


@pytest.fixture(scope="module")
def fault_run():
    """ErrorInjectionTest with a flipped bit in one predicted result (the
    first RID's data): (exit status, its JUnit case, the report's re-run
    arguments)."""
    out = OUT / "test-fault"
    shutil.rmtree(out, ignore_errors=True)
    status = regress("--seed", "3", "-n", "1", "--tests", "ErrorInjectionTest", "--inject-fault", "RID:0",
                     "--out", str(out))
    [case] = junit_cases(out)
    html = (out / "report.html").read_text()
    rerun = html.split("<code class='rerun'>")[1].split("</code>")[0]
    return status, case, rerun


def test_regression_can_fail(fault_run):
    """The flipped bit is caught by the scoreboard: non-zero exit, a JUnit
    failure naming the mismatch, the report's re-run command names the test
    and the fault.  (The short tier above passes an ErrorInjectionTest
    without a fault; the same seed's test passing without it is in the long
    tier: test_the_same_test_without_the_fault_passes.)"""
    status, case, rerun = fault_run
    assert status == 1
    failure = case.find("failure")
    assert failure is not None and "RID" in failure.get("message") and "expected 0x32" in failure.get("message")
    assert rerun.startswith(".venv/bin/tsoc regress --rerun ErrorInjectionTest/") and "--inject-fault RID:0" in rerun


@pytest.mark.long
def test_the_same_test_without_the_fault_passes(fault_run):
    """The report's re-run command without the fault passes, so the failure
    came from the flipped bit (long tier: a second regression run)."""
    _, _, rerun = fault_run
    args = rerun.split()[2:]
    assert regress(args[0], args[1], "--out", str(OUT / "test-fault-clean")) == 0


@pytest.mark.long
def test_rerun_command_reproduces_the_failure(fault_run):
    """The report's re-run command, fault included, fails again (long tier:
    a third regression run)."""
    _, _, rerun = fault_run
    assert regress(*rerun.split()[2:], "--out", str(OUT / "test-fault-rerun")) == 1


@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="Debian chromium is not installed (make test and make regress install it: apt-get install chromium)")
def test_report_in_headless_chromium(short_tier):
    _, out = short_tier
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
                              (out / "report.html").as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
    assert "PASS: 4 of 4 tests passed" in dom
    assert "id=\"seed\">11<" in dom
    assert dom.count("<tr class=\"pass\">") == 4
    assert "command x outcome x mode" in dom and "op x kernel x stride x padding" in dom
    assert "<td>hit</td>" in dom and "<td>not hit</td>" in dom
    assert "firmware expectation" in dom
