"""User errors: file:line:column, the offending text and what was expected; never a traceback."""

import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorsoc.cli import main as tsoc
from tensorsoc.sw.mcore import symbols
from tensorsoc.sw.mcore.errors import MCoreError
from tensorsoc.verification.golden.expand import expand
from tensorsoc.sw.mcore.preprocessor import compile_source

DATA = pathlib.Path(__file__).parent / "data" / "mcore"
SYMS_PATH = str(DATA / "guide_symbols.json")
SYMS = symbols.load(SYMS_PATH)


def compile_error(tmp_path, capsys, line, use_symbols=True):
    f = tmp_path / "prog.c"
    f.write_text("int main(void) {\n    int p = 0;\n" + line + "\n    return 0;\n}\n")
    argv = ["mcore", "compile", str(f), "-o", str(tmp_path / "out.c")]
    if use_symbols:
        argv += ["--symbols", SYMS_PATH]
    assert tsoc(argv) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(f"tsoc: error: {f}:3:")
    return first[len(f"tsoc: error: {f}:3:"):], err


CASES = [
    # (line, column, message part, offending text, expected part)
    ("    >PCORE[0].THREAD[0].nosuch::var[0] <= DDR(p)[0];", 25, "unknown class", "nosuch", "a class of the PCORE program"),
    ("    >PCORE[0].THREAD[0].myclass::nosuch[0] <= DDR(p)[0];", 34, "unknown variable of class 'myclass'", "nosuch",
     "one of: myfunc.shared_var, myfunc.var, myvar"),
    ("    >SCRATCH(0,100)[0:3] <= DDR(p,100)[0:4];", 26, "element count mismatch: destination has 4 elements, source has 5",
     "<=", "the same number of elements on both sides"),
    ("    >SCRATCH(0,100)[0:1:2:3] <= DDR(p,100)[0:1];", 26, "malformed range", ":", "at most begin:stride:end"),
    ("    >SCRATCH(0,100)[] <= DDR(p,100)[0:1];", 21, "malformed range", "]", "an index or begin:stride:end"),
    ("    >SCRATCH(0,100)[0:0:4] <= DDR(p,100)[0:4];", 23, "malformed range: stride 0", "0", "a non-zero stride"),
    ("    >SCRATCH(0,100)[5:1] <= DDR(p,100)[0:4];", 21, "malformed range: empty (5:1:1)", "5", "end reachable"),
    ("    >SCRATCH(0,100)[0 1] <= DDR(p,100)[0:1];", 23, "malformed range", "1", "']' after begin:stride:end"),
    ("    >FOO(p)[0] <= DDR(p)[0];", 6, "unknown keyword", "FOO", "DDR, MEM, SCRATCH, PCORE"),
    ("    >SCRATCH(0,100)[0] <= DRR(p)[0];", 27, "unknown keyword", "DRR", "DDR, MEM, SCRATCH, PCORE"),
    ("    >SCRATCH(0,100)[0] <= DDR(p)[0]", 36, "missing ';'", "", "';' ending the statement"),
    ("    >SCRATCH(0,100)[0] < DDR(p)[0];", 24, "unexpected text", "<", "'<=' then the source tensor"),
    ("    >SCRATCH(0,100)[0] <= $nope;", 28, "unknown tensor variable", "nope", "a $variable defined earlier"),
    ("    >DDR(p)[:] <= SCRATCH(0,4)[:];", 13, "range without an end on a tensor without dimensions", ":",
     "an explicit end"),
    ("    >PCORE(3)[0].THREAD[0].myclass::myvar[0] <= DDR(p)[0];", 12, "PCORE dimension 3 is not a power of 2", "3",
     "a power of 2"),
    ("    >PCORE[0].THREAD[0].myclass::myvar(9,9)[0][0] <= DDR(p)[0];", 34, "cast of 'myvar' to 81 elements", "myvar",
     "at most the 64 elements"),
    ("    >SCRATCH(0,100)[0] <= PROC(5) <= DDR(p)[0];", 27, "PROC(5): no such stream program", "PROC", "0..3"),
    ("    >DDR(p,4,4)[0][0][0] <= DDR(p)[0];", 23, "more ranges than dimensions", "0", "at most 2 range(s)"),
    ("    int f = ztamBuildKernelFunc($convolution::nope, 1, 1);", 47, "unknown function or variable of class 'convolution'", "nope",
     "one of: exe, init, coef, input, kernel, output"),
    ("    >EXE_LOCKSTEP(nosuch::exe);", 19, "unknown class", "nosuch", "a class of the PCORE program"),
]


