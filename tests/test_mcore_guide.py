"""The programmer guide's examples: every table of 5.1-5.5 and 5.7 reproduced exactly,
through `tsoc mcore expand --json` and through the reference executor; 5.6, 5.8-5.12 and
section 4 checked with the guide's own statements."""

import json
import pathlib
import re

import numpy as np
import pytest

from tensorsoc.cli import main as tsoc
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.mcore import api, symbols
from tensorsoc.verification.golden.tensor_exec import Machine

DATA = pathlib.Path(__file__).parent / "data" / "mcore"
SYMS_PATH = str(DATA / "guide_symbols.json")
SYMS = symbols.load(SYMS_PATH)
P = 0x100            # DDR address of the guide's p
VAR, SHARED_VAR, MYVAR = 16, 32, 64     # addresses in guide_symbols.json

# ---- the guide's tables, verbatim ------------------------------------------

T51 = """
0       0       private_var[0]       p[0]
0       0       private_var[1]       p[1]
0       1       private_var[0]       p[2]
0       1       private_var[1]       p[3]
1       0       private_var[0]       p[4]
1       0       private_var[1]       p[5]
1       1       private_var[0]       p[6]
1       1       private_var[1]       p[7]
"""
T52 = """
0       shared_var[0]      p[0]
0       shared_var[1]      p[1]
1       shared_var[0]      p[2]
1       shared_var[1]      p[3]
"""
T53 = """
SCRATCH[0]  <=   p[0]
SCRATCH[1]  <=   p[1]
SCRATCH[2]  <=   p[2]
SCRATCH[3]  <=   p[3]
"""
T54 = """
SCRATCH[0][0] <= p[0][0]
SCRATCH[0][1] <= p[0][1]
SCRATCH[1][0] <= p[1][0]
SCRATCH[1][1] <= p[1][1]
SCRATCH[2][0] <= p[2][0]
SCRATCH[2][1] <= p[2][1]
SCRATCH[3][0] <= p[3][0]
SCRATCH[3][1] <= p[3][1]
"""
T55 = """
0          0        0        p[0][0][0]
0          0        1        p[0][0][1]
0          0        2        p[0][0][2] <- (Out of bound-Replace with zero)
0          0        3        p[0][0][3] <- (Out of bound-Replace with zero)
0          1        0        p[0][1][0]
0          1        1        p[0][1][1]
0          1        2        p[0][1][2] <- (Out of bound-Replace with zero)
0          1        3        p[0][1][3] <- (Out of bound-Replace with zero)
0          2        0        p[0][2][0] <- (Out of bound-Replace with zero)
0          2        1        p[0][2][1] <- (Out of bound-Replace with zero)
0          2        2        p[0][2][2] <- (Out of bound-Replace with zero)
0          2        3        p[0][2][3] <- (Out of bound-Replace with zero)
"""
T57 = "\n".join(f"  {v}          {t}            {pc}             p[{k}]"
                for k, (v, t, pc) in enumerate((v, t, pc) for v in range(4) for t in range(2) for pc in range(3)))
T57_GUIDE_FIRST_ROWS = """
  0          0            0             p[0]
  0          0            1             p[1]
  0          0            2             p[2]
  0          1            0             p[3]
  3          1            2             p[23]
"""


def rows(table):
    out = []
    for line in table.strip().splitlines():
        out.append(([int(x) for x in re.findall(r"\d+", line)], "Out of bound" in line))
    return out


def expand_json(capsys, statement, *defines):
    argv = ["mcore", "expand", statement, "--symbols", SYMS_PATH, "--json"]
    for d in defines:
        argv += ["-D", d]
    assert tsoc(argv) == 0
    return json.loads(capsys.readouterr().out)


def run(statement, defines=None, machine=None, process=0):
    ins, err = api.instructions(statement, SYMS, dict(defines or {}, p=P), process=process)
    assert err == 0
    m = machine or new_machine()
    m.run_words(api.words(ins))       # through the binary encoding
    assert m.errors == 0
    return m, ins


def new_machine(**kw):
    m = Machine.from_config(SYMS.config, **kw)
    return m


def ddr_values(m, n, dtype="INT16", base=1000):
    vals = base + np.arange(n)
    m.ddr_write(P, vals, dtype)
    return vals


def fresh_with_ddr(n, **kw):
    m = new_machine(**kw)
    ddr_values(m, n)
    return m


# ---- 5.1 ----------------------------------------------------------------

S51 = ">PCORE[0:1].THREAD[0:1].myclass::myfunc.var[0:1] <= DDR(p)[0:2*2*2-1];"


