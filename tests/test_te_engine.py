"""The TensorEngine (cores/tensor_engine/) in Verilator against the reference
executor: constrained-random instructions over every memory space, data type
and out-of-bound case (TSOC_TE_RANDOM instructions, default 1500; TSOC_TE_SEED),
malformed instructions.  verification/te/ holds the cocotb side."""

import os

import pytest


@pytest.mark.sim
def test_engine_matches_the_executor():
    from tensorsoc.verification.te.run import run
    tests, fails, results = run(testcases=None)
    assert tests >= 2 and fails == 0, f"{fails} of {tests} failed: see {results}"


@pytest.mark.sim
@pytest.mark.long
def test_engine_checks_from_registers_with_the_vector_path():
    """SoCConfig.te_parallel_checks = 0 with the vector path (the default
    engine otherwise): the address generators' bound, overlap and range
    checks computed from their registers give the executor's results on
    both paths, chunk mode included.  (The i5's engine, without the vector
    path, runs in `make test`: test_engine_without_its_vector_path.)"""
    from tensorsoc.verification.te.run import run, test_config
    config = test_config().with_overrides(te_parallel_checks=0)
    tests, fails, results = run(config, testcases=["random_instructions", "overlap_offsets"])
    assert tests == 2 and fails == 0, f"see {results}"


@pytest.mark.sim
@pytest.mark.skipif(not os.environ.get("TSOC_TE_LONG"), reason="set TSOC_TE_LONG=1 for 20000 random instructions x 3 seeds")
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_engine_long_random(seed):
    from tensorsoc.verification.te.run import run
    tests, fails, results = run(testcases=["random_instructions"],
                                extra_env={"TSOC_TE_RANDOM": "20000", "TSOC_TE_SEED": str(seed)})
    assert tests == 1 and fails == 0, f"seed {seed}: see {results}"


@pytest.mark.sim
def test_engine_without_its_vector_path():
    """SoCConfig.te_vector_path = 0 (the smallest FPGAs' engine), with the
    shallowest instruction queue (te_queue_depth = 16, so the bench's
    writer waits for room on most instructions) and no activity trace
    (te_trace_depth = 0), two destination loop levels (te_dst_levels = 2,
    under the source's four) and no destination overlap (te_dst_overlap =
    0; the Colorlight i5's candidate engine) and overlap offsets of 16
    bits (te_ovl_bits = 16, the fewest; the i5 takes 24), the address
    generators' checks from their registers (te_parallel_checks = 0, as
    the i5's): the random
    instructions give the executor's results with every transfer on the
    element path (the test asserts that no transfer took the vector path)
    and with overlap offsets that wrap (the stimulus crosses the wrap; the
    test asserts that it did; ``overlap_offsets`` crosses it on purpose and
    gives limits beyond the width), LOG_ON records nothing, and a destination
    of three levels or with an overlap group sets DECODE where a source of
    four executes."""
    from tensorsoc.verification.te.run import run, test_config
    config = test_config().with_overrides(te_vector_path=0, te_queue_depth=16, te_trace_depth=0, te_dst_levels=2,
                                          te_dst_overlap=0, te_ovl_bits=16, te_parallel_checks=0)
    tests, fails, results = run(config, testcases=["random_instructions", "trace_buffer_depth", "decode_errors",
                                                   "overlap_offsets"],
                                extra_env={"TSOC_TE_RANDOM": "600"})
    assert tests == 4 and fails == 0, f"see {results}"


@pytest.mark.sim
def test_engine_activity_trace():
    """LOG_ON records (cycle, busy changes, transfer start/end and attributes)
    match the engine's pins and the executor's trace strings."""
    from tensorsoc.verification.te.run import run
    tests, fails, results = run(module="tensorsoc.verification.te.test_trace")
    assert tests == 1 and fails == 0, f"see {results}"


