"""The TensorEngine's LiteX integration: CSRs the runtime uses, the DMA
master, the PCORE array wiring (elaboration only; no simulation).  The cores
join a TensorSoC through its add_core, the one way a core is added."""

from tensorsoc.spec.config import SoCConfig


def _tensor_soc():
    """A bare TensorSoC (CPU, memories, UART, no accelerator yet)."""
    from tensorsoc.soc.platforms.sim import SimPlatform
    from tensorsoc.soc.tensorsoc import TensorSoC
    return TensorSoC(SimPlatform(), SoCConfig(), uart_name="sim")


def test_add_tensor_engine_to_the_soc(tmp_path):
    from tensorsoc.cores.tensor_engine.core import TensorEngine, add_tensor_engine

    soc = _tensor_soc()
    config = SoCConfig()
    engine, array = add_tensor_engine(soc, config, pcore_origin=0x9000_0000, build_dir=tmp_path)
    assert isinstance(engine, TensorEngine) and soc.tensor_engine is engine and soc.pcore is array
    assert "tensor_engine_master0" in soc.bus.masters
    assert soc.bus.regions["pcore"].origin == 0x9000_0000
    soc.finalize()
    csrs = {c.name for c in engine.get_csrs()}
    assert {"queue", "queue_space", "callback", "errors", "status"} <= csrs
    assert {"tensor_engine", "pcore"} <= set(soc.csr.regions)
    verilog = str(soc.platform.get_verilog(soc))
    assert "tensor_engine" in verilog and verilog.count("tsoc_pcore_lane lane") == config.np * config.vw


def test_litex_runtime_uses_the_engine_csrs():
    """sw/runtime/platform/litex.c calls exactly the accessors LiteX generates
    for the engine's CSRs."""
    from pathlib import Path
    src = (Path(__file__).resolve().parents[1] / "sw" / "runtime" / "platform" / "litex.c").read_text()
    for acc in ("tensor_engine_queue_write", "tensor_engine_queue_space_read", "tensor_engine_callback_read"):
        assert acc in src


def test_add_tensor_engine_fetch_to_the_soc(tmp_path):
    """The instruction fetch (cores/tensor_engine/fetch.py): its CSRs, its bus
    master, wired to the engine's queue and the PCORE instruction memory."""
    from tensorsoc.cores.tensor_engine.core import add_tensor_engine
    from tensorsoc.cores.tensor_engine.fetch import TEFetch, add_tensor_engine_fetch

    soc = _tensor_soc()
    engine, array = add_tensor_engine(soc, SoCConfig(), pcore_origin=0x9000_0000, build_dir=tmp_path)
    fetch = add_tensor_engine_fetch(soc, engine, array)
    assert isinstance(fetch, TEFetch) and "tensor_engine_fetch_master0" in soc.bus.masters
    soc.finalize()
    csrs = {c.name for c in fetch.get_csrs()}
    assert {"address", "length", "control", "status"} <= csrs
    assert all(c.description for c in fetch.get_csrs() if not hasattr(c, "fields") or not c.fields.fields)
    verilog = str(soc.platform.get_verilog(soc))
    assert "tensor_engine_fetch" in verilog


def test_firmware_uses_the_fetch_when_present():
    """sw/firmware/accel.c feeds the program and the kernel code by the fetch's
    DMA when the SoC has it, the CSR path otherwise."""
    from pathlib import Path
    src = (Path(__file__).resolve().parents[1] / "sw" / "firmware" / "accel.c").read_text()
    assert "CSR_TENSOR_ENGINE_FETCH_BASE" in src and "tensor_engine_queue_write" in src
    for acc in ("tensor_engine_fetch_address_write", "tensor_engine_fetch_length_write",
                "tensor_engine_fetch_control_write", "tensor_engine_fetch_status_read"):
        assert acc in src
