"""Lowering: a parsed transfer becomes a *plan* of loop levels, then C or an instruction.

A tensor side is a list of dimensions in the order the statement writes them
(PCORE dims, THREAD dims, variable dims; or the DDR/SCRATCH dims).  Every
dimension gets a range (begin, stride, end), a size for the bound check and a
pitch (elements between consecutive indices).  Each dimension is one loop level;
level 0 is the innermost: the dimensions without FOR from right to left, then
the FOR dimensions from the rightmost FOR directive to the leftmost (guide 5.7).

The same plan is turned into:

* C calls to the runtime (``ztamSideInit/ztamSideDim/...``), evaluated at run time;
* an :class:`tensorsoc.spec.tensor_isa.Transfer` by :class:`SideBuilder`, the Python mirror of
  those runtime calls, when every expression is constant (``expand``, compile-time
  checks, tests comparing the C runtime's words with Python's).
"""

from dataclasses import dataclass, field
from typing import List, Optional

from tensorsoc.spec import tensor_isa as isa
from .cexpr import NotConstant, evaluate, mul, num, sub1, to_c, try_evaluate

FLAG_CHECK, FLAG_BCAST, FLAG_OVL = 1, 2, 4
SPU_WORDS = isa.SPU_PROGRAMS * isa.SPU_LOOKUP_SIZE


@dataclass
class PDim:
    label: str            # column name: PCORE, THREAD, variable or pointer text
    group: str            # 'pcore', 'thread', 'var', 'mem', 'spu'
    size: object          # node or None (no declared size: unchecked)
    check: bool
    pitch: object         # node, elements
    begin: object
    stride: object
    end: object
    bcast: bool = False
    forvar: Optional[str] = None
    overlap: bool = False
    tok: object = None


@dataclass
class PSide:
    space: str
    dtype: object                       # node
    base: object                        # node
    dims: List[PDim] = field(default_factory=list)
    ovl_limit: object = None            # node: limit * inner pitch (elements)
    casts: list = field(default_factory=list)   # (cast elements node, declared elements, tok)
    levels: list = field(default_factory=list)  # level -> index into dims
    name: str = ""                      # display name (pointer text, SCRATCH, variable)
    tok: object = None


class Context:
    """What lowering needs: symbols, the configuration constants, -D definitions."""

    def __init__(self, symbols, defines=None):
        self.symbols = symbols
        c = symbols.config
        self.config = c
        self.subst = {"NP": c["np"], "NT": c["nt"], "VW": c["vw"]}
        self.env = dict(self.subst)
        self.env["SPU_LOOKUP_SIZE"] = isa.SPU_LOOKUP_SIZE
        for name, (v, _b, _s, macro) in isa.DTYPES.items():
            self.env[macro] = v
        if defines:
            self.env.update(defines)

    def const(self, node, source):
        return try_evaluate(node, self.env, source)


def _dtype_node(q):
    if q is None:
        return num(isa.dtype("INT16"))
    if q[0] == "type":
        return num(isa.dtype(q[1]))
    return q


def _check_class(ctx, source, cls, cls_tok, table):
    syms = ctx.symbols
    if not syms.has_class(cls):
        if table:
            known = ", ".join(sorted(table))
        elif syms.path == "<none>":
            known = "none: pass --symbols FILE.json"
        else:
            known = f"none: {syms.path} declares no classes"
        raise source.error(cls_tok, "unknown class", f"a class of the PCORE program (known: {known})")


def lookup_variable(ctx, source, cls, name, cls_tok, name_tok):
    syms = ctx.symbols
    _check_class(ctx, source, cls, cls_tok, syms.variables)
    vs = syms.variables.get(cls, {})
    if name not in vs:
        known = ", ".join(sorted(vs)) or "none"
        raise source.error(name_tok, f"unknown variable of class '{cls}'", f"one of: {known}")
    return vs[name]


def lookup_function(ctx, source, cls, name, cls_tok, name_tok):
    syms = ctx.symbols
    _check_class(ctx, source, cls, cls_tok, syms.functions)
    fs = syms.functions.get(cls, {})
    if name not in fs:
        raise source.error(name_tok, f"unknown function of class '{cls}'", "one of: " + (", ".join(sorted(fs)) or "none"))
    return fs[name]