def check_51(m):
    for (pc, th, v, k), _ in rows(T51):
        assert m.private[0, pc, th, VAR + v] == 1000 + k
    assert np.count_nonzero(m.private) == 8


def test_51_table_expand(capsys):
    got = expand_json(capsys, S51)
    want = [{"dst": {"space": "PCORE_PRIVATE", "index": [pc, th, v], "oob": False, "name": "myfunc.var"},
             "src": {"space": "DDR", "index": [k], "oob": False}} for (pc, th, v, k), _ in rows(T51)]
    assert got == want


def test_51_table_executor():
    m, _ = run(S51, machine=fresh_with_ddr(8))
    check_51(m)


# ---- 5.2 ----------------------------------------------------------------

S52 = ">PCORE[0:1].myclass::myfunc.shared_var[0:1] <= DDR(p)[0:2*2-1];"


def check_52(m, process=0):
    for (pc, v, k), _ in rows(T52):
        assert m.shared[process, pc, SHARED_VAR + v] == 1000 + k
    assert np.count_nonzero(m.shared) == 4


def test_52_table_expand(capsys):
    got = expand_json(capsys, S52)
    assert [(g["dst"]["index"], g["src"]["index"], g["dst"]["space"]) for g in got] == \
        [([pc, v], [k], "PCORE_SHARED") for (pc, v, k), _ in rows(T52)]


def test_52_table_executor():
    m, _ = run(S52, machine=fresh_with_ddr(4))
    check_52(m)


# ---- 5.3 / 5.4 ----------------------------------------------------------

S53 = ">SCRATCH(0,100)[0:len-1] <= DDR(p,100)[0:len-1];"
S54 = ">SCRATCH(0,100,200)[0:dy-1][0:dx-1] <= DDR(p,1000,2000)[0:dy-1][0:dx-1];"


def scratch_i16(m, elem):
    return int(np.int16(m.scratch[2 * elem] | (m.scratch[2 * elem + 1].astype(np.uint16) << 8)))


def check_53(m):
    for (i, k), _ in rows(T53):
        assert scratch_i16(m, i) == 1000 + k
    assert np.count_nonzero(m.scratch) == 2 * 4


def check_54(m):
    for (i, j, a, b), _ in rows(T54):
        assert scratch_i16(m, i * 200 + j) == 1000 + a * 2000 + b
    assert np.count_nonzero(m.scratch) == 2 * 8


def test_53_table(capsys):
    got = expand_json(capsys, S53, "len=4")
    assert [(g["dst"]["space"], g["dst"]["index"], g["src"]["index"], g["dst"]["oob"], g["src"]["oob"]) for g in got] == \
        [("SCRATCH", [i], [k], False, False) for (i, k), _ in rows(T53)]
    m = new_machine()
    ddr_values(m, 100)
    run(S53, {"len": 4}, machine=m)
    check_53(m)


def test_54_table(capsys):
    got = expand_json(capsys, S54, "dx=2", "dy=4")
    assert [(g["dst"]["index"], g["src"]["index"]) for g in got] == [([i, j], [a, b]) for (i, j, a, b), _ in rows(T54)]
    m = new_machine()
    ddr_values(m, 4 * 2000)
    run(S54, {"dx": 2, "dy": 4}, machine=m)
    check_54(m)


# ---- 5.5 ----------------------------------------------------------------

S55 = ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2,2)[0][0:2][0:3];"


def check_55(m, pad=0, value=lambda a, b, c: 1000 + a * 4 + b * 2 + c):
    for (pc, th, v, a, b, c), oob in rows(T55):
        assert m.private[0, pc, th, VAR + v] == (pad if oob else value(a, b, c))


def test_55_table_expand(capsys):
    got = expand_json(capsys, S55)
    assert [(g["dst"]["index"], g["src"]["index"], g["src"]["oob"], g["dst"]["oob"]) for g in got] == \
        [([pc, th, v], [a, b, c], oob, False) for (pc, th, v, a, b, c), oob in rows(T55)]


def test_55_table_executor():
    m, _ = run(S55, machine=fresh_with_ddr(400))
    check_55(m)


def test_55_expand_text_notes(capsys):
    assert tsoc(["mcore", "expand", S55, "--symbols", SYMS_PATH]) == 0
    out = capsys.readouterr().out.splitlines()
    notes = [("out of bound" in line) for line in out[2:]]
    assert notes == [oob for _, oob in rows(T55)]


# ---- 5.6 dimension casting ------------------------------------------------

