"""The PCORE program assembler.

A ``.pcore`` file declares constants, classes with private and shared
variables, and kernel functions written in the PCORE vector instruction set
(docs/pcore_isa.md).  ``assemble`` turns one or more files into an
instruction image (32-bit words) and the symbol table the MCORE preprocessor
reads (format ``tensorsoc-pcore-symbols``, version 1).

Errors raise ``AsmError`` naming file:line, the offending text and what was
expected.
"""

import ast
import json
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.config import SoCConfig

SYMBOLS_FORMAT = "tensorsoc-pcore-symbols"
SYMBOLS_VERSION = 1


class AsmError(Exception):
    def __init__(self, path, line, text, message):
        self.path, self.line, self.text, self.message = path, line, text, message
        super().__init__(f"{path}:{line}: {message}\n    {text.strip()}")


@dataclass
class Variable:
    name: str
    space: str       # "private" | "shared"
    addr: int
    dims: list

    @property
    def size(self):
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass
class PClass:
    name: str
    variables: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    next_addr: dict = field(default_factory=lambda: {"private": 0, "shared": 0})


@dataclass
class Program:
    config: SoCConfig
    words: list
    classes: dict
    listing: list          # (address, word, file, line, source text)

    def symbols(self):
        c = self.config
        return {
            "format": SYMBOLS_FORMAT,
            "version": SYMBOLS_VERSION,
            "config": {"np": c.np, "nt": c.nt, "vw": c.vw,
                       "private_words": c.pcore_private_words,
                       "shared_words": c.pcore_shared_words,
                       "te_levels": c.te_levels, "te_dst_levels": c.dst_levels,
                       "te_dst_overlap": c.te_dst_overlap, "te_ovl_bits": c.te_ovl_bits},
            "classes": {
                cname: {
                    "variables": {v.name: {"space": v.space, "addr": v.addr, "dims": list(v.dims)}
                                  for v in cls.variables.values()},
                    "functions": {f: {"addr": a} for f, a in cls.functions.items()},
                } for cname, cls in self.classes.items()},
        }

    def function(self, cls, func):
        return self.classes[cls].functions[func]

    def variable(self, cls, name):
        return self.classes[cls].variables[name]

    def image_bytes(self):
        return b"".join(w.to_bytes(4, "little") for w in self.words)

    def write(self, image_path, symbols_path=None):
        image_path = Path(image_path)
        if image_path.suffix == ".hex":
            image_path.write_text("".join(f"{w:08x}\n" for w in self.words))
        else:
            image_path.write_bytes(self.image_bytes())
        if symbols_path:
            Path(symbols_path).write_text(json.dumps(self.symbols(), indent=1) + "\n")

    def listing_text(self):
        return "".join(f"{a:4d}  {w:08x}  {isa.disassemble(w):32s} # {Path(f).name}:{ln}\n"
                       for a, w, f, ln, _ in self.listing)


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.Div: operator.floordiv}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_RE_CONST = re.compile(rf"^const\s+({_IDENT})\s*=\s*(.+)$")
_RE_CLASS = re.compile(rf"^class\s+({_IDENT})\s*\{{$")
_RE_FUNC = re.compile(rf"^func\s+({_IDENT})\s*\{{$")
_RE_VAR = re.compile(rf"^(private|shared)\s+({_IDENT})\s*((?:\[[^\]]+\])*)$")
_RE_LOOP = re.compile(r"^loop\s+(.+?)\s*\{$")
_RE_IF = re.compile(r"^if\s+(.+?)\s*\{$")
_RE_ELSE = re.compile(r"^\}\s*else\s*\{$")
_RE_MEMOP = re.compile(r"^(p|pb|s|sb)\[\s*a([0-7])\s*(\+?)\s*\]$")
_RE_VREG = re.compile(r"^r([0-7])$")
_RE_AREG = re.compile(r"^a([0-7])$")

# Vector instruction signatures (d = destination, s = source, h = shift): spec.pcore_isa.
SIGNATURES = isa.SIGNATURES
_SIG_TEXT = {"d": "destination (rN or p[aN])", "s": "source (rN, p[aN], pb[aN], s[aN], sb[aN] or 0)",
             "h": "shift amount"}
_SCALARS = {"seta", "sets", "adda", "mova", "nop", "halt"}


def _split_operands(text):
    return [t.strip() for t in text.split(",")] if text.strip() else []


