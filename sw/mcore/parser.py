"""Parser of tensor statements (the text after '>' on an MCORE source line).

Grammar (keywords are case-sensitive except THREAD, which the guide also writes
``thread``)::

    statement := 'LOG_ON' ';' | 'LOG_OFF' ';'
               | 'CALLBACK' '(' expr ',' expr ')' ';'
               | 'EXE_LOCKSTEP' '(' func [',' expr [',' expr]] ')' ';'
               | '$' name ':=' operand ';'
               | directive* operand '<=' ['PROC' '(' expr ')' '<='] operand ';'
    directive := 'SCATTER' '(' expr ')' | 'CONCURRENT' ['(' expr ')'] | 'FOR' '(' name '=' range ')'
    operand   := (qualifier | directive)* ( mem | pcore | 'SPU' | class '::' var ... ) | scalar
    qualifier := '(' expr-or-type ')' | ('DTYPE'|'CAST') '(' expr-or-type ')' | 'PAD' '(' expr ')'
    scalar    := ('INT16'|'INT8'|'UINT8') '(' expr ')'          (source only)
    mem       := ('DDR'|'MEM'|'SCRATCH') '(' expr {',' dim} ')' {'[' range ']'}
    dim       := expr ['+'] | limit '(' dim {',' dim} ')'       (limit: a number, name or '(' expr ')')
    pcore     := 'PCORE' ['(' expr {',' expr} ')'] {'[' range ']'}
                 ['.' 'THREAD' ['(' expr {',' expr} ')'] {'[' range ']'}]
                 '.' class ('::'|'.') name {'.' name} ['(' expr ['+'] {',' expr ['+']} ')'] {'[' range ']'}
    range     := '*' | expr | [expr] ':' [expr] [':' [expr]]

Tensor variables (``$name``) are expanded on tokens before parsing, so an error in
a variable's definition points at the definition.

ztachip's dialect (docs/mcore.md) is read into the same statements: ``DTYPE(fmt)``
and ``CAST(fmt)`` are the type qualifier, ``CONCURRENT`` is ``SCATTER(0)``, FOR and
SCATTER may follow a qualifier or sit inside a ``$variable`` (all of a transfer's
directives form one list, in the order written), ``INT16(x)`` is a scalar source,
a bare ``class::var`` destination is ``PCORE[*].class::var``, and
``PCORE(n)[p][t]`` (one range more than PCORE dimensions) is ``PCORE(n)[p].THREAD[t]``.
ztachip keywords without a tensorsoc meaning are refused by name (``ZTACHIP_REFUSED``).
"""

from dataclasses import dataclass, field
from typing import List, Optional

from .cexpr import ExprParser, num
from .tokens import Token

KEYWORDS = ("DDR", "MEM", "SCRATCH", "PCORE", "SPU", "PAD", "PROC", "FOR", "SCATTER", "THREAD",
            "EXE_LOCKSTEP", "CALLBACK", "LOG_ON", "LOG_OFF", "DTYPE", "CAST", "CONCURRENT")
STATEMENT_STARTS = "DDR, MEM, SCRATCH, PCORE, SPU, FOR, SCATTER, EXE_LOCKSTEP, CALLBACK, LOG_ON, LOG_OFF, $variable or a (type) qualifier"
OPERAND_STARTS = "DDR, MEM, SCRATCH, PCORE, SPU, PAD(v), a (type) qualifier or a $variable"

TYPE_NAMES = {
    "int": "INT16", "short": "INT16", "int16_t": "INT16", "signed short": "INT16", "INT16": "INT16",
    "int8_t": "INT8", "char": "INT8", "signed char": "INT8", "INT8": "INT8",
    "uint8_t": "UINT8", "unsigned char": "UINT8", "UINT8": "UINT8",
}
QUALIFIERS = ("DTYPE", "CAST")          # ztachip's spellings of the (type) qualifier
SCALAR_TYPES = ("INT16", "INT8", "UINT8")
# ztachip's element types the TensorEngine does not move
OTHER_TYPES = ("BFLOAT", "FLOAT", "FP32", "FLOAT16", "FP16", "INT32", "UINT16", "UINT32")

