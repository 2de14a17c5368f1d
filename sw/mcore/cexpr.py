"""C expressions inside tensor statements: parse, fold constants with C semantics, print back as C.

Dimensions, ranges, pointers and qualifiers are C expressions evaluated at run time
by the generated code.  When every identifier in an expression has a known value
(integer literals, NP/NT/VW, ``-D`` definitions of ``tsoc mcore expand``), the
preprocessor folds it, which lets it check element counts at compile time.
Arithmetic follows C on integers: ``/`` truncates toward zero, ``%`` takes the sign
of the dividend, comparisons give 0 or 1.

Nodes are tuples: ('num', value, tok) ('id', name, tok) ('ph', tok) ('str', tok)
('un', op, x, tok) ('bin', op, a, b, tok) ('cond', c, a, b, tok)
('call', f, args, tok) ('idx', a, i, tok) ('mem', a, op, name, tok) ('paren', x, tok).
"""

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


def tok_of(node):
    return node[-1]


class ExprParser:
    """Pratt parser over a token cursor (``cur.peek()``, ``cur.next()``, ``cur.expect()``)."""

    def __init__(self, cur, allow_placeholder=False):
        self.cur = cur
        self.allow_placeholder = allow_placeholder

    def expr(self, stop_plus=False):
        return self._cond(stop_plus)

    def _cond(self, stop_plus):
        c = self._binary(0, stop_plus)
        t = self.cur.peek()
        if t.kind == "op" and t.text == "?":
            self.cur.next()
            a = self._cond(False)
            self.cur.expect(":", "':' of a conditional expression")
            b = self._cond(stop_plus)
            return ("cond", c, a, b, t)
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
            right = self._binary(prec, stop_plus)
            left = ("bin", t.text, left, right, t)

    def _unary(self):
        t = self.cur.peek()
        if t.kind == "op" and t.text in _UNARY:
            self.cur.next()
            return ("un", t.text, self._unary(), t)
        return self._postfix(self._primary())

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
    pass


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
        raise NotConstant(node[1])
    if k == "paren":
        return evaluate(node[1], env, source)
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
        raise NotConstant(op)
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
                raise NotConstant(op)
            q = _cdiv(a, b)
            return q if op == "/" else a - q * b
        if op in ("<<", ">>"):
            if b < 0:
                raise NotConstant(op)
            return a << b if op == "<<" else a >> b
        return {"*": lambda: a * b, "+": lambda: a + b, "-": lambda: a - b,
                "<": lambda: int(a < b), ">": lambda: int(a > b), "<=": lambda: int(a <= b),
                ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b),
                "&": lambda: a & b, "^": lambda: a ^ b, "|": lambda: a | b}[op]()
    if k == "cond":
        return evaluate(node[2] if evaluate(node[1], env, source) else node[3], env, source)
    raise NotConstant(k)


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