class _Assembler:
    def __init__(self, config, defines):
        self.config = config
        self.defines = dict(defines or {})
        self.words = []
        self.listing = []
        self.classes = {}
        self.loop_ends = set()

    # -- errors and expressions ---------------------------------------------------
    def error(self, msg):
        raise AsmError(self.path, self.lineno, self.text, msg)

    def names(self):
        c = self.config
        env = {"VW": c.vw, "NP": c.np, "NT": c.nt, "PRIVATE_WORDS": c.pcore_private_words,
               "SHARED_WORDS": c.pcore_shared_words}
        env.update(self.consts)
        if self.cls:
            for v in self.cls.variables.values():
                env[v.name] = v.addr
                if self.func and v.name.startswith(self.func + "."):
                    env[v.name.split(".", 1)[1]] = v.addr
        return env

    def eval(self, text, what="an integer expression"):
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            self.error(f"cannot parse {text.strip()!r}: expected {what}")
        env = self.names()
        variables = self.cls.variables if self.cls else {}

        def ev(n):
            if isinstance(n, ast.Expression):
                return ev(n.body)
            if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
                return n.value
            if isinstance(n, ast.Name):
                if n.id not in env:
                    self.error(f"unknown name {n.id!r} in {text.strip()!r}: expected a constant, "
                               "a variable of this class or VW/NP/NT/PRIVATE_WORDS/SHARED_WORDS")
                return env[n.id]
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                full = f"{n.value.id}.{n.attr}"
                if full in variables:
                    return variables[full].addr
                self.error(f"unknown variable {full!r}")
            if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
                l, r = ev(n.left), ev(n.right)
                if isinstance(n.op, (ast.FloorDiv, ast.Div, ast.Mod)) and r == 0:
                    self.error(f"division by zero in {text.strip()!r}")
                return _BINOPS[type(n.op)](l, r)
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Not)):
                v = ev(n.operand)
                return -v if isinstance(n.op, ast.USub) else (int(not v) if isinstance(n.op, ast.Not) else v)
            if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _CMPOPS:
                return int(_CMPOPS[type(n.ops[0])](ev(n.left), ev(n.comparators[0])))
            if isinstance(n, ast.BoolOp):
                vals = [ev(v) for v in n.values]
                return int(all(vals) if isinstance(n.op, ast.And) else any(vals))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "size" \
                    and len(n.args) == 1:
                a = n.args[0]
                name = a.id if isinstance(a, ast.Name) else (
                    f"{a.value.id}.{a.attr}" if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) else None)
                for cand in ([f"{self.func}.{name}"] if self.func else []) + [name]:
                    if cand in variables:
                        return variables[cand].size
                self.error(f"size(): {name!r} is not a variable of this class")
            self.error(f"unsupported expression {text.strip()!r}: expected {what} "
                       "(integers, names, + - * // % << >> & |, comparisons, and/or/not, size(var))")
        return ev(tree)

    # -- emission --------------------------------------------------------------------
    def emit(self, word):
        if len(self.words) >= (1 << isa.LOOP_END_BITS):
            self.error(f"program too large: more than {1 << isa.LOOP_END_BITS} instructions")
        self.listing.append((len(self.words), word, self.path, self.lineno, self.text))
        self.words.append(word)

    def operand(self, text, role):
        t = text.strip()
        if role == "s" and t == "0":
            return isa.Operand()
        m = _RE_VREG.match(t)
        if m:
            return isa.Operand(isa.K_REG, int(m.group(1)))
        m = _RE_MEMOP.match(t)
        if m:
            kind = {"p": isa.K_PRIV, "pb": isa.K_PRIVB, "s": isa.K_SHR, "sb": isa.K_SHRB}[m.group(1)]
            if role == "d" and kind != isa.K_PRIV:
                self.error(f"{t!r} cannot be a destination: expected rN or p[aN] "
                           "(shared memory is read-only for kernels; broadcasts are sources only)")
            return isa.Operand(kind, int(m.group(2)), bool(m.group(3)))
        self.error(f"bad operand {t!r}: expected {_SIG_TEXT[role]}")

    def areg(self, text):
        m = _RE_AREG.match(text.strip())
        if not m:
            self.error(f"bad address register {text.strip()!r}: expected a0..a7")
        return int(m.group(1))

    def vector(self, op, args):
        sig = SIGNATURES[op]
        if len(args) != len(sig):
            self.error(f"{op} takes {len(sig)} operand(s): " + ", ".join(_SIG_TEXT[r] for r in sig))
        dst, srcs, shift = isa.Operand(), [], 0
        for role, text in zip(sig, args):
            if role == "d":
                dst = self.operand(text, "d")
            elif role == "s":
                srcs.append(self.operand(text, "s"))
            else:
                shift = self.eval(text, "a shift amount")
                if not 0 <= shift < (1 << isa.SHIFT_BITS):
                    self.error(f"shift {shift} out of range: expected 0..{(1 << isa.SHIFT_BITS) - 1}")
        conflict = isa.source_conflict(srcs)
        if conflict:
            self.error(conflict)
        srcs += [isa.Operand()] * (2 - len(srcs))
        self.emit(isa.encode_vector(op, dst, srcs[0], srcs[1], shift))

    def scalar(self, op, args):
        if op in ("nop", "halt"):
            if args:
                self.error(f"{op} takes no operands")
            self.emit(isa.encode_scalar(op))
            return
        if op == "mova":
            if len(args) != 2:
                self.error("mova takes 2 operands: destination aN, source aM")
            self.emit(isa.encode_scalar("mova", self.areg(args[0]), self.areg(args[1])))
            return
        want = "aN, address[, stride]" if op == "seta" else ("aN, stride" if op == "sets" else "aN, signed increment")
        if len(args) not in ((2, 3) if op == "seta" else (2,)):
            self.error(f"{op} takes {want}")
        r = self.areg(args[0])
        v = self.eval(args[1])
        lo, hi = (-(1 << 15), (1 << 15) - 1) if op == "adda" else (0, (1 << isa.AREG_BITS) - 1)
        if not lo <= v <= hi:
            self.error(f"{op} value {v} out of range: expected {lo}..{hi}")
        self.emit(isa.encode_scalar(op, r, imm=v & 0xFFFF))
        if op == "seta" and len(args) == 3:
            s = self.eval(args[2], "a stride")
            if not 0 <= s < (1 << isa.AREG_BITS):
                self.error(f"stride {s} out of range: expected 0..{(1 << isa.AREG_BITS) - 1}")
            self.emit(isa.encode_scalar("sets", r, imm=s))

    # -- variables ---------------------------------------------------------------------
    def declare(self, space, name, dims_text):
        dims = [self.eval(d, "a dimension") for d in re.findall(r"\[([^\]]+)\]", dims_text)] or [1]
        if any(d <= 0 for d in dims):
            self.error(f"dimensions must be positive, got {dims}")
        full = f"{self.func}.{name}" if self.func else name
        if full in self.cls.variables:
            self.error(f"variable {full!r} declared twice in class {self.cls.name!r}")
        if name in self.consts:
            self.error(f"variable {name!r} hides a constant of the same name")
        vw = self.config.vw
        addr = self.cls.next_addr[space]
        var = Variable(full, space, addr, dims)
        limit = self.config.pcore_private_words if space == "private" else self.config.pcore_shared_words
        end = addr + var.size
        if end > limit:
            self.error(f"{space} memory exhausted: {full!r} needs {var.size} elements at {addr}, "
                       f"but a process space has {limit} {space} words")
        self.cls.next_addr[space] = (end + vw - 1) // vw * vw
        self.cls.variables[full] = var

    # -- structure -----------------------------------------------------------------------
    def run_file(self, path, text):
        self.path = str(path)
        self.consts = {}
        self.cls = None
        self.func = None
        stack = []          # ("class"|"func"|"loop"|"if"|"else"|"skip", data)
        lines = text.splitlines()
        self.lineno, self.text = 0, ""
        for i, raw in enumerate(lines, 1):
            self.lineno, self.text = i, raw
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            skipping = any(kind == "skip" for kind, _ in stack)
            if skipping:
                # Inside a false `if` branch: track braces only.
                if _RE_ELSE.match(line):
                    if stack[-1] == ("skip", "if-false"):
                        stack[-1] = ("else", None)
                elif line == "}":
                    stack.pop()
                elif line.endswith("{"):
                    stack.append(("skip", "nested"))
                continue
            m = _RE_ELSE.match(line)
            if m:
                if not stack or stack[-1][0] != "if":
                    self.error("'} else {' without a matching 'if ... {'")
                stack[-1] = ("skip", "else-false")
                continue
            if line == "}":
                if not stack:
                    self.error("unmatched '}'")
                self.close(*stack.pop())
                continue
            m = _RE_CONST.match(line)
            if m:
                if self.func:
                    self.error("constants are declared at file level or in a class, not in a function")
                name = m.group(1)
                self.consts[name] = self.defines[name] if name in self.defines else self.eval(m.group(2))
                continue
            m = _RE_CLASS.match(line)
            if m:
                if stack:
                    self.error("a class is declared at file level: expected '}' before 'class'")
                name = m.group(1)
                if name in self.classes:
                    self.error(f"class {name!r} already defined")
                self.cls = self.classes[name] = PClass(name)
                stack.append(("class", None))
                continue
            m = _RE_FUNC.match(line)
            if m:
                if not stack or stack[-1][0] != "class":
                    self.error("a function is declared directly inside a class: expected 'class NAME {' first")
                name = m.group(1)
                if name in self.cls.functions:
                    self.error(f"function {name!r} already defined in class {self.cls.name!r}")
                self.cls.functions[name] = len(self.words)
                self.func = name
                stack.append(("func", None))
                continue
            m = _RE_VAR.match(line)
            if m:
                if not self.cls:
                    self.error("variables are declared inside a class")
                self.declare(m.group(1), m.group(2), m.group(3))
                continue
            m = _RE_LOOP.match(line)
            if m:
                if not self.func:
                    self.error("'loop' outside a function")
                n = self.eval(m.group(1), "a loop count")
                if n < 0 or n >= (1 << isa.LOOP_COUNT_BITS):
                    self.error(f"loop count {n} out of range: expected 0..{(1 << isa.LOOP_COUNT_BITS) - 1}")
                depth = sum(1 for k, _ in stack if k == "loop")
                if n == 0:
                    stack.append(("skip", "zero-loop"))
                    continue
                if depth >= isa.LOOP_DEPTH:
                    self.error(f"loops nested deeper than {isa.LOOP_DEPTH}")
                at = len(self.words)
                self.emit(0)    # patched when the body is closed
                stack.append(("loop", (at, n, self.lineno, self.text)))
                continue
            m = _RE_IF.match(line)
            if m:
                if self.cls is None:
                    self.error("'if' outside a class")
                stack.append(("if", None) if self.eval(m.group(1), "a condition") else ("skip", "if-false"))
                continue
            if line.endswith("{"):
                self.error(f"unknown block {line!r}: expected class, func, loop or if")
            op, _, rest = line.partition(" ")
            op = op.lower()
            if not self.func:
                self.error(f"instruction {op!r} outside a function")
            args = _split_operands(rest)
            if op in SIGNATURES:
                self.vector(op, args)
            elif op in _SCALARS:
                self.scalar(op, args)
            else:
                self.error(f"unknown instruction {op!r}: expected one of "
                           + ", ".join(sorted(SIGNATURES) + sorted(_SCALARS)) + ", loop, if")
        if stack:
            self.lineno, self.text = len(lines), lines[-1] if lines else ""
            self.error(f"end of file inside a {stack[-1][0]} block: expected '}}'")

    def close(self, kind, data):
        if kind == "class":
            self.cls = None
        elif kind == "func":
            self.emit(isa.encode_scalar("halt"))
            self.func = None
        elif kind == "loop":
            at, n, ln, txt = data
            if len(self.words) == at + 1:
                self.error("empty loop body")
            # The hardware checks one loop end per instruction: give each loop
            # its own last instruction.
            if len(self.words) - 1 in self.loop_ends:
                self.emit(isa.encode_scalar("nop"))
            end = len(self.words) - 1
            self.loop_ends.add(end)
            self.words[at] = isa.encode_scalar("loop", imm=n, loop_end=end)
            a, _, f, l, t = self.listing[at]
            self.listing[at] = (a, self.words[at], f, l, t)


def relocate(words, origin):
    """``words`` assembled at instruction address 0, moved to ``origin``:
    the loop-end addresses (the only absolute addresses in the code) move
    with it.  Function entry points are the caller's to move."""
    out = []
    for w in words:
        d = isa.decode(w)
        if d.is_scalar and d.sop == "loop":
            end = d.loop_end + origin
            if end >= 1 << isa.LOOP_END_BITS:
                raise ValueError(f"loop end {end} beyond the {isa.LOOP_END_BITS}-bit field")
            w = isa.encode_scalar("loop", imm=d.imm, loop_end=end)
        out.append(w)
    return out


def assemble(sources, config=None, defines=None):
    """Assemble ``sources`` (paths, or (name, text) pairs) into a ``Program``."""
    config = config or SoCConfig()
    asm = _Assembler(config, defines)
    for src in sources:
        if isinstance(src, tuple):
            name, text = src
        else:
            name, text = str(src), Path(src).read_text()
        asm.run_file(name, text)
    return Program(config, asm.words, asm.classes, asm.listing)


def load_image(path):
    data = Path(path).read_bytes() if not str(path).endswith(".hex") else None
    if data is None:
        return [int(l, 16) for l in Path(path).read_text().split()]
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