@pytest.mark.sim
def test_engine_drives_the_real_pcore_array():
    """Kernels on both process spaces of the real PCORE array fed and drained
    by the engine, transfers overlapping the other space's kernel; DDR equals
    the executor + PCORE ISS."""
    from tensorsoc.verification.te.run import run
    tests, fails, results = run(module="tensorsoc.verification.te.test_array", array="real",
                                testcases=["kernels_on_both_process_spaces"])
    assert tests == 1 and fails == 0, f"see {results}"


@pytest.mark.sim
@pytest.mark.long
def test_engine_waits_for_the_kernel_on_one_process_space():
    """PCOREs of one process space (pcore_processes=1): the loads queued
    right after an EXE and the store after it wait for the kernel (the
    array's ready), bit-exact with the executor + PCORE ISS; a transfer and
    an EXE of process 1 set DECODE and are skipped.  Long tier (41 s of one
    core): one process space is an option neither board's target uses
    (docs/fpga.md, "One process space"); `make test` runs the model
    compiler's programs for it on the reference executor
    (tests/test_model_accel.py)."""
    from tensorsoc.verification.te.run import run, test_config
    config = test_config().with_overrides(pcore_processes=1)
    tests, fails, results = run(config, module="tensorsoc.verification.te.test_array", array="real",
                                testcases=["kernels_on_one_process_space"])
    assert tests == 1 and fails == 0, f"see {results}"


@pytest.mark.sim
def test_engine_runs_the_guide_examples():
    """Every transfer example of the programmer guide, compiled by the MCORE
    preprocessor for the guide's geometry (8 PCOREs x 16 threads x 8 lanes)."""
    from tensorsoc.spec.config import SoCConfig
    from tensorsoc.verification.te.run import run
    config = SoCConfig().with_overrides(np=8, nt=16, vw=8, pcore_private_words=512, pcore_shared_words=2048)
    tests, fails, results = run(config, module="tensorsoc.verification.te.test_guide", ddr_bytes=64 * 1024)
    assert tests == 1 and fails == 0, f"see {results}"
    # The same engine (te_levels = 8, the default; the other tests here run
    # the boards' 4): a transfer of eight levels executes, nine are DECODE.
    assert config.te_levels == 8
    tests, fails, results = run(config, testcases=["decode_errors"], ddr_bytes=64 * 1024)
    assert tests == 1 and fails == 0, f"see {results}"


@pytest.mark.sim
def test_engine_broadcasts_to_all_pcores_in_one_write():
    """PCORE(4)[*] destinations (verification/te/test_broadcast.py): each
    word goes to every broadcast PCORE in one te write, so N elements take
    about N / VW clocks on chip (N / 2 from DDR), not 4 times that; private
    and shared, partial and out-of-range copies, bit-exact with the executor
    (default geometry, the bench's top)."""
    from tensorsoc.spec.config import SoCConfig
    from tensorsoc.verification.te.cli import BENCH_DDR_BYTES
    from tensorsoc.verification.te.run import run
    tests, fails, results = run(SoCConfig(), module="tensorsoc.verification.te.test_broadcast", ddr_bytes=BENCH_DDR_BYTES)
    assert tests == 1 and fails == 0, f"see {results}"


@pytest.mark.sim
def test_bench_meets_the_throughput_targets():
    """`tsoc bench te` (every transfer checked against the executor): long
    contiguous transfers on the vector path at >= 80% of the DDR bus and >= 90%
    of VW per clock on chip, PCORE to PCORE included (private, shared, within
    one PCORE and across PCOREs)."""
    from tensorsoc.verification.te.cli import run_bench
    rep = run_bench()
    pcore_pairs = [r for r in rep["rows"] if r["kind"].count("PCORE_") == 2]
    assert len(pcore_pairs) == 10, [r["kind"] for r in rep["rows"]]
    for r in rep["rows"]:
        assert r["path"] == "vector", r
        target = 0.9 if "DDR" not in r["kind"] else 0.8
        assert r["target"] == target, r
        assert r["of_peak"] >= target, f"{r['kind']}: {100 * r['of_peak']:.0f}% of peak"