S56A = ">PCORE(8)[:].THREAD[0:15].myclass::myvar[0:15] <= DDR(p)[0:8*16*16-1];"
S56B = ">PCORE(8)[:].THREAD(4,4)[0:3][0:3].myclass::myvar(4,4)[0:3][0:3] <= DDR(p)[0:8*16*16-1];"


def test_56_cast_same_mapping(capsys):
    a = expand_json(capsys, S56A)
    b = expand_json(capsys, S56B)
    flat = [[i[0], i[1] * 4 + i[2], i[3] * 4 + i[4]] for i in (g["dst"]["index"] for g in b)]
    assert flat == [g["dst"]["index"] for g in a]
    assert [g["src"] for g in a] == [g["src"] for g in b]
    ma, _ = run(S56A, machine=fresh_with_ddr(2048))
    mb, _ = run(S56B, machine=fresh_with_ddr(2048))
    assert np.array_equal(ma.private, mb.private)
    assert ma.private[0, 7, 15, MYVAR + 15] == 1000 + 2047


def test_59_unchecked_cast_dimension_runs_past_the_variable():
    """'+' after a cast dimension (5.9 on 5.6): not bound-checked, so the cast may hold more
    elements than the variable declares and run on into the variables after it; without '+'
    that is the cast error."""
    from tensorsoc.sw.mcore.errors import MCoreError
    from tensorsoc.sw.mcore.preprocessor import compile_source
    m, ins = run(">PCORE[0].THREAD[0].myclass::myfunc.var(56+)[:] <= DDR(p)[0:55];", machine=fresh_with_ddr(56))
    assert ins[0].dst.check_mask == 0b110          # PCORE and THREAD checked, the cast dimension not
    assert list(m.private[0, 0, 0, VAR:VAR + 56]) == [1000 + k for k in range(56)]
    assert m.private[0, 0, 0, MYVAR + 7] == 1000 + 55       # past myfunc.var, into myvar
    with pytest.raises(MCoreError, match="cast of 'myfunc.var' to 56 elements"):
        api.instructions(">PCORE[0].THREAD[0].myclass::myfunc.var(56)[:] <= DDR(p)[0:55];", SYMS, {"p": P})
    # At run time too: an unchecked cast is not given to ztamSideCast (the CAST flag).
    c = compile_source("void f(int n, unsigned p) {\n> PCORE[0].THREAD[0].myclass::myfunc.var(n+)[:] <= DDR(p)[0:n-1];\n}\n",
                       SYMS)
    assert "ztamSideDim" in c and "ztamSideCast" not in c
    assert "ztamSideCast" in compile_source(
        "void f(int n, unsigned p) {\n> PCORE[0].THREAD[0].myclass::myfunc.var(n)[:] <= DDR(p)[0:n-1];\n}\n", SYMS)


# ---- 5.7 reordering ---------------------------------------------------------

S57 = ">FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];"


def test_57_table_literal_rows_match_generated():
    assert set(map(tuple, (r for r, _ in rows(T57_GUIDE_FIRST_ROWS)))) <= set(map(tuple, (r for r, _ in rows(T57))))


def test_57_table(capsys):
    got = expand_json(capsys, S57)
    # the guide's columns are myvar, THREAD, PCORE; the JSON follows the statement: PCORE, THREAD, myvar
    assert [(g["dst"]["index"], g["src"]["index"]) for g in got] == [([pc, t, v], [k]) for (v, t, pc, k), _ in rows(T57)]
    m, _ = run(S57, machine=fresh_with_ddr(24))
    for (v, t, pc, k), _ in rows(T57):
        assert m.private[0, pc, t, MYVAR + v] == 1000 + k
    assert np.count_nonzero(m.private) == 24


# ---- 5.8 scatter --------------------------------------------------------------

S583 = ">FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];"
S584 = ">FOR(I=0:7) FOR(J=0:7) PCORE(8)[0:7].THREAD(2,8)[:][:].myclass::myvar[J] <= DDR(p)[0:8*16*8*8-1];"


@pytest.mark.parametrize("stmt", [S583, S584])
def test_58_scatter_keeps_the_mapping(stmt):
    scat = stmt.replace(">", ">SCATTER(0) ", 1)
    m1, i1 = run(stmt, machine=fresh_with_ddr(8192))
    m2, i2 = run(scat, machine=fresh_with_ddr(8192))
    assert np.array_equal(m1.private, m2.private)
    assert i1[0].scatter == 0 and i2[0].scatter == 1 and i2[0].scatter_n == 0
    assert i1[0].dst.levels == i2[0].dst.levels


