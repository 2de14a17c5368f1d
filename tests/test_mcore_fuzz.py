"""Fuzzing the MCORE preprocessor (hypothesis, bounded): the statement parser on token soup
and on the guide's and ztachip's statements with mutations, and whole files mixing C,
'>' lines, statements over several lines, comments and bytes of any kind.  Every input
ends in C or in an MCoreError with file and line; anything else fails the test.

``PYTHONPATH=.:tests python tests/test_mcore_fuzz.py`` runs these fuzzers and the YAML
loader's and prints what they saw (inputs, accepted, clear errors, tracebacks);
``pytest -s`` prints the same at the end of the module.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorsoc.sw.mcore.errors import MCoreError
from tensorsoc.verification.golden.expand import expand
from tensorsoc.sw.mcore.preprocessor import compile_source
from test_mcore_dialect import PAIRS
from test_mcore_errors import GOOD, SYMS, VOCAB

FAST = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Tally:
    """Outcomes of one fuzzer: accepted, clear error (file and line), traceback."""

    all = {}

    def __init__(self, name):
        self.name, self.tried, self.accepted, self.errors, self.tracebacks = name, 0, 0, 0, 0
        Tally.all[name] = self

    def run(self, fn, *args, error=MCoreError, where=None):
        """Call ``fn``; an ``error`` must name its file and line (``where(e)`` gives both)."""
        self.tried += 1
        try:
            fn(*args)
        except error as e:
            file, line = where(e)
            assert file and isinstance(line, int) and line >= 1, f"error without file and line: {e}"
            self.errors += 1
        except Exception:
            self.tracebacks += 1
            raise
        else:
            self.accepted += 1

    def __str__(self):
        return (f"{self.name}: {self.tried} inputs, {self.accepted} accepted, {self.errors} clear errors, "
                f"{self.tracebacks} tracebacks")


def mcore_where(e):
    return e.file, e.line


STATEMENTS = Tally("statement parser")
FILES = Tally("preprocessor, whole files")

DIALECT = ["DTYPE", "CAST", "CONCURRENT", "INT16", "INT8", "UINT8", "BFLOAT", "PROG", "LATEST", "REMAP", "BARRIER",
           "VAR", "PCORES", "HSCRATCH", "(uint32_t)", "(REQUEST *)", "req", "->", "[:]", "[*]", "(a*b)", "(", ")"]
STATEMENT_TEXTS = GOOD + [s for pair in PAIRS.values() for s in pair]


def compile_and_expand(text):
    compile_source(">" + text.replace("\n", "\n>") + "\n", SYMS, "fuzz.m")
    expand(text, SYMS, {"n": 2, "p": 0, "fmt": 1})


@FAST
@given(st.lists(st.sampled_from(VOCAB + DIALECT), max_size=40), st.sampled_from([" ", "", "\n"]))
def test_fuzz_statement_token_soup(tokens, sep):
    STATEMENTS.run(compile_and_expand, sep.join(tokens), where=mcore_where)


@FAST
@given(st.sampled_from(STATEMENT_TEXTS), st.integers(0, 300), st.integers(0, 4),
       st.text(alphabet="[]():;,+-*$.<=0123456789 IKJn\n", max_size=5) | st.sampled_from(DIALECT))
def test_fuzz_mutated_statements(stmt, pos, cut, insert):
    pos = min(pos, len(stmt))
    STATEMENTS.run(compile_and_expand, stmt[:pos] + insert + stmt[pos + cut:], where=mcore_where)


C_LINES = ["int x = 1;", "/* comment", "still comment */", "// > not a statement", "\"a string > $x\"",
           "f($myclass::myvar);", "f($convolution::exe);", "$nosuch::x;", "#define N 4", "", "   ", "\t}"]
LINE = st.one_of(st.sampled_from(C_LINES),
                 st.sampled_from(STATEMENT_TEXTS).map(lambda s: "> " + s),
                 st.sampled_from(STATEMENT_TEXTS).map(lambda s: "> " + s[:len(s) // 2]),     # continued below
                 st.sampled_from(STATEMENT_TEXTS).map(lambda s: ">   " + s[len(s) // 2:]),
                 st.text(max_size=30).map(lambda s: ">" + s),
                 st.text(max_size=30))


def compile_bytes(data):
    from tensorsoc.commands.mcore import read_source
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".m")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        compile_source(read_source(path), SYMS, path)
    finally:
        os.unlink(path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=12), st.binary(max_size=4), st.integers(0, 400))
def test_fuzz_whole_files(lines, junk, pos):
    text = "\n".join(lines).encode("utf-8", "surrogatepass")
    pos = min(pos, len(text))
    FILES.run(compile_bytes, text[:pos] + junk + text[pos:], where=mcore_where)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    print()
    for t in Tally.all.values():
        if t.tried:
            print(t)


def main():
    """Run the fuzzers of this module and of the YAML loader and print their counts."""
    import test_mcore_fuzz as fuzz                  # the module the YAML tests share (not __main__)
    import test_model_yaml_hardening as yaml_tests
    for fn in (fuzz.test_fuzz_statement_token_soup, fuzz.test_fuzz_mutated_statements, fuzz.test_fuzz_whole_files,
               yaml_tests.test_fuzz_yaml_text, yaml_tests.test_fuzz_model_fields):
        fn()
    for t in fuzz.Tally.all.values():
        print(t)


if __name__ == "__main__":
    main()
