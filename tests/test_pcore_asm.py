"""The PCORE assembler: symbol table format, encodings, structure, errors, CLI."""

import json

import pytest

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.pcore.asm import AsmError, assemble, load_image
from tensorsoc.verification.pcore.workloads import KERNELS

EXAMPLE = """\
# the example of the symbol-table specification
const KZ = 16
class convolution {
    private coef[KZ][8]
    shared kernel[64]
    func exe {
        private tmp[8]
        seta a0, coef, VW
        seta a1, tmp, VW
        seta a2, kernel, VW
        loop 4 {
            mul p[a1+], p[a0+], s[a2+], 8
        }
    }
}
"""


def asm(text, **kw):
    return assemble([("prog.pcore", text)], **kw)


def test_symbol_table_format():
    sym = asm(EXAMPLE).symbols()
    assert sym["format"] == "tensorsoc-pcore-symbols" and sym["version"] == 1
    assert sym["config"] == {"np": 4, "nt": 8, "vw": 8, "private_words": 512, "shared_words": 4096, "te_levels": 8,
                             "te_dst_levels": 8, "te_dst_overlap": 1, "te_ovl_bits": 48}
    conv = sym["classes"]["convolution"]
    assert conv["variables"] == {
        "coef": {"space": "private", "addr": 0, "dims": [16, 8]},
        "exe.tmp": {"space": "private", "addr": 128, "dims": [8]},
        "kernel": {"space": "shared", "addr": 0, "dims": [64]},
    }
    assert conv["functions"] == {"exe": {"addr": 0}}
    json.dumps(sym)


def test_encoding_and_disassembly():
    p = asm(EXAMPLE)
    text = [isa.disassemble(w) for w in p.words]
    assert text == ["seta a0, 0", "sets a0, 8", "seta a1, 128", "sets a1, 8", "seta a2, 0", "sets a2, 8",
                    "loop 4, end=7", "mul p[a1+], p[a0+], s[a2+], 8", "halt"]
    for w in p.words:
        assert isa.decode(w).word == w


def test_variables_are_vector_aligned_and_classes_overlay():
    p = asm("class a {\n private x[3]\n private y[2][5]\n shared z\n}\n"
            "class b {\n private q[8]\n}\n")
    assert p.variable("a", "x").addr == 0
    assert p.variable("a", "y").addr == 8
    assert p.variable("a", "z").dims == [1]
    assert p.variable("b", "q").addr == 0


def test_nested_loops_get_distinct_last_instructions():
    p = asm("class c {\n func f {\n loop 2 {\n loop 3 {\n mov r0, r1\n }\n }\n }\n}\n")
    text = [isa.disassemble(w) for w in p.words]
    assert text == ["loop 2, end=3", "loop 3, end=2", "mov r0, r1", "nop", "halt"]


def test_zero_count_loop_and_if_else_and_defines():
    src = ("const N = 0\nconst M = 1\nclass c {\n func f {\n loop N {\n mov r0, r1\n }\n"
           " if M == 1 {\n relu r2, r3\n } else {\n mov r4, r5\n }\n }\n}\n")
    assert [isa.disassemble(w) for w in asm(src).words] == ["relu r2, r3", "halt"]
    text = [isa.disassemble(w) for w in asm(src, defines={"N": 2, "M": 0}).words]
    assert text == ["loop 2, end=1", "mov r0, r1", "mov r4, r5", "halt"]


def test_kernels_assemble_together():
    p = assemble(sorted(KERNELS.glob("*.pcore")))
    assert {"convolution", "linear", "maxpool", "epilogue", "eltwise", "stream"} <= set(p.classes)


@pytest.mark.parametrize("text,line,expect", [
    ("class c {\n func f {\n frob r0\n }\n}\n", 3, "unknown instruction 'frob'"),
    ("class c {\n func f {\n add r0, r1\n }\n}\n", 3, "add takes 3 operand(s)"),
    ("class c {\n func f {\n add r0, q[a0], r1\n }\n}\n", 3, "bad operand 'q[a0]'"),
    ("class c {\n func f {\n add s[a0], r0, r1\n }\n}\n", 3, "cannot be a destination"),
    ("class c {\n func f {\n add r0, s[a0], sb[a1]\n }\n}\n", 3, "two shared-memory sources"),
    ("class c {\n func f {\n mac p[a0], pb[a1]\n }\n}\n", 3,
     "two private-memory sources: a PCORE reads private memory once per clock (expected at most one "
     "p[]/pb[] operand; mov one into a register first)"),
    ("class c {\n private big[600]\n}\n", 2, "private memory exhausted"),
    ("class c {\n func f {\n seta a9, 0\n }\n}\n", 3, "bad address register"),
    ("class c {\n func f {\n seta a0, nothing\n }\n}\n", 3, "unknown name 'nothing'"),
    ("class c {\n func f {\n mul r0, r1, r2, 40\n }\n}\n", 3, "shift 40 out of range"),
    ("class c {\n func f {\n loop 2 {\n }\n }\n}\n", 4, "empty loop body"),
    ("class c {\n func f {\n mov r0, r1\n", 3, "end of file inside a func block"),
    ("}\n", 1, "unmatched '}'"),
    ("class c {\n func f {\n loop 1 {\n loop 1 {\n loop 1 {\n loop 1 {\n loop 1 {\n", 7, "nested deeper"),
])
def test_errors_name_file_line_and_expectation(text, line, expect):
    with pytest.raises(AsmError) as e:
        asm(text)
    assert e.value.line == line
    assert expect in e.value.message
    assert str(e.value).startswith(f"prog.pcore:{line}: ")
    assert text.splitlines()[line - 1].strip() in str(e.value)


def test_memory_limits_follow_the_configuration():
    src = "class c {\n private x[1000]\n}\n"
    with pytest.raises(AsmError):
        asm(src)
    assert asm(src, config=SoCConfig(pcore_private_words=1024)).variable("c", "x").size == 1000


def test_cli_asm(tmp_path, capsys):
    from tensorsoc.cli import main
    src = tmp_path / "k.pcore"
    src.write_text(EXAMPLE)
    img, sym, hexf = tmp_path / "k.bin", tmp_path / "k.json", tmp_path / "k.hex"
    assert main(["pcore", "asm", str(src), "-o", str(img), "--symbols", str(sym)]) == 0
    words = load_image(img)
    assert words == asm(EXAMPLE).words
    assert json.loads(sym.read_text())["classes"]["convolution"]["functions"]["exe"]["addr"] == 0
    assert main(["pcore", "asm", str(src), "-o", str(hexf), "-D", "KZ=4"]) == 0
    assert load_image(hexf)[0] == words[0]
    bad = tmp_path / "bad.pcore"
    bad.write_text("class c {\n func f {\n add r0\n }\n}\n")
    assert main(["pcore", "asm", str(bad), "-o", str(img)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "add takes 3 operand(s)" in err


def test_mcore_preprocessor_reads_the_symbol_table():
    """The MCORE preprocessor's reader accepts what the assembler writes."""
    symbols = pytest.importorskip("tensorsoc.sw.mcore.symbols")
    p = assemble(sorted(KERNELS.glob("*.pcore")))
    s = symbols.from_dict(p.symbols())
    assert s.functions["convolution"]["exe"] == p.function("convolution", "exe")
    coef = s.variables["convolution"]["coef"]
    assert (coef.space, coef.addr, list(coef.dims)) == ("shared", 0, p.variable("convolution", "coef").dims)