def _apply_ranges(ctx, source, dims, ranges, fors, role, owner_tok, no_declared=False):
    """Give each PDim its range: explicit, leading index 0, or the whole dimension."""
    if len(ranges) > len(dims):
        raise source.error(ranges[len(dims)].tok, "more ranges than dimensions",
                           f"at most {len(dims)} range(s) for this tensor")
    if ranges:
        lead = len(dims) - len(ranges)
        for d in dims[:lead]:
            d.begin, d.stride, d.end = num(0), num(1), num(0)
        pairs = zip(dims[lead:], ranges)
    else:
        pairs = ((d, None) for d in dims)
    for d, r in pairs:
        if r is not None and r.kind == "for":
            d.forvar = r.forvar
            r = fors[r.forvar]
        if r is not None and r.kind == "bcast":
            if role != "dst":
                raise source.error(r.tok, "broadcast range in a source tensor", "'[*]' only in the destination")
            if d.size is None:
                raise source.error(r.tok, "broadcast range on a dimension without a size", "a declared dimension")
            d.bcast = True
            d.begin, d.stride, d.end = num(0), num(1), sub1(d.size)
            continue
        begin = r.begin if r is not None and r.begin is not None else num(0)
        stride = r.stride if r is not None and r.stride is not None else num(1)
        if r is not None and r.end is not None:
            end = r.end
        elif d.size is not None:
            end = sub1(d.size)
        else:
            tok = r.tok if r is not None else owner_tok
            raise source.error(tok, "range without an end on a tensor without dimensions",
                               "an explicit end, e.g. [0:n-1], or declared dimensions")
        sv = ctx.const(stride, source)
        if sv == 0:
            raise source.error(stride[-1], "malformed range: stride 0", "a non-zero stride")
        bv, ev = ctx.const(begin, source), ctx.const(end, source)
        if sv is not None and bv is not None and ev is not None and _count(bv, sv, ev) <= 0:
            raise source.error(r.tok, f"malformed range: empty ({bv}:{sv}:{ev})", "end reachable from begin with this stride")
        d.begin, d.stride, d.end = begin, stride, end


def _count(b, s, e):
    q = abs(e - b) // abs(s)
    q = q if (e - b >= 0) == (s >= 0) else -q
    return q + 1


def _pitches(dims, unit, overlap_limit=None):
    """Pitch of each dim right to left; an overlapped group's outer pitch is limit*inner pitch."""
    p = unit
    ovl = None
    for i in range(len(dims) - 1, -1, -1):
        d = dims[i]
        d.pitch = p
        if d.overlap and (i == 0 or not dims[i - 1].overlap):
            ovl = mul(overlap_limit, dims[i + _group_len(dims, i) - 1].pitch)
            p = ovl
        else:
            p = mul(p, d.size) if d.size is not None else None
    return p, ovl


def _group_len(dims, first):
    n = 0
    while first + n < len(dims) and dims[first + n].overlap:
        n += 1
    return n


def _pow2_check(ctx, source, nodes):
    for n in nodes:
        v = ctx.const(n, source)
        if v is not None and (v <= 0 or v & (v - 1)):
            raise source.error(n[-1], f"PCORE dimension {v} is not a power of 2", "a power of 2 (guide 3.3)")


