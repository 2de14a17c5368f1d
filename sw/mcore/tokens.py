"""Tokenizer shared by tensor statements and the C expressions inside them."""

import re
from typing import NamedTuple

from .errors import MCoreError

_TOKEN = re.compile(r"""
   (?P<ws>[ \t\r\f\v]+)
  |(?P<comment>//.*|/\*.*?\*/)
  |(?P<num>0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*)
  |(?P<id>[A-Za-z_][A-Za-z_0-9]*)
  |(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)+')
  |(?P<op>::|:=|<=|>=|==|!=|<<|>>|&&|\|\||->|[-+*/%&|^~!<>?:,;.()\[\]$=])
""", re.VERBOSE)


class Token(NamedTuple):
    kind: str      # 'num', 'id', 'str', 'op', 'eof'
    text: str
    line: int
    col: int       # 1-based


class Source:
    """Where tokens come from, to print errors: file name and its lines."""

    def __init__(self, file, lines):
        self.file = file
        self.lines = lines

    def line_text(self, line):
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return None

    def error(self, tok, message, expected=""):
        return MCoreError(message, self.file, tok.line, tok.col, tok.text, expected, self.line_text(tok.line))


def tokenize(text, line, col0, source):
    """Tokens of ``text`` found on ``line`` starting at 1-based column ``col0``."""
    out = []
    pos, n = 0, len(text)
    match = _TOKEN.match
    append = out.append
    while pos < n:
        m = match(text, pos)
        if not m:
            bad = Token("op", text[pos], line, col0 + pos)
            raise source.error(bad, "unexpected character", "a C expression or a tensor statement")
        kind = m.lastgroup
        if kind != "ws" and kind != "comment":
            append(Token(kind, m.group(), line, col0 + pos))
        pos = m.end()
    append(Token("eof", "", line, col0 + n))
    return out