# ztachip keywords with no tensorsoc meaning: what to write instead
ZTACHIP_REFUSED = {
    "PROG": "stream programs loaded with 'SPU <= tensor;' and applied with 'A <= PROC(n) <= B;'",
    "LATEST": "a plain transfer: the TensorEngine runs each process's instructions in order; "
              "'CALLBACK(function, parm);' tells the MCORE when they are done",
    "REMAP": "FOR(I=begin:end) directives or a dimension cast var(d1,d2) to reorder elements",
    "BARRIER": "'CALLBACK(function, parm);' to wait for the TensorEngine, and ztamTaskYield() between threads",
    "VAR": "a tensor variable: '$name := tensor;'",
    "PCORES": "PCORE(dims)[ranges] (PCORE without dimensions is PCORE(NP))",
    "HSCRATCH": "SCRATCH(address, dims...): tensorsoc has one scratch-pad space",
}


@dataclass
class Range:
    kind: str                    # 'range', 'index', 'bcast', 'for'
    tok: Token
    begin: object = None
    stride: object = None
    end: object = None
    forvar: Optional[str] = None


@dataclass
class DimDecl:
    size: object                 # expression node
    check: bool
    tok: Token
    overlap: bool = False        # member of the overlapped group


@dataclass
class Operand:
    kind: str                    # 'mem', 'pcore', 'spu', 'scalar' (pad holds its value)
    tok: Token
    dtype: object = None         # expression node, or ('type', NAME, tok)
    pad: object = None
    space: str = ""              # DDR / SCRATCH for mem
    pointer: object = None
    dims: List[DimDecl] = field(default_factory=list)
    overlap_limit: object = None
    ranges: List[Range] = field(default_factory=list)
    pcore_dims: Optional[list] = None
    pcore_ranges: List[Range] = field(default_factory=list)
    thread: Optional[tuple] = None          # (dims or None, ranges, tok)
    var: Optional[tuple] = None             # (class, name, tok, cast [(node, check)] or None, ranges, class tok)
    bare: bool = False                      # ztachip's bare class::var (PCORE[*] implied)


@dataclass
class TransferStmt:
    tok: Token
    op_tok: Token
    dst: Operand
    src: Operand
    fors: list                   # [(name, Range, tok)] in source order
    scatter: object = None       # expression node
    scatter_tok: Optional[Token] = None
    proc: object = None
    proc_tok: Optional[Token] = None


@dataclass
class ExeStmt:
    tok: Token
    func: object                 # ('sym', class, name, tok) or expression node
    np: object = None
    nt: object = None


@dataclass
class CallbackStmt:
    tok: Token
    func: object
    parm: object


@dataclass
class LogStmt:
    tok: Token
    on: bool


@dataclass
class VarDef:
    tok: Token
    name: str
    tokens: list                 # body tokens (without ';')
    placeholders: int


class Cursor:
    def __init__(self, tokens, source):
        self.toks = tokens
        self.pos = 0
        self.source = source

    def peek(self, k=0):
        try:
            return self.toks[self.pos + k]
        except IndexError:
            return self.toks[-1]

    def next(self):
        t = self.toks[self.pos]
        if t.kind != "eof":
            self.pos += 1
        return t

    def at(self, text, k=0):
        # only op and id tokens can spell an operator or a keyword ('eof' is empty)
        try:
            return self.toks[self.pos + k].text == text
        except IndexError:
            return False

    def after_group(self):
        """Offset of the token after the bracket group that opens at the cursor, or None."""
        depth, k = 0, 0
        while True:
            t = self.peek(k)
            if t.kind == "eof":
                return None
            if t.kind == "op" and t.text in "([":
                depth += 1
            elif t.kind == "op" and t.text in ")]":
                depth -= 1
                if depth == 0:
                    return k + 1
            k += 1

    def accept(self, text):
        if self.at(text):
            return self.next()
        return None

    def expect(self, text, expected=None):
        t = self.peek()
        if t.kind in ("op", "id") and t.text == text:
            return self.next()
        raise self.source.error(t, "unexpected end of statement" if t.kind == "eof" else "unexpected text",
                                expected or f"'{text}'")

    def expect_id(self, expected):
        t = self.peek()
        if t.kind != "id":
            raise self.source.error(t, "unexpected end of statement" if t.kind == "eof" else "unexpected text", expected)
        return self.next()