def plan_operand(o, ctx, source, role, fors):
    if o.kind == "spu":
        if role != "dst":
            raise source.error(o.tok, "SPU as a source", "SPU only as the destination of a load: SPU <= tensor")
        side = PSide("SPU", num(isa.dtype("INT16")), num(0), name="SPU", tok=o.tok)
        side.dims = [PDim("SPU", "spu", num(SPU_WORDS), True, num(1), None, None, None, tok=o.tok)]
        return side
    if o.pad is not None and role == "dst":
        raise source.error(o.tok, "PAD on a destination", "PAD(v) on the source tensor (it fills out-of-bound reads)")
    dtype = _dtype_node(o.dtype)
    dv = ctx.const(dtype, source)
    if dv is not None and dv not in isa.DTYPE_NAMES:
        raise source.error(o.dtype[-1], f"data type {dv} is not a known type",
                           "DP_DATA_TYPE_UINT8 (0), DP_DATA_TYPE_INT8 (1) or DP_DATA_TYPE_INT16 (2)")
    if o.kind == "mem":
        side = PSide(o.space, dtype, o.pointer, name=to_c(o.pointer, {}) if o.space == "DDR" else "SCRATCH", tok=o.tok)
        if o.dims:
            side.dims = [PDim(side.name, "mem", d.size, d.check, None, None, None, None, overlap=d.overlap, tok=d.tok)
                         for d in o.dims]
        else:
            side.dims = [PDim(side.name, "mem", None, False, None, None, None, None, tok=o.tok)]
        _apply_ranges(ctx, source, side.dims, o.ranges, fors, role, o.tok)
        _, side.ovl_limit = _pitches(side.dims, num(1), o.overlap_limit)
        return side
    # PCORE
    cls, vname, name_tok, cast, vranges, cls_tok = o.var
    if o.bare and role != "dst":
        raise source.error(cls_tok, f"'{cls}::{vname}' without PCORE as a source",
                           f"PCORE[i].THREAD[j].{cls}::{vname} (a bare class::var is written to every PCORE)")
    var = lookup_variable(ctx, source, cls, vname, cls_tok, name_tok)
    c = ctx.config
    private = var.space == "private"
    thread_spec = o.thread
    if private and thread_spec is None:
        # guide section 4 writes a private destination without THREAD: every thread receives it
        if role != "dst":
            raise source.error(name_tok, f"private variable '{cls}::{vname}' read without a thread range",
                               "PCORE[...].THREAD[...].class::variable")
        from .parser import Range
        thread_spec = (None, [Range("bcast", name_tok)], name_tok)
    if not private and o.thread is not None:
        raise source.error(o.thread[2], f"THREAD on shared variable '{cls}::{vname}'",
                           "PCORE[...].class::variable for a shared variable")
    side = PSide("PCORE_PRIVATE" if private else "PCORE_SHARED", dtype, num(var.addr), name=vname, tok=o.tok)
    pdims = o.pcore_dims if o.pcore_dims else [num(c["np"])]
    _pow2_check(ctx, source, pdims)
    pcore = [PDim("PCORE", "pcore", n, True, None, None, None, None, tok=n[-1]) for n in pdims]
    _apply_ranges(ctx, source, pcore, o.pcore_ranges, fors, role, o.tok)
    dims = list(pcore)
    thread = []
    if private:
        tdims = thread_spec[0] if thread_spec[0] else [num(c["nt"])]
        thread = [PDim("THREAD", "thread", n, True, None, None, None, None, tok=n[-1]) for n in tdims]
        _apply_ranges(ctx, source, thread, thread_spec[1], fors, role, thread_spec[2])
        dims += thread
    if cast:
        vdims = [PDim(vname, "var", n, check, None, None, None, None, tok=n[-1]) for n, check in cast]
        total = num(1)
        for n, _check in cast:
            total = mul(total, n)
        # A '+' dimension is not bound-checked (5.9): the cast may run past the variable
        # into the ones after it; only the memory's physical bound (RANGE) applies.
        if all(check for _n, check in cast):
            tv = ctx.const(total, source)
            if tv is not None and tv > var.size:
                raise source.error(name_tok, f"cast of '{vname}' to {tv} elements",
                                   f"at most the {var.size} elements declared {list(var.dims)}")
            if tv is None:
                side.casts.append((total, var.size, name_tok))
    else:
        vdims = [PDim(vname, "var", num(d), True, None, None, None, None, tok=name_tok) for d in var.dims]
    _apply_ranges(ctx, source, vdims, vranges, fors, role, name_tok)
    dims += vdims
    _pitches(vdims, num(1))
    if private:
        _pitches(thread, num(c["private_words"]))
        _pitches(pcore, num(c["nt"] * c["private_words"]))
    else:
        _pitches(pcore, num(c["shared_words"]))
    side.dims = dims
    return side


def order_levels(side, fors, source, limit=isa.MAX_LEVELS, key="te_levels"):
    """Level order: non-FOR dims right to left, then FOR dims from the rightmost FOR directive.
    ``limit``: the TensorEngine's loop levels of this side (config ``key``: ``te_levels``, or
    ``te_dst_levels`` for a destination)."""
    plain = [i for i in range(len(side.dims) - 1, -1, -1) if side.dims[i].forvar is None]
    by_for = {d.forvar: i for i, d in enumerate(side.dims) if d.forvar is not None}
    for name, _r, _tok in reversed(fors):
        if name in by_for:
            plain.append(by_for[name])
    side.levels = plain
    if len(plain) > limit:
        raise source.error(side.tok, f"tensor with {len(plain)} dimensions",
                           f"at most {limit} (the TensorEngine's loop levels"
                           + (f", config {key}; the format allows {isa.MAX_LEVELS})" if limit < isa.MAX_LEVELS
                              else ")"))


