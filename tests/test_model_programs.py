"""The accelerator layer programs come from the MCORE sources of
sw/model/programs (tensor statements compiled by sw.mcore.api.instructions):
the programs of cnn_instructions' conv, maxpool and lin against expectations
written here from the ops' geometry, every program function in use, the
functions' parameters as their defines.  (Until the programs moved to the
sources, a test here also compared them, for every example, bench and
generated model, with the hand-built generator they replace: the same
behaviour for all, see ``behaviour()``.)

``behaviour()`` reduces an instruction to what the TensorEngine does with it,
so an expectation need not spell out words that change nothing (the
statements bound-check every PCORE and variable dimension and give the PCORE
dimension a level of its own, where a hand-written instruction need not):

* a level's ``start``, ``stride`` and ``bound`` are read only when the level is
  bound-checked (docs/tensor_semantics.md, OOB rule 1);
* a checked level whose index stays in ``0 .. bound-1`` over all its
  iterations never makes an element out of bound; the engine's vector path
  takes a checked innermost level when its stride is 0, or 1 with the row in
  bound (cores/tensor_engine/vector.py ``eligible``), so the check is dropped
  there only in those cases;
* a level of count 1 adds nothing to the address (its index is 0) and, not
  checked and not overlapped, nothing else either; it is dropped unless it is
  the innermost one (the vector path's row) or, in DDR/scratch, has an odd
  step (the vector path's alignment rule reads every step);
* broadcast levels take the lowest slots of the engine's address generator
  whatever their position in the instruction (engine.py decoder) and the
  golden model writes each element at every broadcast index, so they are
  listed first.
"""

from pathlib import Path

import numpy as np
import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.model import accel
from tensorsoc.sw.model.frontend import load_model, parse_model

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
        # a level of count 1 changes nothing (a broadcast of one copy writes once): accel.compact drops them
        if lv.count == 1 and not chk and not ovl and i and not (bytes_space and lv.step & 1):
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
    from tensorsoc.verification.uvm.yaml_gen import random_model
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


CNN = ROOT / "examples" / "cnn_instructions.yaml"
DDR, SCRATCH, PRIVATE, SHARED, SPU = (isa.space(n) for n in ("DDR", "SCRATCH", "PCORE_PRIVATE", "PCORE_SHARED", "SPU"))


def lv(count, step, start=0, bound=0):
    return isa.Level(count=count, step=step, start=start, stride=1, bound=bound)


def side(space, base, levels, check=0, ovl=0, bcast=0, ovl_start=0, ovl_limit=0):
    return isa.Side(space=space, dtype=isa.dtype("INT16"), base=base & 0xFFFFFFFF, levels=levels, check_mask=check,
                    ovl_mask=ovl, bcast_mask=bcast, ovl_start=ovl_start, ovl_limit=ovl_limit)


def xfer(dst, src, process=0, **kw):
    return isa.Transfer(dst=dst, src=src, process=process, **kw)


def copy(dst_space, dst, src_space, src, n, process=0):
    unit = lambda sp: 2 if sp in (DDR, SCRATCH) else 1  # noqa: E731
    return xfer(side(dst_space, dst, [lv(n, unit(dst_space))]), side(src_space, src, [lv(n, unit(src_space))]), process)


def window(var, tau, n, x_space, x, H, W, C, KH, KW, sw, y0, x0, process, pad=0):
    """The im2col of n pixels of one output row: thread tau on, source rows y0.. (checked against H),
    columns x0.. (the overlapped group of the kx and ox levels, limit W*C)."""
    return xfer(side(PRIVATE, tau * 512 + var, [lv(KH * KW * C, 1), lv(n, 512)]),
                side(x_space, x + (y0 * W + x0) * C * 2,
                     [lv(C, 2), lv(KW, C * 2), lv(KH, W * C * 2, start=y0, bound=H), lv(n, sw * C * 2)],
                     check=0b0100, ovl=0b1010, ovl_start=x0 * C * 2, ovl_limit=W * C * 2), process, pad=pad)


def store(y, var, CO, q0, n, process, tanh=False):
    return xfer(side(DDR, y + q0 * CO * 2, [lv(n * CO, 2)]), side(PRIVATE, var, [lv(CO, 1), lv(n, 512)]), process,
                proc_en=int(tanh))


