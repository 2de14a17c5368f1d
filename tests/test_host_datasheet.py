"""The datasheet followed literally by a host written from the datasheet and
the textbook SPI modes alone (verification/soc/test_datasheet.py): mode 1
in SPI, QPI with MISO grounded throughout, and a mode-0 host's shifted read."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

CASES = ["spi_mode1_datasheet_cycles", "qpi_miso_grounded_datasheet_cycles", "spi_mode0_reads_shifted"]


def run(soc_build, name, env, testcase=None):
    from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test
    runner = cocotb_build(soc_build)
    results = Path(cocotb_test(runner, soc_build, "tensorsoc.verification.soc.test_datasheet",
                               soc_build.build_dir / f"datasheet_{name}.xml",
                               extra_env={"TSOC_HOST_PATH": "pins", **env}, testcase=testcase))
    cases = ET.parse(results).getroot().findall(".//testcase")
    failures = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failures, f"datasheet tests failed: {failures}; see {results}"
    return sorted(c.get("name") for c in cases)


def test_datasheet_followed_literally(soc_build):
    """At the datasheet's fastest SCLK, 50 MHz (the SoC at its 100 MHz)."""
    assert run(soc_build, "50mhz", {}) == sorted(CASES)


def test_datasheet_qpi_at_the_ulx3s_clocks(soc_build):
    """QPI (the tighter clock ratio) with the SoC at the ULX3S's clock and
    SCLK at the fastest that board supports (soc/targets/board.py)."""
    from tensorsoc.soc.targets import TARGETS
    sys_hz = TARGETS["ulx3s"].config.sys_clk_freq
    sclk_hz = TARGETS["ulx3s"].host_sclk_max("QPI")
    env = {"TSOC_SIM_SYS_PERIOD_NS": str(1e9 / sys_hz), "TSOC_DATASHEET_SCLK_NS": str(1e9 / sclk_hz)}
    assert run(soc_build, "ulx3s", env, testcase=["qpi_miso_grounded_datasheet_cycles"]) == \
        ["qpi_miso_grounded_datasheet_cycles"]