@pytest.mark.parametrize("line,col,msg,text,expected", CASES)
def test_error_location_text_expected(tmp_path, capsys, line, col, msg, text, expected):
    rest, full = compile_error(tmp_path, capsys, line)
    assert rest.startswith(f"{col}: {msg}"), rest
    if text:
        assert f": '{text}'" in rest
    assert "; expected " + expected in rest
    caret = full.splitlines()[2]
    assert caret.index("^") == 4 + col - 1        # the caret sits under the offending text


def test_without_symbols_a_class_is_unknown(tmp_path, capsys):
    rest, _ = compile_error(tmp_path, capsys, "    >PCORE[0].THREAD[0].myclass::myvar[0] <= DDR(p)[0];",
                            use_symbols=False)
    assert rest.startswith("25: unknown class: 'myclass'; expected a class of the PCORE program (known: none")


def test_tensor_variable_argument_count(tmp_path, capsys):
    rest, _ = compile_error(tmp_path, capsys, "    >$a := DDR(p,4,4)[$][$]; SCRATCH(0,4)[:] <= $a[1];")
    assert "tensor variable $a takes 2 argument(s)" in rest


def test_expand_needs_values(capsys):
    assert tsoc(["mcore", "expand", "SCRATCH(0,100)[0:n] <= DDR(p,100)[0:n];"]) == 1
    err = capsys.readouterr().err
    assert "'n' has no value at expand time" in err and "expected -D n=VALUE" in err


def test_symbol_file_errors(tmp_path, capsys):
    bad = tmp_path / "s.json"
    bad.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, "classes": {"c": {"variables": '
                   '{"v": {"space": "global", "addr": 0, "dims": [4]}}}}}')
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(bad)]) == 1
    assert "variable 'c::v' space: expected \"private\" or \"shared\"" in capsys.readouterr().err
    bad.write_text("{nope")
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(bad)]) == 1
    assert f"{bad}:1:2: not valid JSON" in capsys.readouterr().err


def test_runtime_count_mismatch_is_not_a_compile_error():
    c = compile_source("void f(int n, unsigned p) {\n>SCRATCH(0,100)[0:n] <= DDR(p,100)[0:4];\n}\n", SYMS, "f.c")
    assert "ztamIssueXfer(&_zx);" in c


# ---- fuzzing: any input ends in generated C or in MCoreError ----------------------------

VOCAB = ["DDR", "MEM", "SCRATCH", "PCORE", "THREAD", "thread", "SPU", "PAD", "PROC", "FOR", "SCATTER",
         "EXE_LOCKSTEP", "CALLBACK", "LOG_ON", "LOG_OFF", "myclass", "myvar", "myfunc", "var", "convolution", "exe",
         "coef", "p", "n", "I", "K", "int", "$", "$a", ":=", "::", ".", "<=", "<", "(", ")", "[", "]", ":", ";", ",",
         "+", "-", "*", "/", "%", "?", "0", "1", "2", "3", "7", "16", "100", "0xff", "=", "\"s\"", "'c'", "@", "#"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(VOCAB), max_size=30), st.sampled_from([" ", ""]))
def test_fuzz_token_soup(tokens, sep):
    line = ">" + sep.join(tokens)
    for text in (line, "int x;\n" + line + "\n$myclass::" + "".join(tokens[:2])):
        try:
            compile_source(text, SYMS, "fuzz.c")
        except MCoreError:
            pass
    try:
        expand(line, SYMS, {"n": 3})
    except MCoreError:
        pass


GOOD = [
    "PCORE[0:1].THREAD[0:1].myclass::myfunc.var[0:1] <= DDR(p)[0:7];",
    "FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];",
    "SCRATCH(0,100,32,152(10,16))[0][0:1][:][:] <= PAD(3) (DP_DATA_TYPE_INT8)DDR(p,100,32+,152(10,16))[1][:1][:][:];",
    "$a := DDR(p,8,8)[$][0:7]; PCORE(8)[:][*].myclass::myfunc.shared_var[0:3] <= $a[1];",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(GOOD), st.integers(0, 200), st.integers(0, 3), st.text(alphabet="[]():;,+-*$.<=0123456789 Kn",
                                                                              max_size=4))
def test_fuzz_mutated_statements(stmt, pos, cut, insert):
    pos = min(pos, len(stmt))
    text = stmt[:pos] + insert + stmt[pos + cut:]
    try:
        compile_source(">" + text + "\n", SYMS, "fuzz.c")
    except MCoreError:
        pass
    try:
        expand(text, SYMS, {"n": 2})
    except MCoreError:
        pass


# ---- defects of issue 20, each with its reproducer ----------------------------------------