def test_583_mapping():
    m, _ = run(S583, machine=fresh_with_ddr(8192))
    for k in (0, 1, 7, 8, 127, 128, 1023, 1024, 5000, 8191):
        i0, th, pc, I = k % 8, (k // 8) % 16, (k // 128) % 8, k // 1024
        assert m.private[0, pc, th, MYVAR + i0 * 8 + I] == int(np.int16(1000 + k))


def test_584_unused_for_repeats_the_destination():
    m, ins = run(S584, machine=fresh_with_ddr(8192))
    # J indexes myvar (outermost after the plain dims); I is a repeat: the last pass wins
    assert ins[0].dst.element_count() == 8192
    for k in (0, 1, 15, 16, 127, 1023):
        th, pc, J = k % 16, (k // 16) % 8, k // 128
        assert m.private[0, pc, th, MYVAR + J] == int(np.int16(1000 + 7 * 1024 + k))


# ---- 5.9 '+' dims -------------------------------------------------------------

S59 = ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2+,2+)[0][0:2][0:3];"


def test_59_unchecked_dims(capsys):
    got = expand_json(capsys, S59)
    assert not any(g["src"]["oob"] for g in got)
    m, _ = run(S59, machine=fresh_with_ddr(400))
    for (pc, th, v, a, b, c), _ in rows(T55):
        assert m.private[0, pc, th, VAR + v] == 1000 + a * 4 + b * 2 + c


# ---- 5.10 overlapped dims -------------------------------------------------------

def test_5101_overlap_limit(capsys):
    stmt = ">SCRATCH(0,20000)[:] <= DDR(p,1000(100,200))[:][:];"
    got = expand_json(capsys, stmt)
    assert len(got) == 20000
    assert [g["src"]["oob"] for g in got] == [i * 200 + j >= 1000 for i in range(100) for j in range(200)]
    m, _ = run(stmt, machine=fresh_with_ddr(1000, scratch_bytes=40000))
    got_vals = m.scratch.view(np.int16)[:20000]
    assert np.array_equal(got_vals[:1000], 1000 + np.arange(1000)) and not got_vals[1000:].any()


def test_5102_overlap_last_row_of_152(capsys):
    stmt = ">SCRATCH(0,5120)[:] <= DDR(p,100,32,152(10,16))[:][:][:];"
    got = expand_json(capsys, stmt)
    want = [(0, a, b, c, b * 16 + c >= 152) for a in range(32) for b in range(10) for c in range(16)]
    assert [tuple(g["src"]["index"]) + (g["src"]["oob"],) for g in got] == want
    m, _ = run(stmt, machine=fresh_with_ddr(32 * 152))
    vals = m.scratch.view(np.int16)[:5120]
    for n, (_, a, b, c, oob) in enumerate(want):
        assert vals[n] == (0 if oob else 1000 + a * 152 + b * 16 + c)
    # each 10x16 block keeps 9 full rows of 16 and a last row of 152-(10-1)*16 = 8
    assert sum(not w[4] for w in want[:160]) == 152


# ---- 5.11 PAD, 5.12 data types ----------------------------------------------------

def test_511_pad():
    stmt = ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];"
    m, _ = run(stmt, machine=fresh_with_ddr(400))
    check_55(m, pad=0xFF)


def test_512_uint8_zero_extends_and_pads():
    stmt = ">(fmt)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= (fmt)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];"
    m = new_machine()
    ddr_values(m, 400, "UINT8", base=200)       # bytes 200.. (>127: zero extension shows)
    run(stmt, {"fmt": isa.dtype("UINT8")}, machine=m)
    check_55(m, pad=255, value=lambda a, b, c: (200 + a * 4 + b * 2 + c) & 0xFF)


def test_512_int8_sign_extends_and_pads():
    stmt = ">(DP_DATA_TYPE_INT8)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= " \
           "(DP_DATA_TYPE_INT8)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];"
    m = new_machine()
    ddr_values(m, 400, "UINT8", base=200)
    run(stmt, machine=m)
    check_55(m, pad=-1, value=lambda a, b, c: int(np.int8(np.uint8(200 + a * 4 + b * 2 + c))))


def test_512_uint8_write_to_ddr_truncates_and_packs():
    m = new_machine()
    m.private[0, 0, 0, VAR:VAR + 4] = [0x1234, -1, 0x00FF, 0x0180]
    run(">(DP_DATA_TYPE_UINT8)DDR(p)[0:3] <= (DP_DATA_TYPE_INT16)PCORE[0].THREAD[0].myclass::myfunc.var[0:3];",
        machine=m)
    assert list(m.ddr[P:P + 5]) == [0x34, 0xFF, 0xFF, 0x80, 0]


