"""C expressions inside tensor statements: parse, fold constants with C semantics, print back as C.

Dimensions, ranges, pointers and qualifiers are C expressions evaluated at run time
by the generated code.  When every identifier in an expression has a known value
(integer literals, NP/NT/VW, ``-D`` definitions of ``tsoc mcore expand``), the
preprocessor folds it, which lets it check element counts at compile time.
Arithmetic follows C on integers: ``/`` truncates toward zero, ``%`` takes the sign
of the dividend, comparisons give 0 or 1.

Nodes are tuples: ('num', value, tok) ('id', name, tok) ('ph', tok) ('str', tok)
('un', op, x, tok) ('bin', op, a, b, tok) ('cond', c, a, b, tok)
('call', f, args, tok) ('idx', a, i, tok) ('mem', a, op, name, tok) ('paren', x, tok)
('cast', type text, x, tok).

A C cast ``(uint32_t)p`` is recognised when the parenthesis holds C type words
(``int``, ``unsigned char``, any ``*_t`` name) or a name followed by ``*``
(``(REQUEST *)req``); folding applies the integer type's width.  Nesting of
parentheses, unary operators and ``?:`` is limited to the 63 levels C guarantees
(C11 5.2.4.1) and an expression to 255 binary operators, so a pathological
statement is an error, not a crash.
"""

import re

from .tokens import Token

