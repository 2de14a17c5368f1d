"""`tsoc mcore expand`: the element-by-element mapping of one transfer, like the guide's tables.

The mapping comes from the golden executor's address generation
(:func:`tensorsoc.verification.golden.tensor_exec.side_elements`) run on the instruction
the statement compiles to, so what is printed is what the TensorEngine does.
"""

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.mcore import lower
from tensorsoc.sw.mcore.cexpr import NotConstant, no_value_error
from tensorsoc.sw.mcore.errors import MCoreError
from tensorsoc.sw.mcore.parser import TransferStmt
from tensorsoc.sw.mcore.preprocessor import Preprocessor
from tensorsoc.sw.mcore.tokens import Source, tokenize
from tensorsoc.verification.golden.tensor_exec import side_elements


def _side_records(plan, side, ovl_bits):
    addr, oob, idx = side_elements(side, ovl_bits)
    dim_level = {i: l for l, i in enumerate(plan.levels)}
    out = []
    for e in range(addr.shape[0]):
        index = []
        for i, d in enumerate(plan.dims):
            if d.group != "repeat":
                index.append("*" if d.bcast else int(idx[dim_level[i]][e, 0]))
        rec = {"space": isa.SPACE_NAMES[side.space], "index": index,
               "oob": bool(oob[e].all()) if plan is not None else False}
        if side.space not in (isa.space("DDR"), isa.space("SCRATCH")):
            rec["name"] = plan.name
        out.append(rec)
    return out


def expand(text, symbols, defines=None):
    """Records ``[{"dst": {...}, "src": {...}}]`` of the last transfer in ``text``, and the plans."""
    lines = text.strip().split("\n")
    source = Source("<statement>", lines)
    pp = Preprocessor(symbols, "<statement>", defines)
    toks = []
    for n, line in enumerate(lines, 1):       # a statement may continue over several lines
        body = line.lstrip()
        col0 = len(line) - len(body) + 1
        if body.startswith(">"):
            body, col0 = body[1:], col0 + 1
        toks += tokenize(body, n, col0, source)[:-1]
    text = " ".join(ln.strip() for ln in lines)
    stmt = None
    for st in pp.statements(toks, source):
        stmt = pp.parse(st, source)
    if not isinstance(stmt, TransferStmt):
        if stmt is not None:
            raise source.error(stmt.tok, "nothing to expand", "a transfer 'destination <= source;'")
        raise MCoreError("nothing to expand", "<statement>", 1, 1, "", "a transfer 'destination <= source;'", text)
    dst, src = lower.plan_transfer(stmt, pp.ctx, source)
    try:
        t, err = lower.eval_transfer(stmt, dst, src, pp.ctx, source, pointer_default=0)
    except NotConstant as e:
        raise no_value_error(e, source, stmt.tok, "at expand time", lambda name: f"-D {name}=VALUE") from None
    if err:
        names = [n for n, (b, _m) in isa.ERRORS.items() if err >> b & 1]
        raise MCoreError("the transfer sets error flag(s) " + ", ".join(names), "<statement>", 1, 1, text,
                         "a transfer the TensorEngine accepts")
    try:
        bits = symbols.config.get("te_ovl_bits", isa.OVL_BITS)
        d = _side_records(dst, t.dst, bits)
        s = _side_records(src, t.src, bits)
    except ValueError as e:         # more elements than the executor enumerates
        raise MCoreError(str(e), "<statement>", stmt.tok.line, stmt.tok.col, text, "a smaller transfer") from None
    return [{"dst": a, "src": b} for a, b in zip(d, s)], (dst, src, t)


def table(records, plans):
    """Text table in the guide's style: one row per element, OOB notes on the right."""
    dst, src, _t = plans

    def columns(plan):
        if plan.space in ("DDR", "SCRATCH"):
            return None
        return [d.label for d in plan.dims if d.group != "repeat"]

    dcols, scols = columns(dst), columns(src)

    def cells(plan, cols, rec):
        if cols is None:
            name = plan.name if plan.space == "DDR" else "SCRATCH"
            return [name + "".join(f"[{i}]" for i in rec["index"])]
        return [str(i) for i in rec["index"]]

    head = (dcols or [dst.name if dst.space == "DDR" else "SCRATCH"]) + ["<="] + \
        (scols or [src.name if src.space == "DDR" else "SCRATCH"])
    rows = []
    for r in records:
        row = cells(dst, dcols, r["dst"]) + ["<="] + cells(src, scols, r["src"])
        note = []
        if r["src"]["oob"]:
            note.append("source out of bound: replaced with the pad value")
        if r["dst"]["oob"]:
            note.append("destination out of bound: write skipped")
        rows.append((row, note))
    widths = [max(len(head[i]), *(len(r[0][i]) for r in rows)) if rows else len(head[i]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    lines.append("-" * len(lines[0]))
    for row, note in rows:
        s = "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
        if note:
            s += "  <- (" + "; ".join(note) + ")"
        lines.append(s)
    return "\n".join(lines)