def test_bracketed_overlap_limit(capsys):
    """Guide 5.10: the overlap limit may be a bracketed expression, (a*b)(a,b)."""
    argv = ["mcore", "expand", "-D", "p=0", "-D", "a=10", "-D", "b=20", "--json",
            "SCRATCH(0,1000)[0:199] <= DDR(p,(a*b)(a,b))[:][:];"]
    assert tsoc(argv) == 0
    import json
    records = json.loads(capsys.readouterr().out)
    assert [r["src"]["index"] for r in records] == [[i, j] for i in range(10) for j in range(20)]
    c = compile_source("void f(unsigned p, int a, int b) {\n>SCRATCH(0,1000)[0:199] <= DDR(p,(a*b)(a,b))[:][:];\n}\n",
                       SYMS, "f.c")
    assert "((a * b))(a, b)" not in c and "ztamSideOverlap(&_zx, &_zx.src, ((a * b)));" in c


def test_c_cast_in_pointer(capsys):
    assert tsoc(["mcore", "expand", "-D", "p=0", "--json", "SCRATCH(0,100)[0:3] <= DDR((int)p,100)[0:3];"]) == 0
    assert len(capsys.readouterr().out.split('"dst"')) == 5


@pytest.mark.parametrize("pointer,msg", [("(" * 200 + "p" + ")" * 200, "expression nested too deeply"),
                                         ("p" + "+1" * 3000, "expression too long"),
                                         ("-" * 500 + "p", "expression nested too deeply")])
def test_deep_nesting_is_an_error_not_a_recursion_error(pointer, msg):
    with pytest.raises(MCoreError) as e:
        expand(f"SCRATCH(0,100)[0:3] <= DDR({pointer},100)[0:3];", SYMS, {"p": 0})
    assert e.value.message == msg and e.value.line == 1
    with pytest.raises(MCoreError):
        compile_source(f">SCRATCH(0,100)[0:3] <= DDR({pointer},100)[0:3];\n", SYMS, "f.c")


def test_non_utf8_source_is_an_error_at_its_line(tmp_path, capsys):
    f = tmp_path / "prog.m"
    f.write_bytes(b"int x;\n>SCRATCH(0,4)[0] <= DDR(p)[0]; // caf\xe9\n")
    assert tsoc(["mcore", "compile", str(f), "-o", str(tmp_path / "out.c")]) == 1
    err = capsys.readouterr().err
    assert f"{f}:2:38: byte 0xe9 is not UTF-8 text; expected a UTF-8 source" in err


@pytest.mark.parametrize("classes,msg", [
    ('{"c": {"variables": []}}', "class 'c' 'variables': expected an object"),
    ('{"c": {"functions": [1]}}', "class 'c' 'functions': expected an object"),
    ('{"c": {"variables": {"v": {"space": "private", "addr": true, "dims": [4]}}}}', "variable 'c::v' addr"),
])
def test_symbol_file_with_list_tables(tmp_path, capsys, classes, msg):
    bad = tmp_path / "s.json"
    bad.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, "classes": ' + classes + "}")
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(bad)]) == 1
    assert msg in capsys.readouterr().err


def test_expression_without_value_is_named_at_its_column(capsys):
    assert tsoc(["mcore", "expand", "-D", "p=0", "SCRATCH(0,100)[0:3] <= DDR(p,req->n)[0:3];"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("tsoc: error: <statement>:1:30: 'req->n' cannot be evaluated at expand time")
    assert "'mem'" not in first


def test_symbol_file_without_classes_says_so(tmp_path, capsys):
    s = tmp_path / "s.json"
    s.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1}')
    assert tsoc(["mcore", "expand", "PCORE[0].THREAD[0].c::v[0] <= DDR(p,100)[0];", "--symbols", str(s)]) == 1
    err = capsys.readouterr().err
    assert f"(known: none: {s} declares no classes)" in err and "pass --symbols" not in err


def _compile_line(tmp_path, syms, capsys, statement):
    """``>statement;`` on line 3 of a C file, compiled with the symbol file
    ``syms``: (the file, tsoc's exit status, its stderr)."""
    src = tmp_path / "prog.c"
    src.write_text(f"int main(void) {{\n    int p = 0;\n    >{statement};\n    return 0;\n}}\n")
    rc = tsoc(["mcore", "compile", str(src), "-o", str(tmp_path / "out.c"), "--symbols", str(syms)])
    return src, rc, capsys.readouterr().err


def test_more_dimensions_than_the_engine_has_levels(tmp_path, capsys):
    """A symbol file for a TensorEngine of four loop levels (config
    te_levels): a five-dimensional tensor is refused at its line, with the
    limit and where it comes from; four dimensions compile; te_levels beyond
    the format's 8 is a symbol-file error."""
    syms = tmp_path / "s.json"
    syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, "config": {"te_levels": 4}}')
    for dims, ok in ((4, True), (5, False)):
        shape = ",".join(["2"] * dims)
        src, rc, err = _compile_line(tmp_path, syms, capsys,
                                     f"SCRATCH(0,{shape})[:]{'[:]' * (dims - 1)} <= DDR(p,{shape})[:]{'[:]' * (dims - 1)}")
        if ok:
            assert rc == 0, err
        else:
            assert rc == 1
            assert f"{src}:3:" in err and "tensor with 5 dimensions" in err
            assert "at most 4 (the TensorEngine's loop levels, config te_levels; the format allows 8)" in err
    syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, "config": {"te_levels": 9}}')
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(syms)]) == 1
    assert "config.te_levels: expected 2 to 8" in capsys.readouterr().err