# ---- section 4: tensor variables --------------------------------------------------

S4 = """
> $coef_pcore := (weightfmt)PCORE(group,groupsz)[:][*].convolution::coef[0:kz-1][:];
> $coef_ddr := (weightfmt)MEM(coef,botcnt2,topcnt3)[$][rowi:rowi+gkz-1];
> $coef_pcore <= $coef_ddr[jj];
"""
S4_EXPANDED = ">(weightfmt)PCORE(group,groupsz)[:][*].convolution::coef[0:kz-1][:] <= " \
              "(weightfmt)MEM(coef,botcnt2,topcnt3)[jj][rowi:rowi+gkz-1];"
S4_VALUES = {"weightfmt": isa.dtype("INT16"), "group": 2, "groupsz": 4, "kz": 2, "botcnt2": 4, "topcnt3": 64,
             "rowi": 3, "gkz": 32, "jj": 1, "coef": P}


def test_4_tensor_variables_substitute():
    a, _ = api.instructions(S4, SYMS, S4_VALUES)
    b, _ = api.instructions(S4_EXPANDED, SYMS, S4_VALUES)
    assert a == b


def test_4_tensor_variables_execute_with_broadcast():
    m = fresh_with_ddr(4 * 64)
    ins, _ = api.instructions(S4, SYMS, S4_VALUES)
    m.run(ins)
    assert m.errors == 0
    for g in range(2):
        for s in range(4):          # [*]: every PCORE of the second dimension
            for t in range(16):     # no THREAD on a private destination: every thread
                for r in range(2):
                    for c in range(8):
                        src = 1 * 64 + 3 + g * 16 + r * 8 + c
                        assert m.private[0, g * 4 + s, t, 200 + r * 8 + c] == 1000 + src
    assert np.count_nonzero(m.private) == 2 * 4 * 16 * 16


# ---- section 3: tensor objects and range defaults ------------------------------------

def _dst_src(stmt, **defines):
    ins, err = api.instructions(stmt, SYMS, dict(defines, p=P))
    assert err == 0
    return ins[0]


@pytest.mark.parametrize("short", ["DDR(p,100,200)[0:19][20:29]", "DDR(p,100,200)[:19][20:29]",
                                   "MEM(p,100,200)[0:1:19][20:1:29]"])
def test_3_1_default_begin_and_stride(short):
    full = "DDR(p,100,200)[0:1:19][20:1:29]"
    a = _dst_src(f"SCRATCH(0,20,10)[:][:] <= {full};")
    b = _dst_src(f"SCRATCH(0,20,10)[:][:] <= {short};")
    assert a == b


def test_3_1_default_end():
    a = _dst_src("SCRATCH(0,100,180)[:][:] <= DDR(p,100,200)[0:][20:];")
    b = _dst_src("SCRATCH(0,100,180)[:][:] <= DDR(p,100,200)[0:99][20:199];")
    assert a == b and a.src.element_count() == 100 * 180


def test_3_2_scratch_with_runtime_ranges(capsys):
    got = expand_json(capsys, "SCRATCH(0,8)[0:5] <= SCRATCH(p,dy,dx)[y:dy-1][x:dx-1];", "dy=3", "dx=4", "y=1", "x=1")
    assert [g["src"]["index"] for g in got] == [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3]]


@pytest.mark.parametrize("pcore", ["PCORE(8)[0:7].thread[0:15]", "PCORE(4,2)[0:3][0:1].thread[0:15]",
                                   "PCORE(dy,dx)[0:dy-1][0:dx-1].thread[0:15]"])
def test_3_3_private_layouts_are_the_same_8_pcores(pcore):
    stmt = f"{pcore}.class::private_variable[:] <= DDR(p)[0:8*16*16-1];"
    m, _ = run(stmt, {"dy": 4, "dx": 2}, machine=fresh_with_ddr(2048))
    assert np.array_equal(m.private[0, :, :, 300:316].reshape(-1), 1000 + np.arange(2048))


@pytest.mark.parametrize("pcore", ["PCORE(8)[0:7]", "PCORE(4,2)[0:3][0:1]", "PCORE(4,2)[0:dy-1][0:dx-1]"])
def test_3_4_shared_layouts(pcore):
    m, _ = run(f"{pcore}.class::shared_variable[:] <= DDR(p)[0:8*16-1];", {"dy": 4, "dx": 2},
               machine=fresh_with_ddr(128))
    assert np.array_equal(m.shared[0, :, 100:116].reshape(-1), 1000 + np.arange(128))