def _cnn(arranged):
    cfg = SoCConfig()
    model = load_model(CNN, cfg)
    offsets, table = _place(model)
    data = accel.DataBlob(table + 128) if arranged else None
    progs = accel.plan(model, cfg, lambda t: offsets[t], tanh_table_addr=table, data=data)
    ops = {op.kind: op for op in model.ops if op.kind != "stream"}
    return ops, offsets, table, data, {p.kind: p for p in progs.values()}


def _check(prog, expected, exe):
    """``expected`` with None where an EXE goes; ``exe``: their (process, np, nt)."""
    exes = iter(exe)
    want = []
    for e in expected:
        if e is None:
            p, np_, nt = next(exes)
            got = next(i for i in prog.instrs[len(want):] if isinstance(i, isa.Exe))
            assert (got.process, got.np, got.nt) == (p, np_, nt) and prog.origin <= got.addr < prog.origin + len(prog.code)
            e = got
        want.append(e)
    assert [behaviour(i) for i in prog.instrs] == [behaviour(i) for i in want]


def test_conv_program():
    """cnn_instructions' conv, 8x8x8 -> 8x8x16, 3x3, pad 1: the input and the arranged shared image
    staged in the scratch-pad, the image broadcast to the four PCOREs in both process spaces, two passes of four
    output rows, stores one pass behind, the CALLBACK tagged with the layer."""
    ops, at, _table, data, progs = _cnn(True)
    op = ops["conv"]
    image = -(-data.base // 16) * 16
    K, n_image = 72, 2 * 72 * 8 + 3 * 16                 # coef[2][72][8], bias, scale, offset
    setup = lambda p: [xfer(side(SHARED, 0, [lv(n_image, 1), lv(4, 4096)], bcast=0b10),  # noqa: E731
                            side(SCRATCH, 1024, [lv(n_image, 2)]), p)]
    rows = lambda q0, p: [window(0, oy * 8 - q0, 8, SCRATCH, 0, 8, 8, 8, 3, 3, 1, oy - 1, -1, p)  # noqa: E731
                          for oy in range(q0 // 8, q0 // 8 + 4)]
    expected = ([copy(SCRATCH, 0, DDR, at[op.b], 512), copy(SCRATCH, 1024, DDR, image, n_image)] + setup(0)
                + rows(0, 0) + [None] + setup(1) + rows(32, 1) + [None]
                + [store(at[op.res], K, 16, 0, 32, 0), store(at[op.res], K, 16, 32, 32, 1),
                   isa.Callback(tag=op.layer, parm=0)])
    _check(progs["conv"], expected, [(0, 4, 8), (1, 4, 8)])


def test_conv_program_rearranging_the_weights():
    """Without arranged constants: coef[g][k][l] <= W[k][g*8+l], bias, scale and offset broadcast
    to the four PCOREs of each process space."""
    ops, at, _table, _data, progs = _cnn(False)
    op = ops["conv"]
    setup = lambda p: [  # noqa: E731
        xfer(side(SHARED, 0, [lv(8, 1), lv(72, 8), lv(2, 576), lv(4, 4096)], bcast=0b1000),
             side(DDR, at[op.a], [lv(8, 2), lv(72, 32), lv(2, 16)]), p),
        xfer(side(SHARED, 1152, [lv(16, 1), lv(4, 4096)], bcast=0b10), side(DDR, at[op.bias], [lv(16, 2)]), p),
        xfer(side(SHARED, 1168, [lv(16, 1), lv(4, 4096)], bcast=0b10), side(DDR, at[op.batch], [lv(16, 2)]), p),
        xfer(side(SHARED, 1184, [lv(16, 1), lv(4, 4096)], bcast=0b10), side(DDR, at[op.batch] + 32, [lv(16, 2)]), p)]
    got = [behaviour(i) for i in progs["conv"].instrs]
    assert got[1:5] == [behaviour(i) for i in setup(0)]
    assert got[10:14] == [behaviour(i) for i in setup(1)]


def test_maxpool_program():
    """2x2 stride 2 on 8x8x16 (windows do not overlap: read from DDR), PAD -32768, one pass of 16
    pixels on two PCOREs."""
    ops, at, _table, _data, progs = _cnn(True)
    op = ops["maxpool"]
    expected = ([window(0, oy * 4, 4, DDR, at[op.a], 8, 8, 16, 2, 2, 2, 2 * oy, 0, 0, pad=0x8000) for oy in range(4)]
                + [None, store(at[op.res], 64, 16, 0, 16, 0), isa.Callback(tag=op.layer, parm=0)])
    _check(progs["maxpool"], expected, [(0, 2, 8)])


def test_lin_program():
    """256 -> 8 with batch norm and tanh on one column: the linear kernel (a thread per block of 8
    outputs holding its weight rows, the column in the shared memory), K cut into 4 tiles of 59 and a
    last one of 20 (one thread: accumulator chains, so the cost model keeps the last kernel short),
    alternating between the process spaces, the partial sum in the accumulator: the tanh table to
    stream program 0; per tile the thread's arranged weights [k][lane] (to w, after y and the
    epilogue) and the tile's inputs, then first (tile 0), mid, or last; the last tile's transfer
    starts at y: 8 words over y, the epilogue vectors (bias, scale, offset), then its weights; the
    store of y through PROC(0)."""
    ops, at, table, data, progs = _cnn(True)
    op = ops["lin"]
    blob = bytes(data.data)

    def blob_at(values):
        raw = np.asarray(values).astype("<i2").tobytes()
        off = blob.find(raw)
        assert off >= 0 and (data.base + off) % 16 == 0
        return data.base + off

    w = accel._Gen.constant(op.a).reshape(8, 256)                       # [lane][input]
    bn = accel._Gen.constant(op.batch)
    epi = np.concatenate([accel._Gen.constant(op.bias)[:8], bn[:8], bn[8:16]])
    y_addr, w_addr = 0, 8 + epi.size                                    # private: y, bias, scale, offset, w
    tiles = [(0, 59), (59, 59), (118, 59), (177, 59), (236, 20)]
    expected = [xfer(side(SPU, 0, [lv(64, 1)]), side(DDR, table, [lv(64, 2)]))]
    exes = []
    for k, (k0, kt) in enumerate(tiles):
        p = k % 2
        tile = w[:, k0:k0 + kt].T.reshape(-1)
        last = k == len(tiles) - 1
        if last:
            tile = np.concatenate([np.zeros(8, dtype=tile.dtype), epi, tile])
        expected += [copy(PRIVATE, y_addr if last else w_addr, DDR, blob_at(tile), tile.size, p),
                     xfer(side(SHARED, 0, [lv(kt, 1), lv(1, 4096)], bcast=0b10), side(DDR, at[op.b] + 2 * k0,
                                                                                       [lv(kt, 2)]), p)]
        expected += [None]
        exes += [(p, 1, 1)]
    expected += [xfer(side(DDR, at[op.res], [lv(8, 2)]), side(PRIVATE, y_addr, [lv(8, 1)]), 0, proc_en=1),
                 isa.Callback(tag=op.layer, parm=0)]
    prog = progs["lin"]
    _check(prog, expected, exes)
    funcs = [i.addr for i in prog.instrs if isinstance(i, isa.Exe)]
    assert funcs[0] != funcs[1] and len(set(funcs[1:-1])) == 1 and funcs[-1] not in funcs[:-1]   # first, mid, last
    assert prog.tiling == "1 pass(es) of <= 32, 5 K tiles of 59 inputs (the last 20)"


def _tiled_models():
    """Models of tests/test_model_tiling.py that need the tile functions (channel tiles of a tanh
    conv and of a maxpool, a row-tiled 8x8 maxpool window), with their configurations."""
    import test_model_tiling as T
    small = SoCConfig().with_overrides(**T.SMALL)
    return [(small, parse_model(T.conv_model(C=8, CO=32, act="NLIN_F_TANH"), file="t.yaml", config=small)),
            (SoCConfig().with_overrides(pcore_private_words=128),
             parse_model(T.maxpool_model(C=32), file="m.yaml", config=SoCConfig().with_overrides(pcore_private_words=128))),
            (SoCConfig(), parse_model(T.maxpool_model(H=8, W=8, C=16, K=8, stride=8, pad=0), file="g.yaml",
                                      config=SoCConfig()))]


def test_every_program_function_is_used():
    """Every function of sw/model/programs is compiled for some example or generated model
    (with the weights arranged or not): no program text is dead."""
    used = set()
    orig = accel.Source.compile

    def spy(self, func, *a, **k):
        used.add((self.path.name, func))
        return orig(self, func, *a, **k)

    cfg = SoCConfig()
    models = [(cfg, m) for _n, m in _models()] + _tiled_models()
    try:
        accel.Source.compile = spy
        for mcfg, model in models:
            offsets, table = _place(model)
            for data in (accel.DataBlob(table + 128), None):
                accel.plan(model, mcfg, lambda t: offsets[t], tanh_table_addr=table, data=data)
    finally:
        accel.Source.compile = orig
    defined = {(p.name, f) for p in accel.PROGRAMS.glob("*.c") for f in accel.Source(p).funcs}
    assert defined - used == set()


def test_program_function_takes_exactly_its_parameters():
    from tensorsoc.sw.mcore import symbols
    layer = accel.source("layer")
    assert layer.funcs["stage"][0] == ["AT", "SRC", "N"]
    with pytest.raises(ValueError, match="stage"):
        layer.compile("stage", symbols.empty(), AT=0, SRC=0)
    with pytest.raises(ValueError, match="stage"):
        layer.compile("stage", symbols.empty(), AT=0, SRC=0, N=4, M=1)
    assert layer.compile("stage", symbols.empty(), AT=16, SRC=64, N=4) == [copy(SCRATCH, 16, DDR, 64, 4)]


KERNEL_DEFINES = {        # a kernel instance per variant the functions need (shared or private bias)
    "convolution": [dict(KH=3, KW=3, CIN=8, COUT=16, NPIX=1, FRAC=8, BIAS=1, BN=1, RELU=1, TSH=0),
                    dict(KH=1, KW=1, CIN=8, COUT=16, NPIX=1, FRAC=8, BIAS=2, BN=0, RELU=0, TSH=0)],
    "maxpool": [dict(KK=4, C=16, NPIX=1)],
    "linear": [dict(NIN=32, OB=1, NB=1, FRAC=8, BIAS=1, BN=1, RELU=0, TSH=5)],
}


def test_program_sources_preprocess_into_c(tmp_path):
    """Each function of the program sources is MCORE source: `tsoc mcore compile`'s preprocessor
    turns it into C for the ztam runtime, which gcc compiles with every warning an error (so each
    parameter is used).  One function at a time (the others' lines blanked): convolution.c's bias
    and bias_pixels need different kernel instances."""
    import shutil
    import subprocess
    from tensorsoc.sw.mcore import symbols
    from tensorsoc.sw.mcore.errors import MCoreError
    from tensorsoc.sw.mcore.preprocessor import compile_source
    from tensorsoc.sw.pcore.asm import assemble
    if not shutil.which("gcc"):
        pytest.skip("host gcc not installed")
    cfg = SoCConfig()
    compiled = 0
    for path in sorted(accel.PROGRAMS.glob("*.c")):
        src = accel.Source(path)
        kernel = path.stem if path.stem in KERNEL_DEFINES else "maxpool"
        tables = [symbols.from_dict(assemble([accel.KERNELS / f"{kernel}.pcore"], cfg, d).symbols())
                  for d in KERNEL_DEFINES[kernel]]
        spans, start = {}, None
        for i, line in enumerate(src.lines):
            m = accel.Source._FUNC.match(line)
            if m:
                start = (m.group(1), i)
            elif line.startswith("}") and start:
                spans[start[0]] = range(start[1], i + 1)
                start = None
        assert spans.keys() == src.funcs.keys()
        for func in src.funcs:
            other = {i for f, r in spans.items() if f != func for i in r}
            text = "\n".join("" if i in other else line for i, line in enumerate(src.lines))
            errors = []
            for syms in tables:
                try:
                    c = compile_source(text, syms, str(path))
                    break
                except MCoreError as e:
                    errors.append(str(e))
            else:
                raise AssertionError(f"{path.name} {func}: {errors}")
            out = tmp_path / f"{path.stem}_{func}.c"
            out.write_text(c)
            r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                                f"-I{ROOT / 'sw' / 'runtime'}", str(out)], capture_output=True, text=True)
            assert r.returncode == 0, f"{path.name} {func}:\n{r.stderr}"
            compiled += 1
    assert compiled == sum(len(accel.Source(p).funcs) for p in accel.PROGRAMS.glob("*.c"))