def test_a_destination_deeper_than_te_dst_levels(tmp_path, capsys):
    """config te_dst_levels (2 here, under te_levels 4): a four-level source
    into a two-level destination compiles; a three-level destination is
    refused at its line, naming te_dst_levels; te_dst_levels above
    te_levels is a symbol-file error."""
    syms = tmp_path / "s.json"
    syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, '
                    '"config": {"te_levels": 4, "te_dst_levels": 2}}')
    for dst, ok in (("SCRATCH(0,4,4)[:][:]", True), ("SCRATCH(0,2,2,4)[:][:][:]", False)):
        src, rc, err = _compile_line(tmp_path, syms, capsys, f"{dst} <= DDR(p,2,2,2,2)[:][:][:][:]")
        if ok:
            assert rc == 0, err
        else:
            assert rc == 1
            assert f"{src}:3:" in err and "tensor with 3 dimensions" in err
            assert "at most 2 (the TensorEngine's loop levels, config te_dst_levels; the format allows 8)" in err
    syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, '
                    '"config": {"te_levels": 4, "te_dst_levels": 5}}')
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(syms)]) == 1
    assert "config.te_dst_levels: expected at most config.te_levels (4)" in capsys.readouterr().err


def test_an_overlapped_destination_without_te_dst_overlap(tmp_path, capsys):
    """config te_dst_overlap=0: an overlapped group L(d1,d2) is refused in a
    destination at its line, naming the field; in a source, and in a
    destination where the engine has destination overlap, it compiles; a
    value other than 0 or 1 is a symbol-file error."""
    statement = "SCRATCH(0,3,10(2,4))[:][:][:] <= DDR(p,3,2,4)[:][:][:]"
    for overlap, ok in ((1, True), (0, False)):
        syms = tmp_path / "s.json"
        syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, '
                        f'"config": {{"te_levels": 4, "te_dst_overlap": {overlap}}}}}')
        src, rc, err = _compile_line(tmp_path, syms, capsys, statement)
        if ok:
            assert rc == 0, err
        else:
            assert rc == 1
            assert f"{src}:3:" in err and "overlapped dimension in a destination" in err
            assert "config te_dst_overlap=0; an engine with --set te_dst_overlap=1 takes it" in err
    src, rc, err = _compile_line(tmp_path, syms, capsys, "SCRATCH(0,3,2,4)[:][:][:] <= DDR(p,3,10(2,4))[:][:][:]")
    assert rc == 0, err
    syms.write_text('{"format": "tensorsoc-pcore-symbols", "version": 1, "config": {"te_dst_overlap": 2}}')
    assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(syms)]) == 1
    assert "config.te_dst_overlap: expected 0 or 1" in capsys.readouterr().err


def test_overlap_offset_bits_in_a_symbol_file(tmp_path, capsys):
    """config te_ovl_bits (the engine's overlap offset width): 16 to 48 is
    taken, anything else is a symbol-file error naming the file and the
    key; a missing key means 48."""
    syms = tmp_path / "s.json"
    for bits in (16, 24, 48):
        syms.write_text(f'{{"format": "tensorsoc-pcore-symbols", "version": 1, "config": {{"te_ovl_bits": {bits}}}}}')
        assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(syms)]) == 0
    capsys.readouterr()
    for bits in (15, 49):
        syms.write_text(f'{{"format": "tensorsoc-pcore-symbols", "version": 1, "config": {{"te_ovl_bits": {bits}}}}}')
        assert tsoc(["mcore", "expand", "DDR(p)[0] <= DDR(p)[0];", "--symbols", str(syms)]) == 1
        err = capsys.readouterr().err
        assert str(syms) in err and "config.te_ovl_bits: expected 16 to 48" in err
    from tensorsoc.sw.mcore import symbols
    assert symbols.from_dict({"format": "tensorsoc-pcore-symbols", "version": 1}).config["te_ovl_bits"] == 48