def plan_scalar(o, dst):
    """ztachip's ``A <= INT16(x)``, in the guide's terms: a source whose every read is out
    of bound (each level checked against bound 0), so it yields its PAD value x (5.11),
    walking the same ranges as the destination."""
    side = PSide("DDR", _dtype_node(o.dtype), num(0), name=o.tok.text, tok=o.tok)
    side.dims = [PDim(o.tok.text, "scalar", num(0), True, num(0), d.begin, d.stride, d.end, forvar=d.forvar, tok=o.tok)
                 for d in dst.dims if not d.bcast]
    return side


def plan_transfer(stmt, ctx, source):
    fors = {name: r for name, r, _t in stmt.fors}
    dst = plan_operand(stmt.dst, ctx, source, "dst", fors)
    if stmt.src.kind == "scalar":
        if dst.space == "SPU":
            raise source.error(stmt.src.tok, "scalar source of an SPU load", "a tensor holding the stream programs")
        src = PSide("DDR", None, num(0))        # planned below, once the destination has all its levels
    else:
        src = plan_operand(stmt.src, ctx, source, "src", fors)
    used = {d.forvar for d in dst.dims + src.dims if d.forvar}
    for name, r, tok in stmt.fors:
        if name not in used:
            # a FOR no tensor indexes repeats the destination loop (step 0), as in guide 5.8.4
            if dst.space == "SPU":
                raise source.error(tok, "FOR variable not used by an SPU load", f"'[{name}]' as an index")
            d = PDim(f"FOR {name}", "repeat", None, False, num(0), None, None, None, forvar=name, tok=tok)
            _apply_ranges(ctx, source, [d], [r], {}, "dst", tok)
            dst.dims.append(d)
    if dst.space == "SPU":
        if stmt.proc is not None:
            raise source.error(stmt.proc_tok, "PROC on an SPU load", "a plain SPU <= tensor")
    if stmt.src.kind == "scalar":
        src = plan_scalar(stmt.src, dst)
    limit = ctx.config.get("te_levels", isa.MAX_LEVELS)
    order_levels(src, stmt.fors, source, limit)
    order_levels(dst, stmt.fors, source, ctx.config.get("te_dst_levels", limit), "te_dst_levels")
    if dst.ovl_limit is not None and not ctx.config.get("te_dst_overlap", 1):
        tok = next((d.tok for d in dst.dims if d.overlap), dst.tok)
        raise source.error(tok, "overlapped dimension in a destination",
                           "none: this TensorEngine has no destination overlap (config te_dst_overlap=0; "
                           "an engine with --set te_dst_overlap=1 takes it)")
    if stmt.scatter is not None:
        v = ctx.const(stmt.scatter, source)
        if v is None or not 0 <= v <= 7:
            raise source.error(stmt.scatter_tok, "SCATTER(n) needs a constant n", "0 <= n <= 7")
    if stmt.proc is not None:
        v = ctx.const(stmt.proc, source)
        if v is not None and not 0 <= v < isa.SPU_PROGRAMS:
            raise source.error(stmt.proc_tok, f"PROC({v}): no such stream program", f"0..{isa.SPU_PROGRAMS - 1}")
    if dst.space != "SPU":
        dn, sn = side_count(dst, ctx, source), side_count(src, ctx, source)
        if dn is not None and sn is not None and dn != sn:
            raise source.error(stmt.op_tok, f"element count mismatch: destination has {dn} elements, source has {sn}",
                               "the same number of elements on both sides")
    return dst, src


def side_count(side, ctx, source):
    """Elements the side moves if known at compile time (broadcast dims excluded), else None."""
    n = 1
    for d in side.dims:
        if d.bcast:
            continue
        if d.group == "spu":
            return None
        b, s, e = (ctx.const(x, source) for x in (d.begin, d.stride, d.end))
        if None in (b, s, e):
            return None
        n *= _count(b, s, e)
    return n


# ---------------------------------------------------------------------------
# Python mirror of the runtime's builder (sw/runtime/ztam.c)
# ---------------------------------------------------------------------------

def _s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