class StatementParser:
    def __init__(self, tokens, source, allow_placeholder=False):
        self.cur = Cursor(tokens, source)
        self.source = source
        self.ex = ExprParser(self.cur, allow_placeholder)
        # FOR names are known before any range is read: ztachip writes FOR after the
        # destination (on the source, or inside a $variable) and the destination may use them
        self.forvars = {tokens[i + 2].text: None for i in range(len(tokens) - 3)
                        if tokens[i].text == "FOR" and tokens[i + 1].text == "(" and tokens[i + 2].kind == "id"
                        and tokens[i + 3].text == "="}
        self.fors = []                      # [(name, Range, tok)] in the order written
        self.scatter = self.scatter_tok = None

    def error(self, tok, msg, expected=""):
        return self.source.error(tok, msg, expected)

    # -- statements -------------------------------------------------------
    def statement(self):
        cur = self.cur
        t = cur.peek()
        if t.kind == "id" and t.text in ("LOG_ON", "LOG_OFF"):
            cur.next()
            self._end()
            return LogStmt(t, t.text == "LOG_ON")
        if t.kind == "id" and t.text == "CALLBACK":
            cur.next()
            cur.expect("(", "'(' after CALLBACK")
            func = self.ex.expr()
            cur.expect(",", "',' then the integer parameter: CALLBACK(function, parm)")
            parm = self.ex.expr()
            cur.expect(")", "')' closing CALLBACK(function, parm)")
            self._end()
            return CallbackStmt(t, func, parm)
        if t.kind == "id" and t.text == "EXE_LOCKSTEP":
            return self._exe()
        if t.kind == "op" and t.text == "$" and cur.peek(1).kind == "id" and cur.at(":=", 2):
            raise self.error(t, "tensor variable definition in an unexpected place", "a transfer")
        while self._directive():
            pass
        self._refuse_ztachip(cur.peek())
        if not (t.kind == "op" and t.text in ("$", "(")) and not (t.kind == "id" and t.text in KEYWORDS + SCALAR_TYPES) \
                and not _bare_var_at(cur):
            raise self.error(t, "unknown keyword" if t.kind == "id" else "unexpected text", STATEMENT_STARTS)
        dst = self.operand()
        if dst.kind == "scalar":
            raise self.error(dst.tok, f"{dst.tok.text}(value) as a destination",
                             "a scalar only as the source: tensor <= INT16(value)")
        op = cur.peek()
        if not cur.accept("<="):
            raise self.error(op, "unexpected text" if op.kind != "eof" else "unexpected end of statement",
                             "'<=' then the source tensor")
        proc = proc_tok = None
        if cur.at("PROC"):
            proc_tok = cur.next()
            cur.expect("(", "'(' after PROC")
            proc = self.ex.expr()
            cur.expect(")", "')' closing PROC(n)")
            cur.expect("<=", "'<=' then the source tensor: A <= PROC(n) <= B")
            if cur.at("PROC"):
                raise self.error(cur.peek(), "more than one PROC in a transfer", "one stream program per transfer")
        src = self.operand()
        self._end()
        for side in (dst, src):
            seen = set()
            for r in _all_ranges(side):
                if r.kind == "for":
                    if r.forvar in seen:
                        raise self.error(r.tok, "FOR variable used twice in one tensor", "each FOR variable once per tensor")
                    seen.add(r.forvar)
        return TransferStmt(t, op, dst, src, self.fors, self.scatter, self.scatter_tok, proc, proc_tok)

    def _directive(self):
        """SCATTER(n), CONCURRENT[(n)] or FOR(I=b:e) at the cursor: parsed into the statement's lists."""
        cur = self.cur
        d = cur.peek()
        if d.kind != "id" or d.text not in ("SCATTER", "CONCURRENT", "FOR"):
            return False
        cur.next()
        if d.text == "FOR":
            cur.expect("(", "'(' after FOR")
            name = cur.expect_id("a loop variable name: FOR(I=begin:end)")
            if any(name.text == n for n, _r, _t in self.fors):
                raise self.error(name, "FOR variable defined twice", "a new name")
            cur.expect("=", "'=' then a range: FOR(I=begin:end)")
            r = self._range_body(name, for_directive=True)
            cur.expect(")", "')' closing FOR(I=begin:end)")
            self.fors.append((name.text, r, name))
            self.forvars[name.text] = r
            return True
        if self.scatter_tok is not None:
            raise self.error(d, f"{d.text} given twice", "one SCATTER(n) (CONCURRENT) per transfer")
        if d.text == "CONCURRENT" and not cur.at("("):
            self.scatter, self.scatter_tok = num(0), d          # ztachip's CONCURRENT: SCATTER(0)
            return True
        cur.expect("(", f"'(' after {d.text}")
        self.scatter, self.scatter_tok = self.ex.expr(), d
        cur.expect(")", f"')' closing {d.text}(n)")
        return True

    def _refuse_ztachip(self, t):
        if t.kind == "id" and t.text in ZTACHIP_REFUSED and not self.cur.at("::", 1):
            raise self.error(t, f"ztachip's {t.text} has no tensorsoc equivalent", ZTACHIP_REFUSED[t.text])

    def _end(self):
        t = self.cur.peek()
        if not self.cur.accept(";"):
            raise self.error(t, "unexpected text" if t.kind != "eof" else "missing ';'", "';' ending the statement")

    def _exe(self):
        cur = self.cur
        t = cur.next()
        cur.expect("(", "'(' after EXE_LOCKSTEP")
        cur.accept("$")
        a, sep = cur.peek(), cur.peek(1)
        if a.kind == "id" and sep.kind == "op" and sep.text == "::":
            cur.next()
            cur.next()
            fname = cur.expect_id("a function name after '::'")
            func = ("sym", a.text, fname.text, a, fname)
        else:
            func = self.ex.expr()
            if func[0] == "mem" and func[1][0] == "id" and func[2] == ".":
                func = ("maybe_sym", func[1][1], func[3], func[1][2], func)
        np_ = nt = None
        if cur.accept(","):
            np_ = self.ex.expr()
            if cur.accept(","):
                nt = self.ex.expr()
        cur.expect(")", "')' closing EXE_LOCKSTEP(function[, np[, nt]])")
        self._end()
        return ExeStmt(t, func, np_, nt)

    # -- operands ---------------------------------------------------------
    def operand(self):
        cur = self.cur
        dtype = pad = None
        while True:
            t = cur.peek()
            if t.kind == "op" and t.text == "(" or t.kind == "id" and t.text in QUALIFIERS and cur.at("(", 1):
                if dtype is not None:
                    raise self.error(t, "second data-type qualifier", "one (type) qualifier per tensor")
                if t.kind == "id":
                    cur.next()
                cur.next()
                dtype = self._type_or_expr(t)
                cur.expect(")", "')' closing the data-type qualifier")
            elif t.kind == "id" and t.text == "PAD":
                if pad is not None:
                    raise self.error(t, "PAD given twice", "one PAD(v) per tensor")
                cur.next()
                cur.expect("(", "'(' after PAD")
                pad = self.ex.expr()
                cur.expect(")", "')' closing PAD(v)")
            elif not self._directive():
                break
        self._refuse_ztachip(cur.peek())
        t = cur.next()
        if t.kind == "id" and t.text in ("DDR", "MEM", "SCRATCH"):
            o = self._mem(t)
        elif t.kind == "id" and t.text == "PCORE":
            o = self._pcore(t)
        elif t.kind == "id" and t.text == "SPU":
            o = Operand("spu", t)
        elif t.kind == "id" and t.text in SCALAR_TYPES and cur.at("("):
            return self._scalar(t, dtype, pad)
        elif t.kind == "id" and cur.at("::"):
            o = Operand("pcore", t, pcore_ranges=[Range("bcast", t)], bare=True)
            self._variable(o, t)
        elif t.kind == "op" and t.text == "$":
            raise self.error(t, "unknown tensor variable", "a $variable defined earlier with ':='")
        else:
            raise self.error(t, "unknown keyword" if t.kind == "id" else
                             ("unexpected end of statement" if t.kind == "eof" else "unexpected text"), OPERAND_STARTS)
        o.dtype, o.pad = dtype, pad
        return o

    def _scalar(self, t, dtype, pad):
        """ztachip's scalar source ``INT16(x)``: every element of the destination gets x."""
        if dtype is not None or pad is not None:
            raise self.error(t, f"qualifier on the scalar {t.text}(value)", f"{t.text}(value) alone")
        self.cur.expect("(", f"'(' after {t.text}")
        value = self.ex.expr()
        self.cur.expect(")", f"')' closing {t.text}(value)")
        return Operand("scalar", t, dtype=("type", t.text, t), pad=value)

    def _type_or_expr(self, paren_tok):
        cur = self.cur
        words, k = [], 0
        while cur.peek(k).kind == "id":
            words.append(cur.peek(k).text)
            k += 1
        if words and cur.at(")", k) and " ".join(words) in TYPE_NAMES:
            for _ in range(k):
                cur.next()
            return ("type", TYPE_NAMES[" ".join(words)], paren_tok)
        if len(words) == 1 and cur.at(")", 1) and words[0] in OTHER_TYPES:
            raise self.error(cur.peek(), f"data type {words[0]}",
                             "UINT8, INT8 or INT16: the TensorEngine moves 8- and 16-bit integers only")
        return self.ex.expr()

    def _mem(self, t):
        cur = self.cur
        o = Operand("mem", t, space="SCRATCH" if t.text == "SCRATCH" else "DDR")
        cur.expect("(", f"'(' then the pointer: {t.text}(pointer, dimension, ...)")
        o.pointer = self.ex.expr()
        while cur.accept(","):
            self._dimspec(o, in_overlap=False)
        cur.expect(")", "',' then a dimension, or ')'")
        o.ranges = self._ranges()
        return o

    def _dimspec(self, o, in_overlap):
        cur = self.cur
        t = cur.peek()
        after = cur.after_group() if t.kind == "op" and t.text == "(" else None
        if t.kind in ("num", "id") and cur.at("(", 1) or after is not None and cur.at("(", after):
            # L(d1,d2,...) with L a number, a name or a bracketed expression (guide 5.10)
            if in_overlap:
                raise self.error(t, "nested overlapped dimension", "plain dimensions inside an overlapped dimension")
            if o.overlap_limit is not None:
                raise self.error(t, "second overlapped dimension", "one overlapped dimension per tensor")
            o.overlap_limit = self.ex._primary()
            cur.expect("(")
            first = len(o.dims)
            while True:
                self._dimspec(o, in_overlap=True)
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in an overlapped dimension")
            for d in o.dims[first:]:
                d.overlap = True
            return
        size = self.ex.expr(stop_plus=True)
        check = cur.accept("+") is None
        o.dims.append(DimDecl(size, check, t, in_overlap))

    def _exprlist(self, what):
        cur = self.cur
        out = []
        if cur.accept("("):
            while True:
                out.append(self.ex.expr())
                if cur.accept(")"):
                    break
                cur.expect(",", f"',' or ')' in {what}")
        return out

    def _castlist(self):
        """A variable's cast dimensions: (node, check); '+' after one turns its bound check off (5.9)."""
        cur = self.cur
        out = []
        cur.expect("(")
        while True:
            n = self.ex.expr(stop_plus=True)
            out.append((n, cur.accept("+") is None))
            if cur.accept(")"):
                break
            cur.expect(",", "',' or ')' in the variable's dimensions")
        return out

    def _pcore(self, t):
        cur = self.cur
        o = Operand("pcore", t)
        if cur.at("("):
            o.pcore_dims = self._exprlist("the PCORE dimensions")
        o.pcore_ranges = self._ranges()
        cur.expect(".", "'.' then THREAD[...] or class::variable")
        n = cur.peek()
        if n.kind == "id" and n.text.upper() == "THREAD" and not cur.at("::", 1):
            cur.next()
            tdims = self._exprlist("the THREAD dimensions") if cur.at("(") else None
            o.thread = (tdims, self._ranges(), n)
            cur.expect(".", "'.' then class::variable")
        elif len(o.pcore_ranges) > len(o.pcore_dims or [None]):
            # ztachip's PCORE(n)[p][t]: the range after the PCORE ranges is the THREAD range
            first = len(o.pcore_dims or [None])
            o.thread = (None, o.pcore_ranges[first:], o.pcore_ranges[first].tok)
            o.pcore_ranges = o.pcore_ranges[:first]
        cur.accept("$")
        self._variable(o, cur.expect_id("class::variable"))
        return o

    def _variable(self, o, cls):
        """``class::name{.name}[(cast)]{[range]}`` after its class token."""
        cur = self.cur
        sep = cur.peek()
        if not (cur.accept("::") or cur.accept(".")):
            raise self.error(sep, "unexpected text", "'::' or '.' between class and variable")
        parts = [cur.expect_id("a variable name")]
        while cur.at(".") and cur.peek(1).kind == "id":
            cur.next()
            parts.append(cur.next())
        cast = self._castlist() if cur.at("(") else None
        name = ".".join(p.text for p in parts)
        o.var = (cls.text, name, parts[0], cast, self._ranges(), cls)

    # -- ranges -----------------------------------------------------------
    def _ranges(self):
        out = []
        while self.cur.at("["):
            t = self.cur.next()
            out.append(self._range_body(t))
            self.cur.expect("]", "']' closing the range [begin:stride:end]")
        return out

    def _range_body(self, t, for_directive=False):
        cur = self.cur
        p = cur.peek()
        if not for_directive and p.kind == "op" and p.text == "*":
            if cur.at("]", 1):
                cur.next()
                return Range("bcast", p)
        if cur.at("]") or (for_directive and cur.at(")")):
            raise self.error(p, "malformed range", "an index or begin:stride:end")
        parts = [None]
        while True:
            if not (cur.at(":") or cur.at("]") or cur.at(")")):
                if parts[-1] is not None:
                    break
                parts[-1] = self.ex.expr()
            if cur.at(":"):
                if len(parts) == 3:
                    raise self.error(cur.peek(), "malformed range", "at most begin:stride:end")
                cur.next()
                parts.append(None)
            else:
                break
        nxt = cur.peek()
        if not (cur.at("]") or (for_directive and cur.at(")"))):
            raise self.error(nxt, "malformed range", "']' after begin:stride:end" if not for_directive else "')' after begin:end")
        if len(parts) == 1:
            e = parts[0]
            if not for_directive and e[0] == "id" and e[1] in self.forvars:
                return Range("for", e[2], forvar=e[1])
            self._no_forvar(e)
            if for_directive:
                return Range("range", p, begin=e, end=e)
            return Range("index", p, begin=e, end=e)
        for e in parts:
            if e is not None:
                self._no_forvar(e)
        if len(parts) == 2:
            return Range("range", p, begin=parts[0], end=parts[1])
        return Range("range", p, begin=parts[0], stride=parts[1], end=parts[2])

    def _no_forvar(self, node):
        if not self.forvars:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            if not isinstance(n, tuple):
                continue
            if n[0] == "id" and n[1] in self.forvars:
                raise self.error(n[2], "FOR variable inside an expression", f"'[{n[1]}]' alone as an index")
            stack.extend(x for x in n[1:] if isinstance(x, (tuple, list)))
            for x in n[1:]:
                if isinstance(x, list):
                    stack.extend(x)


def _bare_var_at(cur):
    return cur.peek().kind == "id" and cur.at("::", 1)


def _all_ranges(o):
    out = list(o.ranges) + list(o.pcore_ranges)
    if o.thread:
        out += o.thread[1]
    if o.var:
        out += o.var[4]
    return out
