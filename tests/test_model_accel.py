"""The accelerator programs of sw/model/accel.py on the reference executor
(verification/golden/tensor_exec.py) with the PCORE ISS: every layer of the
example models and of generated models bit-exact with the golden model; the
image's accelerator section round-trips; a broken program is caught."""

from pathlib import Path

import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.spec import model_image as mi
from tensorsoc.sw.model import accel
from tensorsoc.verification.golden.accel_check import reference_check
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import load_model, parse_model

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.yaml"))
BENCH = sorted((Path(__file__).resolve().parent.parent / "examples" / "bench").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES + BENCH, ids=lambda p: p.stem)
def test_example_layers_bit_exact_on_the_reference(path):
    model = load_model(path, SoCConfig())
    res = reference_check(model, SoCConfig())
    assert res and all(ok for _, ok in res.values()), {k: v for k, (v, ok) in res.items() if not ok}


def test_generated_models_bit_exact_on_the_reference():
    from tensorsoc.verification.uvm.yaml_gen import random_model
    cfg = SoCConfig()
    ran = 0
    for seed in range(12):
        text = random_model(seed)
        model = parse_model(text if isinstance(text, str) else text[0], file=f"gen{seed}.yaml", config=cfg)
        for layer, (prog, ok) in reference_check(model, cfg).items():
            if isinstance(prog, str):
                continue          # stays on the software path (the reason is in prog)
            assert ok, f"seed {seed} layer {layer}: {prog.kernel}"
            ran += 1
    assert ran >= 12


def test_weights_rearranged_by_the_engine():
    """Without arranged constants (plan(data=None)) the programs read the
    weights where the model keeps them, and are bit-exact too."""
    model = load_model(EXAMPLES[0], SoCConfig())
    res = reference_check(model, SoCConfig(), arranged=False)
    assert res and all(ok for _, ok in res.values())


def test_a_broken_program_is_caught(monkeypatch):
    model = load_model(EXAMPLES[0], SoCConfig())
    orig = accel.Source.compile

    def off_by_one(self, func, symbols, process=0, tag=0, **defines):
        if func == "store":             # every pass's result one element off
            defines["Y"] += 2
        return orig(self, func, symbols, process, tag, **defines)

    monkeypatch.setattr(accel.Source, "compile", off_by_one)
    assert not all(ok for _, ok in reference_check(model, SoCConfig()).values())


