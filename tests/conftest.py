import pytest

from soc.builder import ROOT


@pytest.fixture(scope="session")
def soc_build():
    """The default-configuration simulation SoC, generated once per session
    under build/test/soc (headers, firmware, Verilog)."""
    from soc.builder import SimBuild
    build = SimBuild(build_dir=ROOT / "build" / "test" / "soc", log=lambda *_: None)
    build.generate()
    return build


@pytest.fixture(scope="session")
def soc_simulator(soc_build):
    """soc_build with its Verilator harness binary built."""
    soc_build.build_simulator()
    return soc_build
