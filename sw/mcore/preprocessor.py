"""The MCORE preprocessor: C with '>' tensor lines in, plain C out.

Every input line gives exactly one output line, after a ``#include "ztam.h"`` and a
``#line 1`` directive, so compiler messages point at the original file and line.
A tensor line becomes one line of calls to the runtime (``sw/runtime/ztam.h``);
a ``$variable := ...;`` definition becomes an empty line.  A statement without its
``;`` continues on the next ``>`` line (ztachip writes long transfers that way);
its code goes on the line where it ends, the lines before keep only the comment.  In C lines,
``$class::function`` and ``$class::variable`` are replaced by the address from
the PCORE symbol table (``ztamBuildKernelFunc($convolution::exe, np, nt)``).
"""

import re

from . import lower
from .lower import Context
from .parser import StatementParser, VarDef
from .tokens import Source, Token, tokenize


def _adjacent(a, b):
    return b.line == a.line and b.col == a.col + len(a.text)


class Preprocessor:
    def __init__(self, symbols, file="<input>", defines=None):
        self.ctx = Context(symbols, defines)
        self.file = file
        self.vars = {}

    # -- tensor variables -------------------------------------------------
    def expand_vars(self, toks, source):
        out, i, n = [], 0, len(toks)
        while i < n:
            t = toks[i]
            if not (t.kind == "op" and t.text == "$" and i + 1 < n and toks[i + 1].kind == "id"
                    and _adjacent(t, toks[i + 1])):
                out.append(t)
                i += 1
                continue
            name_tok = toks[i + 1]
            v = self.vars.get(name_tok.text)
            if v is None:
                nxt = toks[i + 2] if i + 2 < n else None
                if nxt is not None and nxt.kind == "op" and nxt.text in ("::", "."):
                    out.append(t)          # $class::name, resolved by the parser
                    i += 1
                    continue
                raise source.error(name_tok, "unknown tensor variable",
                                   "a $variable defined earlier with '$name := tensor;'")
            j = i + 2
            args = []
            for _ in range(v.placeholders):
                if j >= n or not (toks[j].kind == "op" and toks[j].text == "["):
                    bad = toks[j] if j < n else Token("eof", "", name_tok.line, name_tok.col + len(name_tok.text))
                    raise source.error(bad, f"tensor variable ${v.name} takes {v.placeholders} argument(s)",
                                       "'[argument]' for each '$' placeholder of its definition")
                depth, k = 0, j
                while k < n:
                    if toks[k].kind == "op" and toks[k].text in "([":
                        depth += 1
                    elif toks[k].kind == "op" and toks[k].text in ")]":
                        depth -= 1
                        if depth == 0:
                            break
                    k += 1
                if k >= n:
                    raise source.error(toks[j], "unclosed argument of a tensor variable", "']'")
                args.append(toks[j + 1:k])
                j = k + 1
            body, a = [], 0
            for bt in v.tokens:
                if bt in v.ph_tokens:
                    body.extend(args[a])
                    a += 1
                else:
                    body.append(bt)
            out.extend(body)
            i = j
        return out

    def define(self, toks, source):
        """``$name := operand ;`` -- checked now, expanded at each use."""
        name = toks[1]
        body = self.expand_vars(toks[3:-1] if toks[-1].text == ";" else toks[3:], source)
        if toks[-1].text != ";":
            raise source.error(toks[-1], "missing ';'", "';' ending the definition")
        if not body:
            raise source.error(toks[2], "empty tensor variable", "a tensor after ':='")
        ph = [t for k, t in enumerate(body) if t.kind == "op" and t.text == "$"
              and not (k + 1 < len(body) and body[k + 1].kind == "id" and _adjacent(t, body[k + 1]))]
        p = StatementParser(body + [Token("eof", "", body[-1].line, body[-1].col + len(body[-1].text))],
                            source, allow_placeholder=True)
        p.operand()
        if p.cur.peek().kind != "eof":
            raise source.error(p.cur.peek(), "unexpected text after the tensor", "';' ending the definition")
        v = VarDef(toks[0], name.text, body, len(ph))
        v.ph_tokens = _IdSet(ph)
        self.vars[name.text] = v
        return v

    # -- statements -------------------------------------------------------
    def statements(self, toks, source, pending=None):
        """Split tokens into statements at ';' outside brackets.  With a ``pending`` list,
        an unfinished last statement is left in it (to be continued on the next line)."""
        out, cur, depth = [], [], 0
        for t in toks:
            if t.kind == "eof":
                break
            cur.append(t)
            if t.kind == "op":
                if t.text in "([":
                    depth += 1
                elif t.text in ")]":
                    depth -= 1
                elif t.text == ";" and depth <= 0:
                    out.append(cur)
                    cur, depth = [], 0
        if cur:
            if pending is None:
                out.append(cur)
            else:
                pending.extend(cur)
        return out

    def parse(self, toks, source):
        """Parse one statement's tokens; a definition returns its VarDef."""
        try:
            return self._parse(toks, source)
        except RecursionError:
            raise _too_complex(toks, source) from None

    def _parse(self, toks, source):
        if len(toks) >= 3 and toks[0].text == "$" and toks[1].kind == "id" and toks[2].text == ":=":
            return self.define(toks, source)
        toks = self.expand_vars(toks, source)
        last = toks[-1] if toks else None
        eof = Token("eof", "", last.line, last.col + len(last.text)) if last else Token("eof", "", 1, 1)
        p = StatementParser(toks + [eof], source)
        stmt = p.statement()
        if p.cur.peek().kind != "eof":
            raise source.error(p.cur.peek(), "unexpected text after the statement", "a new statement")
        return stmt

    def compile_statement(self, stmt, source):
        try:
            return self._compile_statement(stmt, source)
        except RecursionError:
            raise _too_complex([stmt.tok], source) from None

    def _compile_statement(self, stmt, source):
        from .parser import CallbackStmt, ExeStmt, LogStmt, TransferStmt
        ctx = self.ctx
        if isinstance(stmt, VarDef):
            return ""
        if isinstance(stmt, TransferStmt):
            dst, src = lower.plan_transfer(stmt, ctx, source)
            return lower.emit_transfer(stmt, dst, src, ctx)
        if isinstance(stmt, ExeStmt):
            return lower.emit_exe(stmt, ctx, source)
        if isinstance(stmt, CallbackStmt):
            return f"ztamCallback({lower._c(stmt.func, ctx)}, (int32_t)({lower._c(stmt.parm, ctx)}));"
        if isinstance(stmt, LogStmt):
            return f"ztamLog({int(stmt.on)});"
        raise AssertionError(stmt)

    def compile(self, text):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        source = Source(self.file, lines)
        out = ['#include "ztam.h"', f'#line 1 "{_c_string(self.file)}"']
        in_comment = False
        pending = []            # tokens of a statement continued on the next '>' line
        for n, line in enumerate(lines, 1):
            stripped = line.lstrip()
            if not in_comment and stripped.startswith(">"):
                indent = line[:len(line) - len(stripped)]
                col0 = len(indent) + 2
                toks = pending + tokenize(stripped[1:], n, col0, source)
                pending = []
                code = []
                for st in self.statements(toks, source, pending):
                    code.append(self.compile_statement(self.parse(st, source), source))
                comment = stripped.replace("*/", "* /")
                out.append(indent + " ".join(c for c in code if c) + f" /* {comment} */")
            else:
                if pending:
                    self.parse(pending, source)      # raises: the statement has no ';'
                new, in_comment = self.c_line(line, n, in_comment, source)
                out.append(new)
        if pending:
            self.parse(pending, source)
        return "\n".join(out) + "\n"

    # -- C lines ----------------------------------------------------------
    _REF = re.compile(r"\$([A-Za-z_]\w*)(::|\.)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
    _SPECIAL = re.compile(r"[/\"'$]")  # the characters c_line must look at

    def c_line(self, line, n, in_comment, source):
        """Replace $class::name outside comments and literals; track /* */ across lines."""
        if not in_comment and "$" not in line and "/*" not in line:
            return line, False
        if in_comment and "*/" not in line:
            return line, True
        out, i, L = [], 0, len(line)
        while i < L:
            if in_comment:
                j = line.find("*/", i)
                if j < 0:
                    out.append(line[i:])
                    return "".join(out), True
                out.append(line[i:j + 2])
                i, in_comment = j + 2, False
                continue
            m = self._SPECIAL.search(line, i)
            if m is None:
                out.append(line[i:])
                break
            if m.start() > i:
                out.append(line[i:m.start()])
                i = m.start()
            c = line[i]
            if line.startswith("//", i):
                out.append(line[i:])
                break
            if line.startswith("/*", i):
                out.append("/*")
                i, in_comment = i + 2, True
                continue
            if c in "\"'":
                j = i + 1
                while j < L and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                out.append(line[i:j + 1])
                i = j + 1
                continue
            if c == "$":
                m = self._REF.match(line, i)
                if m:
                    out.append(str(self.symbol_value(m, n, source)))
                    i = m.end()
                    continue
            out.append(c)
            i += 1
        return "".join(out), in_comment

    def symbol_value(self, m, n, source):
        cls, name = m.group(1), m.group(3)
        syms = self.ctx.symbols
        ct = Token("id", cls, n, m.start(1) + 1)
        nt = Token("id", name, n, m.start(3) + 1)
        if not syms.has_class(cls):
            lower.lookup_function(self.ctx, source, cls, name, ct, nt)   # raises the unknown-class error
        if name in syms.functions.get(cls, {}):
            return syms.functions[cls][name]
        if name in syms.variables.get(cls, {}):
            return syms.variables[cls][name].addr
        known = sorted(syms.functions.get(cls, {})) + sorted(syms.variables.get(cls, {}))
        raise source.error(nt, f"unknown function or variable of class '{cls}'", "one of: " + ", ".join(known))


class _IdSet:
    """Membership by identity (tokens are equal by value when their text and place match)."""

    def __init__(self, items):
        self._ids = {id(x) for x in items}
        self._keep = list(items)

    def __contains__(self, x):
        return id(x) in self._ids


def _too_complex(toks, source):
    t = toks[0] if toks else Token("eof", "", 1, 1)
    return source.error(t, "statement too deeply nested or too long to analyse",
                        "shorter expressions (compute parts of them in C variables)")


def _c_string(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def compile_source(text, symbols, file="<input>"):
    """Preprocess an MCORE source text into C."""
    return Preprocessor(symbols, file).compile(text)