_BINARY = {
    "*": 10, "/": 10, "%": 10,
    "+": 9, "-": 9,
    "<<": 8, ">>": 8,
    "<": 7, ">": 7, "<=": 7, ">=": 7,
    "==": 6, "!=": 6,
    "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}
_UNARY = ("-", "+", "!", "~", "*", "&")
MAX_NESTING = 63
MAX_OPERATORS = 255         # binary operators in one expression: bounds the depth of its tree
C_TYPE_WORDS = {"void", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "const", "volatile"}
_TYPEDEF_NAME = re.compile(r"^[A-Za-z_]\w*_t$")
# integer casts folded at compile time: (bits, signed)
_CAST_WIDTH = {
    "char": (8, True), "signed char": (8, True), "int8_t": (8, True), "unsigned char": (8, False), "uint8_t": (8, False),
    "short": (16, True), "signed short": (16, True), "int16_t": (16, True), "unsigned short": (16, False),
    "uint16_t": (16, False), "int": (32, True), "signed": (32, True), "signed int": (32, True), "int32_t": (32, True),
    "long": (32, True), "intptr_t": (32, True), "unsigned": (32, False), "unsigned int": (32, False),
    "unsigned long": (32, False), "uint32_t": (32, False), "uintptr_t": (32, False), "size_t": (32, False),
}


def tok_of(node):
    return node[-1]


def first_tok(node):
    """The leftmost token of ``node`` (where its text starts)."""
    while node[0] in ("bin", "mem", "idx", "call"):
        node = node[2] if node[0] == "bin" else node[1]
    return node[-1]


class ExprParser:
    """Pratt parser over a token cursor (``cur.peek()``, ``cur.next()``, ``cur.expect()``)."""

    def __init__(self, cur, allow_placeholder=False):
        self.cur = cur
        self.allow_placeholder = allow_placeholder
        self.depth = self.operators = 0

    def expr(self, stop_plus=False):
        if self.depth == 0:
            self.operators = 0
        return self._cond(stop_plus)

    def _deeper(self):
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.cur.source.error(self.cur.peek(), "expression nested too deeply",
                                        f"at most {MAX_NESTING} levels of parentheses, unary operators and '?:' "
                                        "(compute part of it in a C variable)")

    def _cond(self, stop_plus):
        self._deeper()
        c = self._binary(0, stop_plus)
        t = self.cur.peek()
        if t.kind == "op" and t.text == "?":
            self.cur.next()
            a = self._cond(False)
            self.cur.expect(":", "':' of a conditional expression")
            c = ("cond", c, a, self._cond(stop_plus), t)
        self.depth -= 1
        return c

    def _binary(self, minprec, stop_plus):
        left = self._unary()
        while True:
            t = self.cur.peek()
            if t.kind != "op" or t.text not in _BINARY:
                return left
            prec = _BINARY[t.text]
            if prec <= minprec:
                return left
            if stop_plus and t.text == "+":
                nxt = self.cur.peek(1)
                if nxt.kind == "op" and nxt.text in (",", ")", "("):
                    return left
            self.cur.next()
            self.operators += 1
            if self.operators > MAX_OPERATORS:
                raise self.cur.source.error(t, "expression too long",
                                            f"at most {MAX_OPERATORS} operators (compute part of it in a C variable)")
            right = self._binary(prec, stop_plus)
            left = ("bin", t.text, left, right, t)

    def _unary(self):
        t = self.cur.peek()
        if t.kind == "op" and t.text in _UNARY:
            self.cur.next()
            self._deeper()
            node = ("un", t.text, self._unary(), t)
            self.depth -= 1
            return node
        if t.kind == "op" and t.text == "(":
            ctype = self.cast_type()
            if ctype is not None:
                self._deeper()
                node = ("cast", ctype, self._unary(), t)
                self.depth -= 1
                return node
        return self._postfix(self._primary())

    def cast_type(self):
        """At '(': consume a C cast's '(type)' and return the type's text, else consume nothing."""
        cur = self.cur
        words, k = [], 1
        while cur.peek(k).kind == "id":
            words.append(cur.peek(k).text)
            k += 1
        stars = 0
        while cur.at("*", k):
            stars, k = stars + 1, k + 1
        if not words or not cur.at(")", k):
            return None
        typed = all(w in C_TYPE_WORDS or _TYPEDEF_NAME.match(w) for w in words)
        if not (typed or (stars and len(words) == 1)):
            return None
        for _ in range(k + 1):
            cur.next()
        return " ".join(words) + (" " + "*" * stars if stars else "")

    def _primary(self):
        t = self.cur.next()
        if t.kind == "num":
            return ("num", parse_int(t, self.cur.source), t)
        if t.kind == "id":
            return ("id", t.text, t)
        if t.kind == "str":
            return ("str", t)
        if t.kind == "op" and t.text == "(":
            x = self.expr()
            self.cur.expect(")", "')' closing the parenthesis")
            return ("paren", x, t)
        if t.kind == "op" and t.text == "$" and self.allow_placeholder:
            nxt = self.cur.peek()
            if not (nxt.kind == "id" and nxt.col == t.col + 1):
                return ("ph", t)
        raise self.cur.source.error(t, "malformed expression" if t.kind != "eof" else "unexpected end of statement",
                                    "a C expression (number, name or parenthesis)")

    def _postfix(self, node):
        while True:
            t = self.cur.peek()
            if t.kind != "op":
                return node
            if t.text == "(":
                self.cur.next()
                args = []
                if not self.cur.accept(")"):
                    while True:
                        args.append(self.expr())
                        if self.cur.accept(")"):
                            break
                        self.cur.expect(",", "',' or ')' in an argument list")
                node = ("call", node, args, t)
            elif t.text == "[" and node[0] in ("id", "mem", "idx", "paren", "call"):
                # a C subscript inside an expression (only reachable inside parentheses/brackets)
                self.cur.next()
                i = self.expr()
                self.cur.expect("]", "']' closing the subscript")
                node = ("idx", node, i, t)
            elif t.text in (".", "->") and self.cur.peek(1).kind == "id" and node[0] in ("id", "mem", "idx", "paren", "call"):
                self.cur.next()
                name = self.cur.next()
                node = ("mem", node, t.text, name.text, t)
            else:
                return node


def parse_int(tok, source):
    s = tok.text.rstrip("uUlL")
    try:
        if s.lower().startswith("0x"):
            return int(s, 16)
        if len(s) > 1 and s.startswith("0"):
            return int(s, 8)
        return int(s)
    except ValueError:
        raise source.error(tok, "malformed number", "a decimal, octal or hexadecimal integer") from None


class NotConstant(Exception):
    """``args``: (C text of the sub-expression without a value, its token)."""


def _cdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def evaluate(node, env, source=None):
    """Value of ``node`` with C integer semantics, or raise NotConstant."""
    k = node[0]
    if k == "num":
        return node[1]
    if k == "id":
        if node[1] in env:
            return env[node[1]]
        raise NotConstant(node[1], node[2])
    if k == "paren":
        return evaluate(node[1], env, source)
    if k == "cast":
        v = evaluate(node[2], env, source)
        width = _CAST_WIDTH.get(node[1])
        if width is None:
            return v                  # pointer casts keep the address
        bits, signed = width
        v &= (1 << bits) - 1
        return v - (1 << bits) if signed and v >> (bits - 1) else v
    if k == "un":
        v = evaluate(node[2], env, source)
        op = node[1]
        if op == "-":
            return -v
        if op == "+":
            return v
        if op == "!":
            return int(not v)
        if op == "~":
            return ~v
        raise NotConstant(to_c(node, {}), first_tok(node))
    if k == "bin":
        op = node[1]
        a = evaluate(node[2], env, source)
        if op == "&&":
            return int(bool(a) and bool(evaluate(node[3], env, source)))
        if op == "||":
            return int(bool(a) or bool(evaluate(node[3], env, source)))
        b = evaluate(node[3], env, source)
        if op in ("/", "%"):
            if b == 0:
                if source is not None:
                    raise source.error(node[4], "division by zero in a constant expression", "a non-zero divisor")
                raise NotConstant(to_c(node, {}), first_tok(node))
            q = _cdiv(a, b)
            return q if op == "/" else a - q * b
        if op in ("<<", ">>"):
            if b < 0:
                raise NotConstant(to_c(node, {}), first_tok(node))
            return a << b if op == "<<" else a >> b
        return {"*": lambda: a * b, "+": lambda: a + b, "-": lambda: a - b,
                "<": lambda: int(a < b), ">": lambda: int(a > b), "<=": lambda: int(a <= b),
                ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b),
                "&": lambda: a & b, "^": lambda: a ^ b, "|": lambda: a | b}[op]()
    if k == "cond":
        return evaluate(node[2] if evaluate(node[1], env, source) else node[3], env, source)
    raise NotConstant(to_c(node, {}), first_tok(node))


