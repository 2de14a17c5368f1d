"""The accelerator layer programs come from the MCORE sources of
sw/model/programs (tensor statements compiled by sw.mcore.api.instructions).

``behaviour()`` reduces an instruction to what the TensorEngine does with it,
so two instruction streams can be compared where their words may differ
without a difference in behaviour:

* a level's ``start``, ``stride`` and ``bound`` are read only when the level is
  bound-checked (docs/tensor_semantics.md, OOB rule 1);
* a checked level whose index stays in ``0 .. bound-1`` over all its
  iterations never makes an element out of bound; the engine's vector path
  takes a checked innermost level when its stride is 0, or 1 with the row in
  bound (cores/tensor_engine/vector.py ``eligible``), so the check is dropped
  there only in those cases;
* a level of count 1 adds nothing to the address (its index is 0) and, not
  checked and not overlapped, nothing else either; it is dropped unless it is
  the innermost one (the vector path's row);
* broadcast levels take the lowest slots of the engine's address generator
  whatever their position in the instruction (engine.py decoder) and the
  golden model writes each element at every broadcast index, so they are
  listed first.
"""

from pathlib import Path

import pytest

from soc.config import SoCConfig
from sw.mcore import isa
from sw.model import accel
from sw.model.frontend import load_model, parse_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "examples" / "bench").glob("*.yaml"))


def _side(s):
    bytes_space = s.space in (isa.space("DDR"), isa.space("SCRATCH"))
    levels = []
    for i, lv in enumerate(s.levels):
        chk, ovl, bc = (s.check_mask >> i) & 1, (s.ovl_mask >> i) & 1, (s.bcast_mask >> i) & 1
        last = lv.start + (lv.count - 1) * lv.stride
        if chk and 0 <= min(lv.start, last) and max(lv.start, last) < lv.bound and (i or lv.stride in (0, 1)):
            chk = 0
        if lv.count == 1 and not chk and not ovl and not bc and i and not (bytes_space and lv.step & 1):
            continue
        levels.append((bool(bc), lv.count, lv.step, bool(ovl)) + ((lv.start, lv.stride, lv.bound) if chk else ()))
    levels.sort(key=lambda lv: not lv[0])          # stable: broadcast levels first
    ovl = (s.ovl_start, s.ovl_limit) if s.ovl_mask else None
    return (s.space, s.dtype, s.base, ovl, tuple(levels))


def behaviour(i):
    if isinstance(i, isa.Transfer):
        return ("transfer", i.process, i.scatter, i.scatter_n, i.proc_en, i.proc if i.proc_en else 0, i.pad,
                _side(i.dst), _side(i.src))
    if isinstance(i, isa.Exe):
        return ("exe", i.process, i.func)
    if isinstance(i, isa.Callback):
        return ("callback", i.process, i.tag, i.parm)
    return (type(i).__name__, isa.encode(i))


def _models():
    cfg = SoCConfig()
    out = [(p.stem, load_model(p, cfg)) for p in MODELS]
    from verification.uvm.yaml_gen import random_model
    for seed in range(12):
        text = random_model(seed)
        out.append((f"gen{seed}", parse_model(text if isinstance(text, str) else text[0], file=f"gen{seed}.yaml",
                                              config=cfg)))
    return out


def _place(model):
    offsets, pos = {}, 64
    for t in model.tensors:
        offsets[t] = pos
        pos += -(-t.nbytes // 64) * 64
    return offsets, pos


@pytest.mark.parametrize("arranged", [True, False], ids=["arranged", "rearranged"])
def test_statement_programs_behave_as_the_hand_built_ones(arranged):
    cfg = SoCConfig()
    same_words = total = 0
    for name, model in _models():
        offsets, table = _place(model)
        progs = [accel.plan(model, cfg, lambda t: offsets[t], tanh_table_addr=table,
                            data=accel.DataBlob(table + 128) if arranged else None, _gen=g)
                 for g in (accel._HandGen, accel._Gen)]
        assert progs[0].keys() == progs[1].keys()
        for k, old in progs[0].items():
            new = progs[1][k]
            if isinstance(old, str):
                assert new == old
                continue
            assert new.code == old.code and new.passes == old.passes and new.macs == old.macs
            assert [behaviour(i) for i in new.instrs] == [behaviour(i) for i in old.instrs], (name, k)
            total += len(old.instrs)
            same_words += sum(isa.encode(a) == isa.encode(b) for a, b in zip(old.instrs, new.instrs))
    print(f"{total} instructions, {same_words} with identical words")