class SideBuilder:
    """Builds isa.Side exactly as ztamSideInit/ztamSideDim/ztamSideOverlap do in C."""

    def __init__(self):
        self.err = 0

    def init(self, space, dtype, base):
        if dtype not in isa.DTYPE_NAMES:
            self.err |= 1 << isa.ERRORS["SPEC"][0]
            dtype = isa.dtype("INT16")
        s = isa.Side(space=space, dtype=dtype, base=base & 0xFFFFFFFF)
        s.levels = [isa.Level() for _ in range(isa.MAX_LEVELS)]
        s._n = 0
        return s

    def dim(self, s, level, begin, stride, end, size, pitch, flags):
        esize = isa.element_bytes(s.space, s.dtype)
        if stride == 0 or not 0 <= level < isa.MAX_LEVELS:
            self.err |= 1 << isa.ERRORS["SPEC"][0]
            return
        count = _s32(_count(begin, stride, end))
        if count <= 0:
            self.err |= 1 << isa.ERRORS["SPEC"][0]
            return
        lv = s.levels[level]
        lv.count, lv.step = count, _s32(stride * pitch * esize)
        lv.start, lv.stride, lv.bound = _s32(begin), _s32(stride), size & 0xFFFFFFFF
        off = _s32(begin * pitch * esize)
        if flags & FLAG_CHECK:
            s.check_mask |= 1 << level
        if flags & FLAG_BCAST:
            s.bcast_mask |= 1 << level
        if flags & FLAG_OVL:
            s.ovl_mask |= 1 << level
            s.ovl_start = _s32(s.ovl_start + off)
        s.base = (s.base + off) & 0xFFFFFFFF
        s._n = max(s._n, level + 1)

    def overlap(self, s, limit):
        s.ovl_limit = (limit * isa.element_bytes(s.space, s.dtype)) & 0xFFFFFFFF

    def cast(self, cast_elems, declared):
        if cast_elems > declared:
            self.err |= 1 << isa.ERRORS["CAST"][0]

    @staticmethod
    def finish(s):
        s.levels = s.levels[:s._n]
        del s._n
        return s


def _flags(d):
    return (FLAG_CHECK if d.check and d.size is not None else 0) | (FLAG_BCAST if d.bcast else 0) | \
           (FLAG_OVL if d.overlap else 0)


def eval_side(side, ctx, source, builder, count_of_src=None, pointer_default=None):
    """The isa.Side of a planned side, all expressions folded; raises NotConstant."""
    def ev(node):
        return evaluate(node, ctx.env, source)
    try:
        base = ev(side.base)
    except NotConstant:
        if pointer_default is None:
            raise
        base = pointer_default
    s = builder.init(isa.space(side.space), ev(side.dtype), base)
    for cast, declared, _tok in side.casts:
        builder.cast(ev(cast), declared)
    for level, i in enumerate(side.levels):
        d = side.dims[i]
        if d.group == "spu":
            builder.dim(s, level, 0, 1, count_of_src - 1, SPU_WORDS, 1, FLAG_CHECK)
            continue
        size = ev(d.size) if d.size is not None else 0
        builder.dim(s, level, ev(d.begin), ev(d.stride), ev(d.end), size, ev(d.pitch), _flags(d))
    if side.ovl_limit is not None:
        builder.overlap(s, ev(side.ovl_limit))
    return builder.finish(s)


def eval_transfer(stmt, dst, src, ctx, source, process=0, pointer_default=None):
    """(isa.Transfer, error flags) of a transfer whose expressions are all constant."""
    b = SideBuilder()
    s = eval_side(src, ctx, source, b, pointer_default=pointer_default)
    d = eval_side(dst, ctx, source, b, count_of_src=s.element_count(), pointer_default=pointer_default)
    ev = lambda n: evaluate(n, ctx.env, source)  # noqa: E731
    t = isa.Transfer(dst=d, src=s, process=process,
                     scatter=int(stmt.scatter is not None), scatter_n=ev(stmt.scatter) if stmt.scatter is not None else 0,
                     proc_en=int(stmt.proc is not None), proc=ev(stmt.proc) & 3 if stmt.proc is not None else 0,
                     pad=ev(stmt.src.pad) & 0xFFFF if stmt.src.pad is not None else 0)
    err = b.err
    if not err and d.space != isa.space("SPU") and t.count_error():
        err |= 1 << isa.ERRORS["COUNT"][0]
    return t, err


# ---------------------------------------------------------------------------
# C emission
# ---------------------------------------------------------------------------

