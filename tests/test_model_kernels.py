"""Kernels resident in the PCORE instruction memory (sw/model/accel.py,
place_kernels): each distinct kernel of a model at its own address, the
code and the EXE_LOCKSTEP entry points relocated, so the firmware loads them
once per model and queues consecutive layers back to back."""

from pathlib import Path

from tensorsoc.spec.config import SoCConfig
from tensorsoc.spec import pcore_isa as pisa
from tensorsoc.spec import model_image as mi
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.model import accel
from tensorsoc.verification.golden.accel_check import reference_check
from tensorsoc.sw.model.compiler import compile_model
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.sw.pcore.asm import assemble, relocate

ROOT = Path(__file__).resolve().parents[1]
LENET = ROOT / "examples" / "lenet5.yaml"


def _loop_ends(words):
    return [pisa.decode(w).loop_end for w in words if pisa.decode(w).is_scalar and pisa.decode(w).sop == "loop"]


def test_relocate_moves_the_loop_ends_only():
    prog = assemble([ROOT / "sw" / "pcore" / "kernels" / "maxpool.pcore"], SoCConfig(),
                    dict(KK=4, C=8, NPIX=1))
    moved = relocate(prog.words, 100)
    assert _loop_ends(prog.words), "the kernel has loops"
    assert _loop_ends(moved) == [e + 100 for e in _loop_ends(prog.words)]
    same = [a == b for a, b in zip(prog.words, moved)]
    assert same.count(False) == len(_loop_ends(prog.words))


def test_lenet_kernels_get_their_own_places():
    model = load_model(LENET, SoCConfig())
    progs = [p for p in accel.plan(model, model.config, lambda t: 0).values() if not isinstance(p, str)]
    by_code = {}
    for p in progs:
        by_code.setdefault(p.origin, set()).add(tuple(p.code))
    # One code per origin, placed one after the other from 0.
    assert all(len(codes) == 1 for codes in by_code.values())
    spans = sorted((o, len(next(iter(c)))) for o, c in by_code.items())
    assert spans[0][0] == 0 and all(o + n == o2 for (o, n), (o2, _) in zip(spans, spans[1:]))
    assert len(spans) >= 3, "conv, maxpool and linear kernels at least"
    assert accel.kernels_resident(progs, model.config.pcore_imem_words)
    for p in progs:
        exes = [i for i in p.instrs if isinstance(i, isa.Exe)]
        assert exes and all(p.origin <= e.addr < p.origin + len(p.code) for e in exes)


def test_relocated_programs_are_bit_exact_on_the_reference_executor():
    model = load_model(LENET, SoCConfig())
    results = reference_check(model, model.config)
    assert results and all(ok for _, ok in results.values()), results


def test_kernels_that_do_not_fit_stay_at_zero():
    model = load_model(LENET, SoCConfig())
    progs = [p for p in accel.plan(model, model.config, lambda t: 0).values() if not isinstance(p, str)]
    total = sum(len(c) for c in {tuple(p.code) for p in progs})
    fresh = [p for p in accel.plan(model, model.config, lambda t: 0).values() if not isinstance(p, str)]
    for p in fresh:       # undo the placement: every kernel back at address 0
        p.code = relocate(p.code, -p.origin) if p.origin else p.code
        p.instrs = [type(i)(func=i.func - p.origin, process=i.process) if isinstance(i, isa.Exe) else i
                    for i in p.instrs]
        p.origin = 0
    assert not accel.place_kernels(fresh, imem_words=total - 1)
    assert all(p.origin == 0 for p in fresh)
    assert not accel.kernels_resident(fresh, total - 1)
    assert accel.place_kernels(fresh, imem_words=total)


def test_image_records_carry_the_origin_and_the_resident_flag():
    model = load_model(LENET, SoCConfig())
    a = mi.decode_image(compile_model(model))["accel"]
    assert a["kernels_resident"] == 1
    origins = {r["code_origin"] for r in a["programs"]}
    assert 0 in origins and len(origins) >= 3