def no_value_error(e, source, fallback_tok, when, hint):
    """The user error for a NotConstant ``e``: a name without a value (``hint(name)`` says how
    to give it one) or an expression that cannot be evaluated ``when``."""
    from .errors import MCoreError
    text, tok = (tuple(e.args) + ("?", None))[:2]
    if tok is None or not tok.line:
        tok = fallback_tok
    if text.isidentifier():
        message, expected = f"'{text}' has no value {when}", hint(text)
    else:
        message = f"'{text}' cannot be evaluated {when}"
        expected = "numbers and names with a value (tsoc mcore compile takes any C expression)"
    return MCoreError(message, source.file, tok.line, tok.col, text, expected, source.line_text(tok.line))


def try_evaluate(node, env, source=None):
    try:
        return evaluate(node, env, source)
    except NotConstant:
        return None


def to_c(node, subst):
    """C text of ``node``; identifiers in ``subst`` are replaced by their value."""
    k = node[0]
    if k == "num":
        return node[2].text
    if k == "id":
        v = subst.get(node[1])
        return str(v) if v is not None else node[1]
    if k == "str":
        return node[1].text
    if k == "paren":
        return "(" + to_c(node[1], subst) + ")"
    if k == "cast":
        return "((" + node[1] + ")" + to_c(node[2], subst) + ")"
    if k == "ph":
        return "$"
    if k == "un":
        return "(" + node[1] + to_c(node[2], subst) + ")"
    if k == "bin":
        return "(" + to_c(node[2], subst) + " " + node[1] + " " + to_c(node[3], subst) + ")"
    if k == "cond":
        return "(" + to_c(node[1], subst) + " ? " + to_c(node[2], subst) + " : " + to_c(node[3], subst) + ")"
    if k == "call":
        return to_c(node[1], subst) + "(" + ", ".join(to_c(a, subst) for a in node[2]) + ")"
    if k == "idx":
        return to_c(node[1], subst) + "[" + to_c(node[2], subst) + "]"
    if k == "mem":
        return to_c(node[1], subst) + node[2] + node[3]
    raise ValueError(k)


def num(value):
    """A synthetic constant node."""
    return ("num", value, Token("num", str(value), 0, 0))


def mul(a, b):
    """Product node, folding the trivial cases so generated C stays readable."""
    if a[0] == "num" and a[1] == 1:
        return b
    if b[0] == "num" and b[1] == 1:
        return a
    if a[0] == "num" and b[0] == "num":
        return num(a[1] * b[1])
    return ("bin", "*", a, b, tok_of(a))


def sub1(a):
    if a[0] == "num":
        return num(a[1] - 1)
    return ("bin", "-", a, num(1), tok_of(a))