_SPACE_MACRO = {n: f"ZTAM_SPACE_{n}" for n in isa.SPACES}


def _c(node, ctx):
    return to_c(node, ctx.subst)


def _c_dtype(node, ctx):
    if node[0] == "num":
        return f"ZTAM_DTYPE_{isa.DTYPE_NAMES[node[1]]}" if node[1] in isa.DTYPE_NAMES else str(node[1])
    return _c(node, ctx)


def emit_side(side, which, ctx, out):
    base = _c(side.base, ctx)
    out.append(f"ztamSideInit(&_zx, &_zx.{which}, {_SPACE_MACRO[side.space]}, {_c_dtype(side.dtype, ctx)}, "
               f"(uint32_t)(uintptr_t)({base}));")
    for cast, declared, _tok in side.casts:
        out.append(f"ztamSideCast(&_zx, {_c(cast, ctx)}, {declared});")
    for level, i in enumerate(side.levels):
        d = side.dims[i]
        if d.group == "spu":
            out.append(f"ztamSideDim(&_zx, &_zx.dst, {level}, 0, 1, (int32_t)ztamSideCount(&_zx.src) - 1, "
                       f"{SPU_WORDS}, 1, {FLAG_CHECK});")
            continue
        size = _c(d.size, ctx) if d.size is not None else "0"
        out.append(f"ztamSideDim(&_zx, &_zx.{which}, {level}, {_c(d.begin, ctx)}, {_c(d.stride, ctx)}, "
                   f"{_c(d.end, ctx)}, {size}, {_c(d.pitch, ctx)}, {_flags(d)});")
    if side.ovl_limit is not None:
        out.append(f"ztamSideOverlap(&_zx, &_zx.{which}, {_c(side.ovl_limit, ctx)});")


def emit_transfer(stmt, dst, src, ctx):
    out = []
    scatter = f"1, {_c(stmt.scatter, ctx)}" if stmt.scatter is not None else "0, 0"
    proc = f"1, {_c(stmt.proc, ctx)}" if stmt.proc is not None else "0, 0"
    pad = _c(stmt.src.pad, ctx) if stmt.src.pad is not None else "0"
    out.append(f"ztam_xfer_t _zx; ztamXferInit(&_zx, {scatter}, {proc}, {pad});")
    emit_side(src, "src", ctx, out)
    emit_side(dst, "dst", ctx, out)
    out.append("ztamIssueXfer(&_zx);")
    return "{ " + " ".join(out) + " }"


def emit_exe(stmt, ctx, source):
    f = stmt.func
    np_ = _c(stmt.np, ctx) if stmt.np is not None else None
    nt = _c(stmt.nt, ctx) if stmt.nt is not None else None
    if f[0] == "maybe_sym":
        f = ("sym",) + f[1:4] + (f[4][-1],) if ctx.symbols.has_class(f[1]) else f[4]
    if f[0] == "sym":
        addr = lookup_function(ctx, source, f[1], f[2], f[3], f[4])
        word = f"ztamBuildKernelFunc({addr}, {np_ or ctx.config['np']}, {nt or ctx.config['nt']})"
        return f"ztamExe({word}, -1, -1);"
    return f"ztamExe((uint32_t)({_c(f, ctx)}), {np_ or '-1'}, {nt or '-1'});"


def exe_word(stmt, ctx, source):
    """The function word of an EXE_LOCKSTEP whose operands are constant (for expand/tests)."""
    f = stmt.func
    if f[0] == "maybe_sym" and ctx.symbols.has_class(f[1]):
        f = ("sym",) + f[1:4] + (f[4][-1],)
    ev = lambda n: evaluate(n, ctx.env, source)  # noqa: E731
    if f[0] == "sym":
        addr = lookup_function(ctx, source, f[1], f[2], f[3], f[4])
        return isa.build_kernel_func(addr, ev(stmt.np) if stmt.np is not None else ctx.config["np"],
                                     ev(stmt.nt) if stmt.nt is not None else ctx.config["nt"])
    w = ev(f[4] if f[0] == "maybe_sym" else f)
    a = w & 0xFFFF
    n_p = ev(stmt.np) if stmt.np is not None else (w >> 16) & 0xFF
    n_t = ev(stmt.nt) if stmt.nt is not None else (w >> 24) & 0xFF
    return isa.build_kernel_func(a, n_p, n_t)
