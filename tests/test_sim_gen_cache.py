"""The simulation build's generation cache (soc/gen_cache.py): what its key
covers, and that a build regenerates exactly when an input changed --
counted, not timed."""

import pytest

from tensorsoc.soc import gen_cache
from tensorsoc.soc.builder import ROOT, SimBuild, SoCBuild
from tensorsoc.spec.config import DEFAULT


def _rel_inputs():
    return {gen_cache._rel(p) for p in gen_cache.input_files()}


def test_inputs_cover_the_generator_and_not_the_model_compiler():
    files = _rel_inputs()
    # The SoC and its cores, what the cores import from sw/, the firmware,
    # the C++ harness, Verilog beside the cores, the Verilator build glue.
    for needed in ("soc/builder.py", "spec/config.py", "soc/tensorsoc.py", "soc/platforms/sim.py",
                   "cores/tensor_engine/engine.py", "cores/pcore/lane.py", "cores/host_spi/core.py",
                   "cores/sim_control.py", "cores/sim_clock.v", "spec/tensor_isa.py", "spec/host_protocol.py",
                   "spec/server_image.py", "spec/model_image.py", "sw/firmware/main.c", "sw/firmware/Makefile",
                   "sw/runtime/ztam.c", "soc/sim/main.cpp", "verification/soc/runner.py",
                   "soc/verilator.py"):
        assert needed in files, needed
    # Nothing the generator never imports: the model compiler, the CLI, tests.
    for unrelated in ("sw/model/compiler.py", "tensorsoc/commands/soc.py", "sw/host/device.py", "verification/soc/sim_main.py"):
        assert unrelated not in files, unrelated
    assert not any(f.startswith("tests/") or "__pycache__" in f for f in files)


def test_key_follows_settings_files_and_tools(monkeypatch):
    base = gen_cache.inputs({"config": DEFAULT.as_dict()})
    assert gen_cache.inputs({"config": DEFAULT.as_dict()}).key == base.key
    other = gen_cache.inputs({"config": DEFAULT.with_overrides(memtest_size=4096).as_dict()})
    assert other.key != base.key
    assert other.changes(base.as_dict()) == ["config.memtest_size 262144 -> 4096"]

    real = gen_cache._digest
    edited = ROOT / "cores" / "tensor_engine" / "engine.py"
    monkeypatch.setattr(gen_cache, "_digest", lambda p: real(p) + ("x" if p == edited else ""))
    changed = gen_cache.inputs({"config": DEFAULT.as_dict()})
    assert changed.key != base.key
    assert changed.changes(base.as_dict()) == ["cores/tensor_engine/engine.py changed"]
    monkeypatch.setattr(gen_cache, "_digest", real)

    monkeypatch.setattr(gen_cache, "tool_versions", lambda: {**base.tools, "litex": "2099.1"})
    newer = gen_cache.inputs({"config": DEFAULT.as_dict()})
    assert newer.key != base.key and newer.changes(base.as_dict()) == ["litex version"]


@pytest.mark.sim
def test_generation_and_simulator_build_counted(tmp_path, monkeypatch):
    """Real generations (LiteX, firmware) in a fresh folder; the Verilator
    build replaced by a counter that leaves an executable behind."""
    from tensorsoc.verification.soc import runner
    generations, verilator_builds = [], []
    real_generate = SoCBuild.generate
    monkeypatch.setattr(SoCBuild, "generate", lambda self: generations.append(self.config) or real_generate(self))

    def fake_build(r, build, waves):
        verilator_builds.append(build.config)
        exe = runner.sim_dir(build, waves) / "tensorsoc"
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text("")
    monkeypatch.setattr(runner, "_build", fake_build)

    def build(config=DEFAULT):
        runner.cocotb_build(SimBuild(config, tmp_path / "sim", log=lambda *_: None))
        return len(generations), len(verilator_builds)

    assert build() == (1, 1)                       # first build
    assert build() == (1, 1)                       # nothing changed: neither step runs
    changed = DEFAULT.with_overrides(memtest_size=128 * 1024)
    assert build(changed) == (2, 2)                # a configuration field changed
    assert build(changed) == (2, 2)
    real = gen_cache._digest
    firmware = ROOT / "sw" / "firmware" / "memtest.c"
    monkeypatch.setattr(gen_cache, "_digest", lambda p: real(p) + ("x" if p == firmware else ""))
    assert build(changed) == (3, 3)                # a source changed
    assert build(changed) == (3, 3)
    monkeypatch.setattr(gen_cache, "_digest", real)
    assert build(changed) == (4, 4)                # and back as it was
    # An output missing, or no stamp (an interrupted generation): the same
    # inputs are generated again; the simulator built from them stays.
    (tmp_path / "sim" / "firmware" / "firmware-ram.bin").unlink()
    assert build(changed) == (5, 4)
    gen_cache.clear_stamp(tmp_path / "sim" / gen_cache.STAMP)
    assert build(changed) == (6, 4)
    assert build(changed) == (6, 4)
    # A waveform build is a simulator of its own.
    runner.cocotb_build(SimBuild(changed, tmp_path / "sim", log=lambda *_: None), waves=True)
    assert (len(generations), len(verilator_builds)) == (6, 5)
