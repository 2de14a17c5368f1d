"""The whole SoC under pyuvm: the MCORE runs its ROM firmware in Verilator,
built through cocotb's Python runner."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim


def test_boot_memtest_uvm(soc_build):
    from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test
    runner = cocotb_build(soc_build)
    results = Path(cocotb_test(runner, soc_build, "tensorsoc.verification.soc.test_boot",
                               soc_build.build_dir / "boot_results.xml"))
    cases = ET.parse(results).getroot().findall(".//testcase")
    assert [c.get("name") for c in cases] == ["boot_memtest"]
    failures = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failures, f"UVM boot test failed: see {results}"
