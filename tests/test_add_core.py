"""One way to add a core (issue 19): every core joins the SoC through
``TensorSoC.add_core`` (soc/tensorsoc.py); nothing else adds submodules, bus
slaves or bus masters."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_simulation_soc_adds_every_core_through_add_core(tmp_path, monkeypatch):
    from tensorsoc.soc.builder import make_sim_soc
    from tensorsoc.soc.tensorsoc import TensorSoC
    from tensorsoc.spec.config import DEFAULT
    added = []
    add_core = TensorSoC.add_core

    def spy(self, name, module, **kwargs):
        added.append(name)
        return add_core(self, name, module, **kwargs)
    monkeypatch.setattr(TensorSoC, "add_core", spy)
    soc = make_sim_soc(DEFAULT, gateware_dir=tmp_path)
    assert added == ["sim_ctrl", "sim_host", "host_port", "pcore", "tensor_engine", "tensor_engine_fetch"]
    assert all(getattr(soc, n) is not None for n in added)
    # The accelerator in its own clock domain joins as one core, "accel".
    added.clear()
    soc = make_sim_soc(DEFAULT.with_overrides(accel_clk_freq=73_000_000), gateware_dir=tmp_path)
    assert added == ["sim_ctrl", "sim_host", "host_port", "accel"]
    assert {"pcore", "accel_csr"} <= set(soc.bus.regions)
    # ... and its CSR banks stay in the accel domain's region after LiteX's
    # finalize (the SoC's own bank array does not take them too).
    soc.finalize()
    region = soc.bus.regions["accel_csr"]
    for bank in ("pcore", "tensor_engine", "tensor_engine_fetch"):
        assert region.origin <= soc.csr.regions[bank].origin < region.origin + region.size, bank
    assert set(soc.csr.regions) == {"ctrl", "host_port", "identifier_mem", "sim_ctrl", "timer0", "uart",
                                    "pcore", "tensor_engine", "tensor_engine_fetch"}


def test_no_other_way_to_add_a_core():
    """add_core is the only place of the project's code that calls LiteX's
    add_module / bus.add_slave / bus.add_master."""
    pattern = re.compile(r"\.add_module\(|\.add_slave\(|\.add_master\(|hasattr\(soc, \"add_core\"\)")
    found = []
    for pkg in ("cores", "soc", "sw", "spec", "tensorsoc", "verification"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for line in path.read_text().splitlines():
                if pattern.search(line):
                    found.append((str(path.relative_to(ROOT)), line.strip()))
    assert [p for p, _ in found] == ["soc/tensorsoc.py"] * 3, found
    src = (ROOT / "soc" / "tensorsoc.py").read_text()
    body = src[src.index("    def add_core("):src.index("\n    def ", src.index("    def add_core(") + 1)]
    assert all(line in body for _, line in found), "outside TensorSoC.add_core"
