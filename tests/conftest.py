import pytest

from soc.builder import ROOT


@pytest.fixture(scope="session")
def soc_build():
    """The default-configuration simulation SoC, generated once per session
    under build/test/soc (headers, firmware, Verilog)."""
    from soc.builder import SimBuild
    from verification.soc.runner import build_lock
    build = SimBuild(build_dir=ROOT / "build" / "test" / "soc", log=lambda *_: None)
    with build_lock(build.build_dir):
        build.generate()
    return build


@pytest.fixture(scope="session")
def soc_simulator(soc_build):
    """soc_build with its Verilator harness binary built."""
    from verification.soc.runner import build_lock
    with build_lock(soc_build.build_dir):
        soc_build.build_simulator()
    return soc_build