def test_image_accelerator_section():
    cfg = SoCConfig()
    model = load_model(EXAMPLES[0], cfg)
    d = mi.decode_image(compile_model(model))
    a = d["accel"]
    assert a["geometry"] == cfg.np | cfg.nt << 8 | cfg.vw << 16
    assert a["memory"] == cfg.pcore_private_words | cfg.pcore_shared_words << 16
    compute = [i for i, op in enumerate(d["ops"]) if op["opcode"] in (mi.OPCODES["CONV"], mi.OPCODES["LIN"],
                                                                       mi.OPCODES["MAXPOOL"])]
    assert [p["op"] for p in a["programs"]] == compute
    assert all(p["code"] and p["te"] for p in a["programs"])
    # The conv weights are in the section in the kernel's coef[G][K][VW] order.
    conv = next(op for op in model.ops if op.kind == "conv")
    KH, KW, C, CO = conv.a.dims
    coef = accel._Gen.constant(conv.a).reshape(KH * KW * C, CO // cfg.vw, cfg.vw).transpose(1, 0, 2)
    assert coef.astype("<i2").tobytes() in a["data"]
    plain = mi.decode_image(compile_model(model, accel=False))
    assert plain["accel"] is None and plain["model"]["accel"] == 0
    assert plain["ops"] == d["ops"]
    # Each constant once: the conv weights, which only the accelerator
    # reads, are arranged only; --portable keeps the memory-layout copy.
    w_mem = L.to_memory(conv.a.raw, conv.a.layout).astype("<i2").tobytes()
    assert w_mem in plain["consts"] and w_mem not in d["consts"]
    assert d["tensors"][conv.a.index]["offset"] == mi.NONE
    portable = mi.decode_image(compile_model(model, portable=True))
    assert portable["consts"] == plain["consts"] and portable["accel"]["data"] == a["data"]


def test_small_pcore_memories_tile_instead_of_falling_back():
    """With a quarter of the shared and private memory every layer is still accelerated (tiled,
    docs/models.md "Tiling") and bit-exact: nothing goes back to the software path."""
    cfg = SoCConfig().with_overrides(pcore_shared_words=256, pcore_private_words=128)
    model = load_model(EXAMPLES[0], cfg)
    res = reference_check(model, cfg)
    assert res and all(not isinstance(p, str) and ok for p, ok in res.values())
    assert any("tiles" in p.tiling for p, _ok in res.values())


def _every_example_layer_accelerated(cfg):
    """Every layer of every example model (and the digits CNN) programmed
    for the engine ``cfg`` describes and bit-exact on the reference executor."""
    for path in EXAMPLES + [EXAMPLES[0].parent / "digits" / "digits_cnn.yaml"]:
        model = load_model(path, cfg)
        res = reference_check(model, cfg)
        assert res and all(not isinstance(p, str) and ok for p, ok in res.values()), (path.stem, res)


def test_one_process_space_carries_every_layer(tmp_path):
    """PCOREs of one process space (pcore_processes=1; the Colorlight i5's
    two PCOREs of four lanes): every layer of the example models that
    compile at VW = 4 (cnn_instructions' and LeNet-5's stream padding is
    for VW = 8), of the bench models and of the digits CNN imported for
    that configuration accelerated and bit-exact on the reference
    executor, which keeps one memory for all passes as the hardware does
    and refuses a process-1 instruction (DECODE); every instruction is of
    process 0 and the three kernels are among the programs.  (The order of
    the steps is test_one_process_space_needs_its_own_schedule's.)"""
    from tensorsoc import onnx_import as OI
    from tensorsoc.soc.targets import get
    import numpy as np
    cfg = get("colorlight_i5").config.with_overrides(np=2, pcore_processes=1)
    digits = EXAMPLES[0].parent / "digits"
    imported = OI.import_onnx(digits / "digits_cnn.onnx", tmp_path / "digits_cnn.yaml", cfg,
                              calibrate=np.load(digits / "calib_x.npy")).model
    models = [load_model(EXAMPLES[0].parent / f"{name}.yaml", cfg) for name in ("mlp", "relu_cnn3", "wide_cnn")]
    models += [load_model(p, cfg) for p in BENCH] + [imported]
    kernels = set()
    for model in models:
        res = reference_check(model, cfg)
        assert res and all(not isinstance(p, str) and ok for p, ok in res.values()), res
        for prog, _ok in res.values():
            kernels.add(prog.kernel.split(".")[0])
            assert {getattr(i, "process", 0) for i in prog.instrs} == {0}
    assert {"convolution", "linear", "maxpool"} <= kernels


def test_one_process_space_needs_its_own_schedule(monkeypatch):
    """The two-space schedule (each pass's store queued after the next
    pass's kernel) on PCOREs of one process space stores results that the
    next pass has overwritten: the reference executor, which keeps one
    memory as the hardware does, catches it."""
    import dataclasses
    cfg = SoCConfig().with_overrides(np=2, nt=8, vw=4, pcore_private_words=256, pcore_shared_words=1024,
                                     pcore_processes=1)
    orig = accel.schedule

    def two_space_order(steps, prologue, exe, processes=2):
        on0 = [dataclasses.replace(
            st, loads=lambda p, f=st.loads: f(0), store=st.store and (lambda p, f=st.store: f(0)),
            shared=st.shared and (st.shared[0], lambda p, f=st.shared[1]: f(0))) for st in steps]
        return orig(on0, prologue, lambda f, p, n: exe(f, 0, n), 2)

    model = load_model(EXAMPLES[0].parent / "relu_cnn3.yaml", cfg)
    assert all(ok for _p, ok in reference_check(model, cfg).values())
    monkeypatch.setattr(accel, "schedule", two_space_order)
    res = reference_check(model, cfg)
    assert not all(ok for _p, ok in res.values())


def test_four_loop_levels_carry_every_example_layer():
    """The boards' TensorEngine (te_levels=4): every layer of every example
    model is still accelerated and bit-exact on the reference executor,
    itself limited to four levels (a deeper transfer would set DECODE)."""
    _every_example_layer_accelerated(SoCConfig().with_overrides(te_levels=4))


def test_two_destination_levels_carry_every_example_layer():
    """The Colorlight i5's candidate engine (te_levels=4, te_dst_levels=2,
    no destination overlap, one PCORE) and the default geometry with two
    destination levels and no destination overlap: every layer of every
    example model accelerated and bit-exact on the reference executor,
    itself refusing a deeper or overlapped destination (DECODE)."""
    i5 = dict(np=1, nt=8, vw=8, scratch_size=8192, pcore_private_words=256, pcore_shared_words=1024)
    # (and 16-bit overlap offsets, the fewest: the examples' need 13)
    _every_example_layer_accelerated(SoCConfig().with_overrides(te_levels=4, te_dst_levels=2, te_dst_overlap=0,
                                                                te_ovl_bits=16, **i5))
    _every_example_layer_accelerated(SoCConfig().with_overrides(te_levels=4, te_dst_levels=2, te_dst_overlap=0))


def test_overlap_offsets_wider_than_the_engine_stay_in_software():
    """te_ovl_bits: a transfer whose overlap offsets would leave
    +-2**(te_ovl_bits-1) (the engine would wrap them) keeps its layer in
    software, the reason naming the bits it needs and the setting; one that
    just fits is programmed.  isa.offset_bits is the bound."""
    from tensorsoc.spec import tensor_isa as isa
    cfg = SoCConfig().with_overrides(te_ovl_bits=24)
    dst = isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0, levels=[isa.Level(count=64, step=1)])

    def src(start, step=1):
        return isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=0, ovl_mask=2, ovl_start=start,
                        ovl_limit=100, levels=[isa.Level(count=8, step=1), isa.Level(count=8, step=step)])
    top = (1 << 23) - 1
    assert isa.offset_bits(src(top - 7)) == 24 and isa.offset_bits(src(top - 6)) == 25
    assert isa.offset_bits(src(-(1 << 23) + 7, -1)) == 24 and isa.offset_bits(src(-(1 << 23) + 6, -1)) == 25
    accel._check_levels([isa.Transfer(dst=dst, src=src(top - 7))], cfg)
    accel._check_levels([isa.Transfer(dst=dst, src=src(-(1 << 23) + 7, -1))], cfg)
    with pytest.raises(accel.NoProgram, match=r"source has overlap offsets that need 25 bits and this TensorEngine "
                                              r"keeps them in te_ovl_bits=24 \(an engine with --set te_ovl_bits=25 "
                                              r"runs it\)"):
        accel._check_levels([isa.Transfer(dst=dst, src=src(top - 6))], cfg)
    accel._check_levels([isa.Transfer(dst=dst, src=src(top - 6))], cfg.with_overrides(te_ovl_bits=25))


