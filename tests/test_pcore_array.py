"""cocotb + Verilator tests of the PCORE array (verification/pcore/test_array.py):
every kernel bit-exact against the numpy reference and the ISS, with data laid
out as the TensorEngine lays it out; hardware counters against the ISS cycle
model; EXE_LOCKSTEP limits; TensorEngine access to the idle process space;
the MCORE's side (CSRs, instruction memory over Wishbone).  TSOC_PCORE_SWEEP=1 adds a second geometry."""

import os

import pytest

from tensorsoc.spec.config import SoCConfig


@pytest.mark.sim
def test_array_default_config():
    from tensorsoc.verification.pcore.run import run
    tests, fails, results = run(SoCConfig())
    assert tests >= 4 and fails == 0, f"{fails} of {tests} failed: see {results}"


@pytest.mark.sim
@pytest.mark.parametrize("geometry", [dict(np=2, nt=8, vw=8, pcore_round_share=4)], ids=["2x8x8_share4"])
def test_array_shared_rounders(geometry):
    """Lanes that share their rounding shifter (two rounders of four lanes
    per PCORE): every kernel, the random programs and the cycle counters
    against the ISS, whose slots of mul, asr and accr take four clocks."""
    from tensorsoc.verification.pcore.run import run
    tests, fails, results = run(SoCConfig().with_overrides(**geometry))
    assert tests >= 4 and fails == 0, f"{fails} of {tests} failed: see {results}"


@pytest.mark.sim
@pytest.mark.skipif(not os.environ.get("TSOC_PCORE_SWEEP"), reason="set TSOC_PCORE_SWEEP=1 for the geometry sweep")
@pytest.mark.parametrize("geometry", [dict(np=2, nt=2, vw=4),
                                      dict(np=8, nt=16, vw=8)])
def test_array_other_geometry(geometry):
    from tensorsoc.verification.pcore.run import run
    tests, fails, results = run(SoCConfig().with_overrides(**geometry))
    assert tests >= 4 and fails == 0, f"{fails} of {tests} failed: see {results}"


def _tensor_soc():
    """A bare TensorSoC (CPU, memories, UART): the SoC every core joins through add_core."""
    from tensorsoc.soc.platforms.sim import SimPlatform
    from tensorsoc.soc.tensorsoc import TensorSoC
    return TensorSoC(SimPlatform(), SoCConfig(), uart_name="sim")


def test_add_pcore_array_to_the_soc(tmp_path):
    """The SoC helper: CSR bank pcore, the instruction memory as a Wishbone
    region, the lane Verilog as a source."""
    from tensorsoc.cores.pcore.soc import PCOREArray, add_pcore_array

    soc = _tensor_soc()
    config = SoCConfig()
    array = add_pcore_array(soc, config, origin=0x9000_0000, build_dir=tmp_path)
    assert isinstance(array, PCOREArray) and soc.pcore is array
    assert soc.bus.regions["pcore"].origin == 0x9000_0000
    assert soc.bus.regions["pcore"].size == array.size == 4 * config.pcore_imem_words
    assert any(str(tmp_path) in src[0] for src in soc.platform.sources)
    soc.finalize()
    assert "pcore" in soc.csr.regions
    assert [c.name for c in soc.csr.regions["pcore"].obj] == [
        "info", "meminfo", "imeminfo", "func", "start", "status", "cycles", "vops", "macs"]
    verilog = str(soc.platform.get_verilog(soc))
    assert verilog.count("tsoc_pcore_lane lane") == config.np * config.vw


def test_the_lean_register_options():
    """SoCConfig.pcore_stats=0: no CYCLES, VOPS, MACS (the others keep
    their offsets); csr_readback=0: FUNC and START are write-only (they
    read as 0, cores/csr_storage.py)."""
    from litex.soc.interconnect.csr import CSRStorage
    from tensorsoc.cores.csr_storage import WriteOnlyStorage
    from tensorsoc.cores.pcore.soc import PCOREArray
    lean = PCOREArray(SoCConfig(pcore_stats=0, csr_readback=0)).get_csrs()
    assert [c.name for c in lean] == ["info", "meminfo", "imeminfo", "func", "start", "status"]
    assert {c.name for c in lean if isinstance(c, WriteOnlyStorage)} == {"func", "start"}
    full = PCOREArray(SoCConfig()).get_csrs()
    assert not any(isinstance(c, WriteOnlyStorage) for c in full)
    assert {c.name for c in full if isinstance(c, CSRStorage)} == {"func", "start"}


def test_registers_are_documented_csrs():
    """Every register has a description, and every field of one with fields."""
    from litex.soc.interconnect.csr import CSRStatus, CSRStorage
    from tensorsoc.cores.pcore.soc import PCOREArray
    csrs = PCOREArray(SoCConfig()).get_csrs()
    assert csrs and all(isinstance(c, (CSRStatus, CSRStorage)) and c.description for c in csrs)
    for c in csrs:
        assert c.size <= 32, f"{c.name}: one CSR word each (the bank offsets of docs/pcore.md)"
        for f in getattr(c, "fields", None) and c.fields.fields or []:
            assert f.description, f"{c.name}.{f.name} has no description"


def test_nothing_uses_the_old_register_header():
    """The firmware reads the registers through LiteX's csr.h; the hand-made
    header and its word offsets are gone."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    src = (root / "sw" / "firmware" / "accel.c").read_text()
    assert "pcore_regs.h" not in src and "pcore_info_read()" in src and "pcore_imeminfo_read()" in src
    import tensorsoc.cores.pcore.soc as pcore_soc
    assert not hasattr(pcore_soc, "c_header") and not hasattr(pcore_soc, "REGISTERS")


def test_a_bench_that_did_not_finish_names_the_exception(tmp_path):
    """`tsoc bench pcore` at memory sizes a kernel does not fit: the
    simulation stops in the assembler; the report names that error (the
    last exception the log names, not the test's assertion) and the log."""
    from tensorsoc.verification.pcore.bench import _why_no_result
    log = tmp_path / "sim.log"
    log.write_text("     0.00ns INFO     cocotb  Running bench\n"
                   "    raise AsmError(self.path, self.lineno, self.text, msg)\n"
                   "  tensorsoc.sw.pcore.asm.AsmError: k.pcore:40: private memory exhausted: 'patch' needs 288\n"
                   "  AssertionError: 1 of 1 failed\n")
    why = _why_no_result(log)
    assert why.startswith("the bench did not finish: AsmError: k.pcore:40: private memory exhausted: 'patch' needs 288")
    assert str(log) in why
    assert "no exception in the log" in _why_no_result(tmp_path / "missing.log")
