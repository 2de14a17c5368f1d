"""ztachip's MCORE dialect (docs/mcore.md, "ztachip's dialect"): each construct compiles
to the same instructions as the guide's spelling of it; keywords without a tensorsoc
meaning are refused with a message naming them and what to write instead."""

import numpy as np
import pytest

from tensorsoc.sw.mcore import api, symbols
from tensorsoc.sw.mcore.errors import MCoreError
from tensorsoc.verification.golden.expand import expand
from tensorsoc.sw.mcore.preprocessor import compile_source
from test_mcore_errors import SYMS_PATH
from tensorsoc.verification.golden.tensor_exec import Machine

SYMS = symbols.load(SYMS_PATH)
DEFINES = {"p": 0x100, "n": 3, "fmt": 1}
MYVAR = 64              # address of myclass::myvar in guide_symbols.json


def same_instructions(dialect, guide):
    got, err = api.instructions(dialect, SYMS, DEFINES)
    want, err_want = api.instructions(guide, SYMS, DEFINES)
    assert err == err_want == 0
    assert got and got == want


PAIRS = {
    "dtype": ("DTYPE(INT8)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DTYPE(INT8)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];",
              "(DP_DATA_TYPE_INT8)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= (DP_DATA_TYPE_INT8)PAD(0xff) "
              "DDR(p,100,2,2)[0][0:2][0:3];"),
    "dtype_variable": ("DTYPE(fmt)SCRATCH(0,100)[0:3] <= DTYPE(fmt)DDR(p,100)[0:3];",
                       "(fmt)SCRATCH(0,100)[0:3] <= (fmt)DDR(p,100)[0:3];"),
    "cast_spelling": ("CAST(UINT8)SCRATCH(0,100)[0:3] <= CAST(UINT8)DDR(p,100)[0:3];",
                      "(uint8_t)SCRATCH(0,100)[0:3] <= (uint8_t)DDR(p,100)[0:3];"),
    "concurrent": ("CONCURRENT FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];",
                   "SCATTER(0) FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];"),
    "concurrent_n": ("CONCURRENT(2) SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];",
                     "SCATTER(2) SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];"),
    "type_before_for": ("(short) FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];",
                        "FOR(K=0:3) FOR(I=0:1) (short)PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];"),
    "for_on_the_source": ("DDR(p)[0:2*3*4-1] <= (short) FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K];",
                          "FOR(K=0:3) FOR(I=0:1) DDR(p)[0:2*3*4-1] <= (short)PCORE[0:2].THREAD[I].myclass::myvar[K];"),
    "scatter_after_type": ("DDR(p)[0:2*3*4-1] <= (short) SCATTER(0) FOR(K=0:3) PCORE[0:2].THREAD[0:1].myclass::myvar[K];",
                           "SCATTER(0) FOR(K=0:3) DDR(p)[0:2*3*4-1] <= (short)PCORE[0:2].THREAD[0:1].myclass::myvar[K];"),
    "bare_class_var": ("myclass::myfunc.shared_var[0:3] <= DDR(p)[0:3];",
                       "PCORE[*].myclass::myfunc.shared_var[0:3] <= DDR(p)[0:3];"),
    "bare_private_var": ("myclass::myvar[0:3] <= DDR(p)[0:3];",
                         "PCORE[*].THREAD[*].myclass::myvar[0:3] <= DDR(p)[0:3];"),
    "c_cast_in_pointer": ("SCRATCH(0,100)[0:3] <= DDR((uint32_t)p,100)[0:3];",
                          "SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];"),
    "struct_pointer_cast": ("SCRATCH((unsigned int)(REQUEST *)0,100)[0:3] <= DDR((int)p + 2*n,100)[0:3];",
                            "SCRATCH(0,100)[0:3] <= DDR(p + 6,100)[0:3];"),
    "pcore_shorthand": ("PCORE(8)[1][:].myclass::myvar[0] <= DDR(p)[0:15];",
                        "PCORE(8)[1].THREAD[:].myclass::myvar[0] <= DDR(p)[0:15];"),
    "pcore_shorthand_2d": ("PCORE(4,2)[0:3][1][0:7].myclass::myvar[0:1] <= DDR(p)[0:63];",
                           "PCORE(4,2)[0:3][1].THREAD[0:7].myclass::myvar[0:1] <= DDR(p)[0:63];"),
    "for_in_variable": ("$v := (short) FOR(J=0:3) PCORE[0].THREAD[0:1].myclass::myvar[J];\nDDR(p)[0:7] <= $v;",
                        "FOR(J=0:3) DDR(p)[0:7] <= (short)PCORE[0].THREAD[0:1].myclass::myvar[J];"),
    "multi_line": (">SCRATCH(0,100,200)[0:n][0:1]\n>   <= DDR(p,1000,2000)\n>      [0:n][0:1];",
                   ">SCRATCH(0,100,200)[0:n][0:1] <= DDR(p,1000,2000)[0:n][0:1];"),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_dialect_compiles_like_the_guide(name):
    same_instructions(*PAIRS[name])


def test_scalar_source_is_an_all_out_of_bound_pad_read():
    """``A <= INT16(x)``: in the guide's terms a PAD(x) source read entirely out of bound (5.11)."""
    (t,), err = api.instructions("PCORE[0:1].THREAD[0:1].myclass::myvar[0:2] <= INT16(n*100+7);", SYMS, DEFINES)
    assert err == 0 and t.pad == 307
    records, _ = expand("PCORE[0:1].THREAD[0:1].myclass::myvar[0:2] <= INT16(-5);", SYMS)
    assert len(records) == 12 and all(r["src"]["oob"] and not r["dst"]["oob"] for r in records)
    m = Machine.from_config(SYMS.config)
    ins, _ = api.instructions("FOR(I=0:1) PCORE[0:1].THREAD[0:1].myclass::myvar[0:2] <= INT16(-5);", SYMS)
    m.run_words(api.words(ins))
    assert m.errors == 0
    assert np.all(m.private[0, 0:2, 0:2, MYVAR:MYVAR + 3] == -5)
    assert np.count_nonzero(m.private) == 12


def test_scalar_source_in_c():
    c = compile_source("void f(int x) {\n> myclass::myvar[0:3] <= INT8(x);\n}\n", SYMS, "f.c")
    line = c.splitlines()[3]
    assert "ztamXferInit(&_zx, 0, 0, 0, 0, x);" in line and "ZTAM_DTYPE_INT8" in line


def test_multi_line_statement_keeps_one_output_line_per_input_line():
    src = "void f(unsigned p) {\n   > SCRATCH(0,100)[0:3]\n   >    <= DDR(p,100)[0:3]; LOG_ON;\n   int x;\n}\n"
    out = compile_source(src, SYMS, "f.c").splitlines()[2:]
    assert len(out) == 5
    assert "ztam" not in out[1] and "/* > SCRATCH(0,100)[0:3] */" in out[1]
    assert "ztamIssueXfer" in out[2] and "ztamLog(1);" in out[2]


def test_unfinished_statement_before_c_is_missing_its_semicolon():
    with pytest.raises(MCoreError) as e:
        compile_source("> SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3]\nint x;\n", SYMS, "f.c")
    assert (e.value.line, e.value.message) == (1, "missing ';'")


REFUSED = [
    ("PROG(1) <= DDR(p,100)[0:3];", "PROG", "stream programs loaded with 'SPU <= tensor;'"),
    ("LATEST;", "LATEST", "a plain transfer"),
    ("REMAP(1) SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];", "REMAP", "FOR(I=begin:end) directives"),
    ("BARRIER;", "BARRIER", "'CALLBACK(function, parm);'"),
    ("VAR x := DDR(p,100)[0:3];", "VAR", "a tensor variable: '$name := tensor;'"),
    ("PCORES(8)[0].THREAD[0].myclass::myvar[0] <= DDR(p)[0];", "PCORES", "PCORE(dims)[ranges]"),
    ("SCRATCH(0,100)[0:3] <= HSCRATCH(0,100)[0:3];", "HSCRATCH", "SCRATCH(address, dims...)"),
]


@pytest.mark.parametrize("stmt,word,instead", REFUSED)
def test_ztachip_keywords_are_refused_by_name(stmt, word, instead):
    with pytest.raises(MCoreError) as e:
        compile_source("  >" + stmt + "\n", SYMS, "z.m")
    err = e.value
    assert err.message == f"ztachip's {word} has no tensorsoc equivalent" and err.text == word
    assert err.expected.startswith(instead) and err.line == 1
    assert str(err).splitlines()[0].startswith(f"z.m:1:{3 + stmt.index(word) + 1}:")


@pytest.mark.parametrize("stmt,msg,expected", [
    ("DTYPE(BFLOAT)SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];", "data type BFLOAT", "UINT8, INT8 or INT16"),
    ("INT16(3) <= DDR(p,100)[0:3];", "INT16(value) as a destination", "a scalar only as the source"),
    ("SCRATCH(0,100)[0:3] <= PAD(1) INT16(3);", "qualifier on the scalar INT16(value)", "INT16(value) alone"),
    ("DDR(p)[0:3] <= myclass::myvar[0:3];", "'myclass::myvar' without PCORE as a source", "PCORE[i].THREAD[j]"),
    ("SPU <= INT16(3);", "scalar source of an SPU load", "a tensor holding the stream programs"),
    ("CONCURRENT SCATTER(0) SCRATCH(0,100)[0:3] <= DDR(p,100)[0:3];", "SCATTER given twice", "one SCATTER(n)"),
])
def test_dialect_misuse_is_a_clear_error(stmt, msg, expected):
    with pytest.raises(MCoreError) as e:
        api.instructions(stmt, SYMS, DEFINES)
    assert e.value.message == msg and e.value.expected.startswith(expected)
