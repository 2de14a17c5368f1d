"""The SoC's host port through its pins: gateware + server firmware + host library."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim


def run_host_tests(soc_build, name, extra_env=None, testcase=None):
    from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test
    runner = cocotb_build(soc_build)
    results = Path(cocotb_test(runner, soc_build, "tensorsoc.verification.soc.test_host",
                               soc_build.build_dir / f"host_{name}.xml", extra_env=extra_env,
                               testcase=testcase))
    cases = ET.parse(results).getroot().findall(".//testcase")
    assert cases, f"no test ran: see {results}"
    failures = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failures, f"host-port tests failed: {failures}; see {results}"
    return cases


# Two host paths (docs/host_port.md, "Host paths"): the protocol tests drive
# the pins from Python, edge by edge (pins); the tests that move models and
# images run on the simulated master (fast: one Python step per 256-byte
# chunk, the same waveform on the pins), and a few protocol tests run there
# too, so that both paths meet the same device.  Tests that depend on the
# link mode run in both SPI and QPI.  Those that move many bytes whatever the
# mode (the largest example model, relu_cnn3's 25 KiB image and 4 KiB input;
# the WServer upload; the trace report, printed during a model run) run in
# QPI only, at 4 bits a clock.  The window overflow fills the whole model
# window: it runs on the builds with the compact memory sizes (64 KiB model
# window; the default's 8 MiB would take far too long): the Colorlight i5's
# accelerator build in `make test`, and the MSB-first build (long tier).
# `make regress` runs models and uploads in both modes.
PIN_BOTH = ["rid_and_spec", "protocol_errors", "inference_without_model", "model_tensor_inference",
            "chunk_sequence_errors", "busy_acquire_and_sensor", "wtensor_throughput"]
SPI_CASES = PIN_BOTH + ["host_path_switch"]     # one transport on both paths (the UVM env's)
QPI_CASES = PIN_BOTH
FAST_BOTH = ["rid_and_spec", "protocol_errors", "model_tensor_inference", "example_models_bit_exact"]
FAST_SPI_CASES = FAST_BOTH
FAST_QPI_CASES = FAST_BOTH + ["wserver_upload", "accelerator_trace_printed"]
MSB_CASES = ["rid_and_spec", "protocol_errors", "model_tensor_inference"]
MSB_QPI_CASES = MSB_CASES + ["oversize_model_and_window_bounds"]
MSB_FAST_QPI_CASES = MSB_CASES + ["example_models_bit_exact"]
ACCEL_CLK_FREQ = 137_000_000       # the second build's accelerator clock (sys: 100 MHz)
ACCEL_MODELS = "mlp,cnn_instructions,relu_cnn3"
SPI_MODELS = "mlp,cnn_instructions"
QPI_MODELS = "relu_cnn3"
# The Colorlight i5 target's VW = 4: cnn_instructions' stream padding (5) is
# for VW = 8 and does not compile there (nor LeNet-5's nor the default model's).
I5_MODELS = "mlp,relu_cnn3"
FAST = {"TSOC_HOST_PATH": "fast"}
PINS = {"TSOC_HOST_PATH": "pins"}

# The Colorlight i5's accelerator build (test_host_port_colorlight_i5_accelerator_build):
# no sensor port and no trace buffer, so its own cases for both.
I5_CASES = ["rid_and_spec", "acquire_without_sensor", "example_models_bit_exact", "accelerator_trace_printed",
            "oversize_model_and_window_bounds"]
# The i5 builds' runs: the fast path in QPI, the VW = 4 models.  The VexRiscv
# minimal has no caches and no multiplier: relu_cnn3's 27 KiB WModel did not
# finish within the tests' 20 ms, and the inferences take 1.25-1.57x the
# standard variant's cycles (the MLP in software 24x), so the device's waits
# are ten times the others'.
I5_ENV = {**FAST, "TSOC_HOST_QPI": "1", "TSOC_HOST_MODELS": I5_MODELS, "TSOC_HOST_TIMEOUT_SCALE": "10"}
# On the i5's SDRAM build, the MLP only (`make test`'s time): relu_cnn3,
# whose WModel alone takes the minimal CPU over 2 M clocks, runs on the
# build above.
I5_SDRAM_ENV = {**I5_ENV, "TSOC_HOST_MODELS": "mlp"}


def i5_build(dirname, sdram=None, **overrides):
    """A simulation build of the Colorlight i5 target's configuration (and
    CPU variant) with ``overrides``, at the simulation's sys clock (100 MHz:
    the fast path needs an SCLK period of an even number of sys clocks, and
    the tests' SCLK is 50 MHz, the i5's sys) and the compact memory sizes,
    in build/test/``dirname``."""
    from tensorsoc.soc.builder import ROOT, SimBuild
    from tensorsoc.soc.targets import get
    from tensorsoc.spec.config import COMPACT_MEMORY, DEFAULT
    target = get("colorlight_i5")
    config = target.config.with_overrides(sys_clk_freq=DEFAULT.sys_clk_freq, **COMPACT_MEMORY, **overrides)
    return SimBuild(config, ROOT / "build" / "test" / dirname, log=lambda *_: None, sdram=sdram,
                    cpu_variant=target.cpu_variant)


def test_every_host_test_runs():
    """No cocotb test of verification/soc/test_host.py is left out of both lists."""
    import ast
    src = (Path(__file__).resolve().parents[1] / "verification" / "soc" / "test_host.py").read_text()
    tests = {f.name for f in ast.walk(ast.parse(src)) if isinstance(f, ast.AsyncFunctionDef)
             and any("cocotb.test" in ast.unparse(d) for d in f.decorator_list)}
    assert tests == (set(SPI_CASES) | set(QPI_CASES) | set(FAST_SPI_CASES) | set(FAST_QPI_CASES)
                     | set(MSB_QPI_CASES) | set(I5_CASES))


# Each run: host path, link mode, the example models, the cocotb tests.
RUNS = {
    "spi": (PINS, {"TSOC_HOST_MODELS": SPI_MODELS}, SPI_CASES),
    "qpi": (PINS, {"TSOC_HOST_QPI": "1", "TSOC_HOST_MODELS": QPI_MODELS}, QPI_CASES),
    "fast_path_spi": (FAST, {"TSOC_HOST_MODELS": SPI_MODELS}, FAST_SPI_CASES),
    "fast_path_qpi": (FAST, {"TSOC_HOST_QPI": "1", "TSOC_HOST_MODELS": QPI_MODELS}, FAST_QPI_CASES),
}


@pytest.mark.parametrize("run", list(RUNS))
def test_host_port(soc_build, run):
    path, env, testcase = RUNS[run]
    cases = run_host_tests(soc_build, run, {**path, **env}, testcase=testcase)
    assert sorted(c.get("name") for c in cases) == sorted(testcase)


@pytest.mark.long
def test_host_port_msb_first_build():
    """A second SoC build: the MSB-first bit order (an option neither board
    uses), in SPI and QPI, with the compact memory sizes (the window-bound
    test fills its model window), and the accelerator in a clock domain of
    its own at 137 MHz beside sys at 100 MHz (an unrelated ratio;
    soc/accel_domain.py): its QPI run adds the example models, every layer
    on the accelerator and bit-exact, so the crossings carry the CSRs, the
    kernels, the weights and the results.  Long tier (187 s of one core):
    `make test` has the accelerator's own domain at the ULX3S's ratio
    (tests/test_board_soc.py), the crossing at unrelated ratios
    (tests/test_wishbone_cdc.py) and the window bounds on the i5 build."""
    from tensorsoc.soc.builder import ROOT, SimBuild
    from tensorsoc.spec.config import COMPACT_MEMORY, DEFAULT
    build = SimBuild(DEFAULT.with_overrides(host_msb_first=1, accel_clk_freq=ACCEL_CLK_FREQ, **COMPACT_MEMORY),
                     ROOT / "build" / "test" / "soc-msb", log=lambda *_: None)
    # MSB-first bit order on both paths: the fast path's master shifts LSB
    # first and its transport reorders the bits of each byte.
    for name, env, testcase in (("spi", PINS, MSB_CASES), ("qpi", {**PINS, "TSOC_HOST_QPI": "1"}, MSB_QPI_CASES),
                                ("fast_qpi", {**FAST, "TSOC_HOST_QPI": "1", "TSOC_HOST_MODELS": ACCEL_MODELS},
                                 MSB_FAST_QPI_CASES)):
        cases = run_host_tests(build, f"msb_{name}", env, testcase=testcase)
        assert sorted(c.get("name") for c in cases) == sorted(testcase)


def test_host_port_colorlight_i5_accelerator_build():
    """A third SoC build: the Colorlight i5 target's configuration
    (``soc/targets/colorlight_i5.py``: one PCORE of 8 threads x 4 lanes
    sharing one rounding shifter, four loop levels (two for a destination), no vector
    path, a 32-word instruction queue,
    no activity trace (the firmware says so under TE_TRACE),
    the VexRiscv ``minimal`` with the firmware compiled for rv32i, a 24 KiB
    ROM, one shared bus with the CPU's fetches gapped, no sensor port,
    write-only control registers that read as 0, no PCORE statistics
    registers, the address generators' checks from their registers),
    with the compact memory sizes: the example models
    through the fast path in QPI, every layer on the accelerator and
    bit-exact, and the model window's bounds (``i5_build``: at the
    simulation's sys clock)."""
    cases = run_host_tests(i5_build("soc-i5"), "i5_fast_qpi", I5_ENV, testcase=I5_CASES)
    assert sorted(c.get("name") for c in cases) == sorted(I5_CASES)


@pytest.mark.long
def test_host_port_two_pcores_of_one_process_space():
    """The i5's 8-MAC build, two PCOREs of one process space each and the
    host port's write queue from a register (`--set np=2 --set
    pcore_processes=1 --set host_write_pipe=1`, docs/fpga.md "One process
    space": the engine waits for every kernel, the model compiler runs the
    passes in turn): the example models through the fast path in QPI,
    every layer on the accelerator and bit-exact, RSpec's internal memory
    per tile that of one space.  Long tier, like the engine and the real
    array on one space (tests/test_te_engine.py): `make test` runs the
    compiler's programs for one space on the reference executor
    (tests/test_model_accel.py) and the write queue with its register
    (tests/test_host_write_queue.py)."""
    testcase = ["rid_and_spec", "example_models_bit_exact"]
    cases = run_host_tests(i5_build("soc-i5-np2p1", np=2, pcore_processes=1, host_write_pipe=1),
                           "i5_np2p1_fast_qpi", I5_ENV, testcase=testcase)
    assert sorted(c.get("name") for c in cases) == sorted(testcase)


def test_host_port_colorlight_i5_accelerator_on_its_sdram():
    """The i5 target's build as the board has it: main RAM in its SDRAM
    (LiteDRAM's controller and Wishbone bridge, no L2 cache, the SDRAM's
    timings; ``--sdram colorlight_i5``) on the shared bus, so main RAM
    answers through ``RegisteredResponse`` (soc/tensorsoc.py,
    ``register_main_ram_answers``): the example models through the fast
    path in QPI, the MLP on the accelerator and in software, bit-exact.
    (relu_cnn3 and the cases that peek the integrated main RAM run on the
    build above.)"""
    from tensorsoc.soc.builder import parse_sim_sdram
    build = i5_build("soc-i5-sdram", sdram=parse_sim_sdram("colorlight_i5"))
    testcase = ["rid_and_spec", "example_models_bit_exact"]
    cases = run_host_tests(build, "i5_sdram_fast_qpi", I5_SDRAM_ENV, testcase=testcase)
    assert sorted(c.get("name") for c in cases) == sorted(testcase)
    assert "main_ram_reg" in (build.gateware_dir / "tensorsoc.v").read_text()
