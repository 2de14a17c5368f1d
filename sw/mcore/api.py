"""Python entry points: statements with constant operands to instruction objects.

``instructions(text, symbols, defines)`` compiles ``>``-less tensor statements whose
expressions are all known (literals, NP/NT/VW, ``defines``) into the
:mod:`tensorsoc.spec.tensor_isa` objects the runtime would issue -- the same arithmetic as the
generated C (``lower.SideBuilder`` mirrors ``ztam.c``).  TensorEngine tests use it to
get reference instructions from the guide's syntax.
"""

from tensorsoc.spec import tensor_isa as isa

from . import lower
from .cexpr import NotConstant, evaluate, no_value_error
from .parser import CallbackStmt, ExeStmt, LogStmt, TransferStmt, VarDef
from .preprocessor import Preprocessor
from .tokens import Source, tokenize


def instructions(text, symbols, defines=None, process=0, file="<statements>", tag=0):
    """Returns (instructions, error flags); statements that set an error flag are not issued,
    as in the runtime. CALLBACK tags are allocated ``tag``, ``tag`` + 1, ... in order (the
    runtime allocates them at run time; a program compiled ahead of time gets them here)."""
    lines = text.split("\n")
    source = Source(file, lines)
    pp = Preprocessor(symbols, file, defines)
    out, errors = [], 0
    pending = []            # a statement continued on the next line
    for n, line in enumerate(lines + [None], 1):
        if line is None:
            if pending:
                pp.parse(pending, source)        # raises: the last statement has no ';'
            break
        body = line.strip()
        if not body:
            continue
        col0 = len(line) - len(line.lstrip()) + 1
        if body.startswith(">"):
            body, col0 = body[1:], col0 + 1
        toks, pending = pending + tokenize(body, n, col0, source), []
        for st in pp.statements(toks, source, pending):
            stmt = pp.parse(st, source)
            try:
                if isinstance(stmt, VarDef):
                    continue
                if isinstance(stmt, TransferStmt):
                    dst, src = lower.plan_transfer(stmt, pp.ctx, source)
                    t, err = lower.eval_transfer(stmt, dst, src, pp.ctx, source, process)
                    errors |= err
                    if not err:
                        out.append(t)
                elif isinstance(stmt, ExeStmt):
                    out.append(isa.Exe(func=lower.exe_word(stmt, pp.ctx, source), process=process))
                elif isinstance(stmt, CallbackStmt):
                    out.append(isa.Callback(tag=tag, parm=evaluate(stmt.parm, pp.ctx.env, source) & 0xFFFFFFFF,
                                            process=process))
                    tag += 1
                elif isinstance(stmt, LogStmt):
                    out.append(isa.Log(on=int(stmt.on), process=process))
            except NotConstant as e:
                raise no_value_error(e, source, stmt.tok, "at compile time",
                                     lambda name: "a constant, or a value in defines") from None
    return out, errors


def words(instrs):
    """The instruction stream of a list of instruction objects."""
    w = []
    for i in instrs:
        w += isa.encode(i)
    return w