def test_a_destination_deeper_than_the_engine_stays_in_software():
    """A layer whose destinations need more levels than te_dst_levels stays
    on the software path, the reason naming the destination and the
    setting (a hand-made three-level destination through _check_levels)."""
    from tensorsoc.spec import tensor_isa as isa
    cfg = SoCConfig().with_overrides(te_levels=4, te_dst_levels=2)
    lv = [isa.Level(count=2, step=1)] * 3
    t = isa.Transfer(dst=isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0, levels=lv),
                     src=isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=0, levels=lv))
    with pytest.raises(accel.NoProgram, match="destination needs 3 loop levels and this TensorEngine has "
                                              r"te_dst_levels=2 \(an engine with --set te_dst_levels=3 runs it\)"):
        accel._check_levels([t], cfg)
    # the source may have all of te_levels
    src4 = isa.Side(space=isa.space("DDR"), dtype=isa.dtype("INT8"), base=0, levels=[isa.Level(count=2, step=1)] * 4)
    dst1 = isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0, levels=[isa.Level(count=16, step=1)])
    accel._check_levels([isa.Transfer(dst=dst1, src=src4)], cfg)


def test_an_overlapped_destination_stays_in_software_without_te_dst_overlap():
    """te_dst_overlap=0: a transfer whose destination has an overlap group
    keeps its layer in software, the reason naming the setting (a hand-made
    transfer through _check_levels); an overlapped source is accepted."""
    from tensorsoc.spec import tensor_isa as isa
    cfg = SoCConfig().with_overrides(te_levels=4, te_dst_levels=2, te_dst_overlap=0)
    lv = [isa.Level(count=2, step=1), isa.Level(count=3, step=1)]

    def side(space, ovl):
        return isa.Side(space=isa.space(space), dtype=isa.dtype("INT8"), base=0, levels=lv,
                        ovl_mask=3 if ovl else 0, ovl_limit=4 if ovl else 0)
    with pytest.raises(accel.NoProgram, match="destination has an overlap group and this TensorEngine has "
                                              r"te_dst_overlap=0 \(an engine with --set te_dst_overlap=1 runs it\)"):
        accel._check_levels([isa.Transfer(dst=side("SCRATCH", True), src=side("DDR", False))], cfg)
    accel._check_levels([isa.Transfer(dst=side("SCRATCH", False), src=side("DDR", True))], cfg)
    accel._check_levels([isa.Transfer(dst=side("SCRATCH", True), src=side("DDR", False))],
                        cfg.with_overrides(te_dst_overlap=1))


def test_a_transfer_deeper_than_the_engine_stays_in_software():
    """A layer whose transfers need more loop levels than te_levels is not
    programmed for the engine: it stays on the software path and the reason
    names the levels and the setting."""
    cfg = SoCConfig().with_overrides(te_levels=3)
    model = load_model(EXAMPLES[0], cfg)
    progs = {k: p for k, (p, _ok) in reference_check(model, cfg).items()}
    deep = [p for p in progs.values() if isinstance(p, str) and "loop levels" in p]
    assert deep, progs
    assert all("te_levels=3" in p and "--set te_levels=4" in p for p in deep), deep
