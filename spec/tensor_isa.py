"""The tensor-instruction format: the contract between the MCORE and the TensorEngine.

This module is the single definition of the instruction words the MCORE writes to
the TensorEngine queue.  The C header the firmware uses (``ztam_isa.h``) and the
documentation page ``docs/tensor_isa.md`` are generated from the tables below;
the Python encoder/decoder, the preprocessor and the reference executor all use
them.

An instruction is a sequence of 32-bit words.  Word 0 (the *header*) is common
to every opcode: it carries the opcode, the PCORE process space and the total
length in words, so a decoder can always skip an instruction it does not know.

A TRANSFER moves elements from a source *side* to a destination *side*.  A side
is a header of ``SIDE_HEADER_WORDS`` words followed by ``nlevels`` loop levels of
``LEVEL_WORDS`` words each (level 0 is the innermost loop).  The destination side
comes first, then the source side.  Fields sit at fixed positions inside each
block, so a hardware decoder is a small FSM that loads the blocks into registers.

Words that would carry nothing are left out (``side_words``): a side whose
``ovl_mask`` is 0 has no overlap words (its header is ``SIDE_SHORT_HEADER_WORDS``
long), and a level that is neither bound-checked nor in the overlap group
carries only its count and step (``LEVEL_SHORT_WORDS``; its start, stride and
bound read as 0, 1 and 0).  The encoder also clears the check of a level whose
indices provably stay inside its bound (``in_bound``), which cannot change
what the transfer does.  The masks, in word 1 of the side header, tell the
decoder which words follow.
"""

from dataclasses import dataclass, field
from typing import List

from tensorsoc.spec.numbers import SPU_LOOKUP_SIZE, SPU_SEGMENT_SHIFT  # noqa: F401 (re-exported: isa.SPU_*)

MAX_LEVELS = 8
# A side's element count (its level counts' product, broadcast levels
# excluded) must be below this, or the transfer sets COUNT: the engine's
# decoder multiplies the counts in 32 bits (cores/tensor_engine/engine.py).
# No memory holds that many elements.
ELEMENT_COUNT_LIMIT = 1 << 32
# The overlap offset (ovl_start plus the overlapped levels' i * step,
# docs/tensor_semantics.md) is kept modulo 2**bits as a signed value of
# ``bits`` = SoCConfig.te_ovl_bits bits, OVL_BITS by default and at least
# MIN_OVL_BITS: the engine's address generators add it in that width
# (cores/tensor_engine/agen.py), the reference executor wraps it the same
# way (``wrap_offset``), and the model compiler keeps a layer whose
# offsets would wrap in software.
OVL_BITS = 48
MIN_OVL_BITS = 16


def wrap_offset(x, bits=OVL_BITS):
    """``x`` modulo 2**bits as a signed ``bits``-bit value (an int or a
    numpy int64 array)."""
    half = 1 << (bits - 1)
    return ((x + half) & ((1 << bits) - 1)) - half


def offset_bits(side):
    """The fewest bits of a signed value that hold every overlap offset of
    ``side`` (0 without an overlap group): with ``te_ovl_bits`` at least
    that, no offset wraps (``wrap_offset``)."""
    if not side.ovl_mask:
        return 0
    lo = hi = side.ovl_start
    for l, lv in enumerate(side.levels):
        if side.ovl_mask >> l & 1:
            d = (lv.count - 1) * lv.step
            lo, hi = lo + min(d, 0), hi + max(d, 0)
    return max(hi.bit_length(), (-lo - 1).bit_length() if lo < 0 else 0) + 1

# ---------------------------------------------------------------------------
# Enumerations
# ---------------------------------------------------------------------------

OPCODES = {          # name: (value, meaning)
    "NOP": (0, "no operation (padding); length 1"),
    "TRANSFER": (1, "tensor transfer from the source side to the destination side (an SPU load is a transfer whose destination space is SPU)"),
    "EXE": (2, "EXE_LOCKSTEP: run a PCORE kernel on the process space of the instruction"),
    "CALLBACK": (3, "CALLBACK marker: when the engine reaches it, it reports the tag to the MCORE"),
    "LOG": (4, "LOG_ON / LOG_OFF: enable or disable the activity trace"),
}

SPACES = {           # name: (value, address unit, meaning)
    "DDR": (0, "byte", "external memory (the guide's DDR/MEM)"),
    "SCRATCH": (1, "byte", "TensorEngine scratch-pad"),
    "PCORE_PRIVATE": (2, "16-bit word", "PCORE private memory: word address ((pcore*NT)+thread)*PRIVATE_WORDS + offset"),
    "PCORE_SHARED": (3, "16-bit word", "PCORE shared memory: word address pcore*SHARED_WORDS + offset"),
    "SPU": (4, "16-bit word", "stream-processor tables: word address program*SPU_LOOKUP_SIZE + entry (destination only)"),
}

DTYPES = {           # name: (value, bits, signed, C macro used by the guide)
    "UINT8": (0, 8, False, "DP_DATA_TYPE_UINT8"),
    "INT8": (1, 8, True, "DP_DATA_TYPE_INT8"),
    "INT16": (2, 16, True, "DP_DATA_TYPE_INT16"),
}

ERRORS = {           # name: (bit, meaning) -- the error-flag word of the runtime and of the engine
    "COUNT": (0, "source and destination element counts differ, or one reaches 2**32 (transfer not executed)"),
    "RANGE": (1, "an in-bound element addresses memory outside the physical space (treated as out of bound)"),
    "DECODE": (2, "malformed instruction: bad opcode, space, data type, level count (0, or more than the engine's `SoCConfig.te_levels`, at most 8) or length, or process 1 where the PCOREs have one process space (`SoCConfig.pcore_processes`) (instruction skipped)"),
    "SPEC": (3, "bad range at run time: stride 0, empty range or more than MAX_LEVELS levels (transfer not issued)"),
    "CAST": (4, "dimension cast holds more elements than the declared variable (transfer not issued)"),
    "QUEUE": (5, "the engine reported a CALLBACK tag the runtime did not allocate"),
}

SPU_PROGRAMS = 4              # SPU_LOOKUP_SIZE, SPU_SEGMENT_SHIFT: tensorsoc.spec.numbers

# ---------------------------------------------------------------------------
# Field tables: (name, word, lsb, width, signed, description)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    word: int
    lsb: int
    width: int
    signed: bool
    doc: str

    @property
    def mask(self):
        return (1 << self.width) - 1


def _fields(rows):
    out = [Field(*r) for r in rows]
    for f in out:
        assert 0 <= f.lsb and f.lsb + f.width <= 32, f
    return out


HEADER_FIELDS = _fields([
    ("opcode", 0, 0, 4, False, "operation, see the opcode table"),
    ("process", 0, 4, 1, False, "PCORE process space (0 or 1): the issuing MCORE task's pid"),
    ("length", 0, 8, 8, False, "total instruction length in 32-bit words, header included"),
])

TRANSFER_FIELDS = _fields([
    ("scatter", 0, 16, 1, False, "1: scatter mode (SCATTER(n)); the element mapping is unchanged"),
    ("scatter_n", 0, 17, 3, False, "the n of SCATTER(n)"),
    ("proc_en", 0, 20, 1, False, "1: stream every element through stream program proc (PROC(n))"),
    ("proc", 0, 21, 2, False, "stream program number 0..3"),
    ("pad", 1, 0, 16, False, "value read for out-of-bound source elements (PAD(v)), then converted by the source data type"),
])
TRANSFER_HEADER_WORDS = 2

SIDE_FIELDS = _fields([
    ("space", 0, 0, 3, False, "memory space, see the space table"),
    ("dtype", 0, 3, 2, False, "element data type, see the data-type table"),
    ("nlevels", 0, 8, 4, False, "number of loop levels that follow (1..8)"),
    ("check_mask", 1, 0, 8, False, "bit l set: level l is bound-checked (0 <= index < bound)"),
    ("ovl_mask", 1, 8, 8, False, "bit l set: level l belongs to the overlapped-dimension group; 0: no overlap check"),
    ("bcast_mask", 1, 16, 8, False, "bit l set: level l is a broadcast level ([*], destination only): it does not consume elements"),
    ("base", 2, 0, 32, False, "address of the first element (all level indices 0), in the space's address unit"),
    ("ovl_start", 3, 0, 32, True, "overlap offset when all indices are 0, in address units"),
    ("ovl_limit", 4, 0, 32, False, "overlap limit in address units: the overlap offset must satisfy 0 <= offset < ovl_limit"),
])
SIDE_HEADER_WORDS = 5
SIDE_SHORT_HEADER_WORDS = 3      # without ovl_start and ovl_limit: a side whose ovl_mask is 0

LEVEL_FIELDS = _fields([
    ("count", 0, 0, 32, False, "iterations of this level (>= 1)"),
    ("step", 1, 0, 32, True, "address increment per iteration, in address units (0 repeats, negative walks back)"),
    ("start", 2, 0, 32, True, "dimension index at iteration 0 (for the bound check)"),
    ("stride", 3, 0, 32, True, "dimension index increment per iteration"),
    ("bound", 4, 0, 32, False, "dimension size: index must be < bound when the level is checked"),
])
LEVEL_WORDS = 5
LEVEL_SHORT_WORDS = 2            # count and step only: a level neither checked nor overlapped
LEVEL_NAMES = tuple(f.name for f in sorted(LEVEL_FIELDS, key=lambda f: f.word))   # in word order
assert LEVEL_NAMES[:LEVEL_SHORT_WORDS] == ("count", "step")

EXE_FIELDS = _fields([
    ("func", 1, 0, 32, False, "kernel function word, see FUNC_FIELDS"),
])
EXE_WORDS = 2

FUNC_FIELDS = _fields([   # the 32-bit kernel function word built by ztamBuildKernelFunc
    ("addr", 0, 0, 16, False, "entry point: instruction index in the PCORE program image"),
    ("np", 0, 16, 8, False, "number of PCOREs that run the kernel"),
    ("nt", 0, 24, 8, False, "number of threads per PCORE that run the kernel"),
])

CALLBACK_FIELDS = _fields([
    ("tag", 1, 0, 32, False, "callback slot the MCORE runtime allocated"),
    ("parm", 2, 0, 32, False, "the integer parameter of CALLBACK(func, parm)"),
])
CALLBACK_WORDS = 3

LOG_FIELDS = _fields([
    ("on", 0, 16, 1, False, "1: LOG_ON, 0: LOG_OFF"),
])
LOG_WORDS = 1


def opcode(name):
    return OPCODES[name][0]


def space(name):
    return SPACES[name][0]


def dtype(name):
    return DTYPES[name][0]


SPACE_NAMES = {v[0]: k for k, v in SPACES.items()}
DTYPE_NAMES = {v[0]: k for k, v in DTYPES.items()}
OPCODE_NAMES = {v[0]: k for k, v in OPCODES.items()}


def dtype_bits(code):
    return DTYPES[DTYPE_NAMES[code]][1]


def dtype_signed(code):
    return DTYPES[DTYPE_NAMES[code]][2]


def element_bytes(space_code, dtype_code):
    """Address units per element: 1 or 2 bytes in DDR/SCRATCH, one word elsewhere."""
    if space_code in (space("DDR"), space("SCRATCH")):
        return 2 if dtype_code == dtype("INT16") else 1
    return 1


# ---------------------------------------------------------------------------
# Instruction objects
# ---------------------------------------------------------------------------


@dataclass
class Level:
    count: int = 1
    step: int = 0
    start: int = 0
    stride: int = 1
    bound: int = 0


@dataclass
class Side:
    space: int = 0
    dtype: int = 2
    base: int = 0
    check_mask: int = 0
    ovl_mask: int = 0
    bcast_mask: int = 0
    ovl_start: int = 0
    ovl_limit: int = 0
    levels: List[Level] = field(default_factory=list)

    @property
    def nlevels(self):
        return len(self.levels)

    def element_count(self):
        """Elements consumed (source) or produced (destination): broadcast levels excluded."""
        n = 1
        for i, lv in enumerate(self.levels):
            if not (self.bcast_mask >> i) & 1:
                n *= lv.count
        return n


@dataclass
class Transfer:
    dst: Side
    src: Side
    process: int = 0
    scatter: int = 0
    scatter_n: int = 0
    proc_en: int = 0
    proc: int = 0
    pad: int = 0

    def count_error(self):
        """The transfer sets COUNT: its sides' element counts differ, or
        reach ``ELEMENT_COUNT_LIMIT``."""
        n = self.dst.element_count()
        return n != self.src.element_count() or n >= ELEMENT_COUNT_LIMIT


@dataclass
class Exe:
    func: int
    process: int = 0

    @property
    def addr(self):
        return _get(FUNC_FIELDS, "addr", [self.func])

    @property
    def np(self):
        return _get(FUNC_FIELDS, "np", [self.func])

    @property
    def nt(self):
        return _get(FUNC_FIELDS, "nt", [self.func])


@dataclass
class Callback:
    tag: int
    parm: int
    process: int = 0


@dataclass
class Log:
    on: int
    process: int = 0


class DecodeError(ValueError):
    pass


def build_kernel_func(addr, np_, nt):
    """The function word of EXE_LOCKSTEP, as ztamBuildKernelFunc builds it."""
    w = [0]
    _put(FUNC_FIELDS, "addr", w, addr)
    _put(FUNC_FIELDS, "np", w, np_)
    _put(FUNC_FIELDS, "nt", w, nt)
    return w[0]


# ---------------------------------------------------------------------------
# Encode / decode
# ---------------------------------------------------------------------------


def _field(table, name):
    for f in table:
        if f.name == name:
            return f
    raise KeyError(name)


def _put(table, name, words, value, offset=0):
    f = _field(table, name)
    v = int(value)
    lo, hi = (-(1 << (f.width - 1)), (1 << (f.width - 1)) - 1) if f.signed else (0, f.mask)
    if not lo <= v <= hi:
        raise ValueError(f"field {name}={v} does not fit {f.width} {'signed' if f.signed else 'unsigned'} bits")
    i = offset + f.word
    words[i] = (words[i] & ~(f.mask << f.lsb) | ((v & f.mask) << f.lsb)) & 0xFFFFFFFF


def _get(table, name, words, offset=0):
    f = _field(table, name)
    v = (words[offset + f.word] >> f.lsb) & f.mask
    if f.signed and v >> (f.width - 1):
        v -= 1 << f.width
    return v


def _header(words, op, process, length):
    _put(HEADER_FIELDS, "opcode", words, opcode(op))
    _put(HEADER_FIELDS, "process", words, process)
    _put(HEADER_FIELDS, "length", words, length)


def in_bound(lv):
    """Every index of the level (start + stride * i, i < count) is in [0, bound)."""
    last = lv.start + lv.stride * (lv.count - 1)
    return min(lv.start, last) >= 0 and max(lv.start, last) < lv.bound


def check_mask_needed(s):
    """``s.check_mask`` without the levels whose check cannot fail (``in_bound``)."""
    return sum(1 << i for i, lv in enumerate(s.levels) if (s.check_mask >> i) & 1 and not in_bound(lv))


def normalize(instr):
    """``instr`` as ``decode(encode(instr))`` gives it back: a check that cannot
    fail cleared, no overlap offset and limit without an overlap group, and
    the start, stride and bound of a level neither checked nor overlapped at
    their defaults.  It does the same as ``instr`` on every engine."""
    if not isinstance(instr, Transfer):
        return instr

    def side(sd):
        chk = check_mask_needed(sd)
        lv = [Level(count=l.count, step=l.step) if not _full_level(chk, sd.ovl_mask, i)
              else Level(count=l.count, step=l.step, start=l.start, stride=l.stride, bound=l.bound)
              for i, l in enumerate(sd.levels)]
        return Side(space=sd.space, dtype=sd.dtype, base=sd.base, check_mask=chk, ovl_mask=sd.ovl_mask,
                    bcast_mask=sd.bcast_mask, ovl_start=sd.ovl_start if sd.ovl_mask else 0,
                    ovl_limit=sd.ovl_limit if sd.ovl_mask else 0, levels=lv)
    return Transfer(dst=side(instr.dst), src=side(instr.src), process=instr.process, scatter=instr.scatter,
                    scatter_n=instr.scatter_n, proc_en=instr.proc_en, proc=instr.proc, pad=instr.pad)


def _full_level(check_mask, ovl_mask, i):
    return ((check_mask | ovl_mask) >> i) & 1


def side_words(s):
    """Words of side ``s`` as encoded (header and levels)."""
    chk = check_mask_needed(s)
    return ((SIDE_HEADER_WORDS if s.ovl_mask else SIDE_SHORT_HEADER_WORDS)
            + sum(LEVEL_WORDS if _full_level(chk, s.ovl_mask, i) else LEVEL_SHORT_WORDS
                  for i in range(s.nlevels)))


def _encode_side(s, words, off):
    if not 1 <= s.nlevels <= MAX_LEVELS:
        raise ValueError(f"a side has {s.nlevels} levels; 1..{MAX_LEVELS} are encodable")
    chk = check_mask_needed(s)
    for name in ("space", "dtype", "nlevels", "ovl_mask", "bcast_mask"):
        _put(SIDE_FIELDS, name, words, getattr(s, name), off)
    _put(SIDE_FIELDS, "check_mask", words, chk, off)
    _put(SIDE_FIELDS, "base", words, s.base & 0xFFFFFFFF, off)
    if s.ovl_mask:
        _put(SIDE_FIELDS, "ovl_start", words, s.ovl_start, off)
        _put(SIDE_FIELDS, "ovl_limit", words, s.ovl_limit, off)
        lo = off + SIDE_HEADER_WORDS
    else:
        lo = off + SIDE_SHORT_HEADER_WORDS
    for i, lv in enumerate(s.levels):
        full = _full_level(chk, s.ovl_mask, i)
        for name in LEVEL_NAMES[:LEVEL_WORDS if full else LEVEL_SHORT_WORDS]:
            _put(LEVEL_FIELDS, name, words, getattr(lv, name), lo)
        lo += LEVEL_WORDS if full else LEVEL_SHORT_WORDS
    return lo


def encode(instr):
    """Encode one instruction object into a list of 32-bit words."""
    if isinstance(instr, Transfer):
        n = TRANSFER_HEADER_WORDS + side_words(instr.dst) + side_words(instr.src)
        w = [0] * n
        _header(w, "TRANSFER", instr.process, n)
        for name in ("scatter", "scatter_n", "proc_en", "proc"):
            _put(TRANSFER_FIELDS, name, w, getattr(instr, name))
        _put(TRANSFER_FIELDS, "pad", w, instr.pad & 0xFFFF)
        off = _encode_side(instr.dst, w, TRANSFER_HEADER_WORDS)
        _encode_side(instr.src, w, off)
        return w
    if isinstance(instr, Exe):
        w = [0] * EXE_WORDS
        _header(w, "EXE", instr.process, EXE_WORDS)
        _put(EXE_FIELDS, "func", w, instr.func)
        return w
    if isinstance(instr, Callback):
        w = [0] * CALLBACK_WORDS
        _header(w, "CALLBACK", instr.process, CALLBACK_WORDS)
        _put(CALLBACK_FIELDS, "tag", w, instr.tag)
        _put(CALLBACK_FIELDS, "parm", w, instr.parm & 0xFFFFFFFF)
        return w
    if isinstance(instr, Log):
        w = [0] * LOG_WORDS
        _header(w, "LOG", instr.process, LOG_WORDS)
        _put(LOG_FIELDS, "on", w, instr.on)
        return w
    raise TypeError(f"not an instruction: {instr!r}")


def _decode_side(words, off, end):
    if off + SIDE_SHORT_HEADER_WORDS > end:
        raise DecodeError("transfer truncated in a side header")
    s = Side()
    for name in ("space", "dtype", "check_mask", "ovl_mask", "bcast_mask", "base"):
        setattr(s, name, _get(SIDE_FIELDS, name, words, off))
    if s.ovl_mask:
        if off + SIDE_HEADER_WORDS > end:
            raise DecodeError("transfer truncated in a side header")
        s.ovl_start = _get(SIDE_FIELDS, "ovl_start", words, off)
        s.ovl_limit = _get(SIDE_FIELDS, "ovl_limit", words, off)
    n = _get(SIDE_FIELDS, "nlevels", words, off)
    if s.space not in SPACE_NAMES:
        raise DecodeError(f"unknown memory space {s.space}")
    if s.dtype not in DTYPE_NAMES:
        raise DecodeError(f"unknown data type {s.dtype}")
    if not 1 <= n <= MAX_LEVELS:
        raise DecodeError(f"level count {n} outside 1..{MAX_LEVELS}")
    off += SIDE_HEADER_WORDS if s.ovl_mask else SIDE_SHORT_HEADER_WORDS
    for i in range(n):
        names = LEVEL_NAMES if _full_level(s.check_mask, s.ovl_mask, i) else LEVEL_NAMES[:LEVEL_SHORT_WORDS]
        if off + len(names) > end:
            raise DecodeError("transfer truncated in the loop levels")
        s.levels.append(Level(**{name: _get(LEVEL_FIELDS, name, words, off) for name in names}))
        off += len(names)
    return s, off


def decode_one(words, pos=0):
    """Decode the instruction at ``words[pos]``; returns (instruction, next position)."""
    if pos >= len(words):
        raise DecodeError("no instruction word left")
    op = _get(HEADER_FIELDS, "opcode", words, pos)
    process = _get(HEADER_FIELDS, "process", words, pos)
    length = _get(HEADER_FIELDS, "length", words, pos)
    end = pos + length
    if length < 1 or end > len(words):
        raise DecodeError(f"instruction at word {pos}: length {length} runs past the end of the stream")
    name = OPCODE_NAMES.get(op)
    if name == "NOP":
        return None, end
    if name == "TRANSFER":
        t = Transfer(dst=None, src=None, process=process)
        for f in ("scatter", "scatter_n", "proc_en", "proc", "pad"):
            setattr(t, f, _get(TRANSFER_FIELDS, f, words, pos))
        t.dst, off = _decode_side(words, pos + TRANSFER_HEADER_WORDS, end)
        t.src, off = _decode_side(words, off, end)
        if off != end:
            raise DecodeError(f"transfer at word {pos}: length {length} but sides use {off - pos} words")
        return t, end
    if name == "EXE" and length == EXE_WORDS:
        return Exe(func=_get(EXE_FIELDS, "func", words, pos), process=process), end
    if name == "CALLBACK" and length == CALLBACK_WORDS:
        return Callback(tag=_get(CALLBACK_FIELDS, "tag", words, pos),
                        parm=_get(CALLBACK_FIELDS, "parm", words, pos), process=process), end
    if name == "LOG" and length == LOG_WORDS:
        return Log(on=_get(LOG_FIELDS, "on", words, pos), process=process), end
    raise DecodeError(f"instruction at word {pos}: opcode {op} with length {length} is not valid")


def decode(words):
    """Decode a whole instruction stream into a list of instruction objects (NOPs dropped)."""
    out, pos = [], 0
    while pos < len(words):
        instr, pos = decode_one(words, pos)
        if instr is not None:
            out.append(instr)
    return out


# ---------------------------------------------------------------------------
# Generated artefacts: C header and documentation
# ---------------------------------------------------------------------------

_GROUPS = [  # (C prefix, table, words, what it is)
    ("HDR", HEADER_FIELDS, "instruction word offset", "Header (word 0 of every instruction)"),
    ("XFER", TRANSFER_FIELDS, "instruction word offset", "TRANSFER header (words 0-1)"),
    ("SIDE", SIDE_FIELDS, "side block word offset", "Side header (5 words, 3 without an overlap group: words 3-4 only when ovl_mask is not 0; dst side at word 2, src side right after the dst levels)"),
    ("LEVEL", LEVEL_FIELDS, "level block word offset", "Loop level (level 0 = innermost, right after its side header): 5 words when the level is checked or overlapped, else count and step only (2 words)"),
    ("EXE", EXE_FIELDS, "instruction word offset", "EXE instruction (2 words)"),
    ("FUNC", FUNC_FIELDS, "within the function word", "Kernel function word (EXE func field, ztamBuildKernelFunc)"),
    ("CB", CALLBACK_FIELDS, "instruction word offset", "CALLBACK instruction (3 words)"),
    ("LOG", LOG_FIELDS, "instruction word offset", "LOG instruction (1 word)"),
]


def c_header():
    """The firmware's view of the format: ``ztam_isa.h``."""
    L = ["/* Generated from spec/tensor_isa.py by `tsoc mcore header`: do not edit. */",
         "#ifndef ZTAM_ISA_H", "#define ZTAM_ISA_H", "", "#include <stdint.h>", ""]
    L.append(f"#define ZTAM_MAX_LEVELS {MAX_LEVELS}")
    L.append(f"#define ZTAM_XFER_HEADER_WORDS {TRANSFER_HEADER_WORDS}")
    L.append(f"#define ZTAM_SIDE_HEADER_WORDS {SIDE_HEADER_WORDS}")
    L.append(f"#define ZTAM_SIDE_SHORT_HEADER_WORDS {SIDE_SHORT_HEADER_WORDS}")
    L.append(f"#define ZTAM_LEVEL_WORDS {LEVEL_WORDS}")
    L.append(f"#define ZTAM_LEVEL_SHORT_WORDS {LEVEL_SHORT_WORDS}")
    L.append(f"#define ZTAM_XFER_MAX_WORDS {TRANSFER_HEADER_WORDS + 2 * (SIDE_HEADER_WORDS + MAX_LEVELS * LEVEL_WORDS)}")
    L.append(f"#define ZTAM_ELEMENT_COUNT_LIMIT {ELEMENT_COUNT_LIMIT}ull  /* a side's element count reaching it is COUNT */")
    L.append(f"#define ZTAM_EXE_WORDS {EXE_WORDS}")
    L.append(f"#define ZTAM_CALLBACK_WORDS {CALLBACK_WORDS}")
    L.append(f"#define ZTAM_LOG_WORDS {LOG_WORDS}")
    L.append(f"#define ZTAM_SPU_PROGRAMS {SPU_PROGRAMS}")
    L.append(f"#define ZTAM_SPU_LOOKUP_SIZE {SPU_LOOKUP_SIZE}")
    L.append("#ifndef SPU_LOOKUP_SIZE")
    L.append("#define SPU_LOOKUP_SIZE ZTAM_SPU_LOOKUP_SIZE")
    L.append("#endif")
    L.append("")
    for name, (v, meaning) in OPCODES.items():
        L.append(f"#define ZTAM_OP_{name} {v}  /* {meaning} */")
    L.append("")
    for name, (v, unit, meaning) in SPACES.items():
        L.append(f"#define ZTAM_SPACE_{name} {v}  /* {unit}-addressed: {meaning} */")
    L.append("")
    for name, (v, bits, signed, macro) in DTYPES.items():
        L.append(f"#define ZTAM_DTYPE_{name} {v}")
        L.append(f"#ifndef {macro}")
        L.append(f"#define {macro} ZTAM_DTYPE_{name}")
        L.append("#endif")
    L.append("")
    for name, (bit, meaning) in ERRORS.items():
        L.append(f"#define ZTAM_ERR_{name} (1u << {bit})  /* {meaning} */")
    L.append("")
    for prefix, table, _, title in _GROUPS:
        L.append(f"/* {title} */")
        for f in table:
            n = f"ZTAM_{prefix}_{f.name.upper()}"
            L.append(f"#define {n}_WORD {f.word}")
            L.append(f"#define {n}_LSB {f.lsb}")
            L.append(f"#define {n}_MASK 0x{f.mask:X}u")
        L.append("")
    L += [
        "typedef struct { uint32_t count; int32_t step; int32_t start; int32_t stride; uint32_t bound; } ztam_level_t;",
        "typedef struct {",
        "    uint32_t space, dtype, nlevels, check_mask, ovl_mask, bcast_mask;",
        "    uint32_t base; int32_t ovl_start; uint32_t ovl_limit;",
        "    ztam_level_t levels[ZTAM_MAX_LEVELS];",
        "} ztam_side_t;",
        "typedef struct {",
        "    uint32_t scatter, scatter_n, proc_en, proc, pad;",
        "    ztam_side_t dst, src;",
        "    uint32_t err;  /* runtime only, not encoded: ZTAM_ERR_* found while building */",
        "} ztam_xfer_t;",
        "",
        "#define ZTAM_PUT(w, prefix_field, v) \\",
        "    ((w)[prefix_field##_WORD] |= (((uint32_t)(v)) & prefix_field##_MASK) << prefix_field##_LSB)",
        "",
        "static inline uint32_t ztam_kernel_func(uint32_t addr, uint32_t np, uint32_t nt) {",
        "    uint32_t w[1] = {0};",
        "    ZTAM_PUT(w, ZTAM_FUNC_ADDR, addr); ZTAM_PUT(w, ZTAM_FUNC_NP, np); ZTAM_PUT(w, ZTAM_FUNC_NT, nt);",
        "    return w[0];",
        "}",
        "",
        "/* Every index of the level (start + stride * i, i < count) is in [0, bound). */",
        "static inline int ztam_level_in_bound(const ztam_level_t *l) {",
        "    int64_t first = l->start, last = (int64_t)l->start + (int64_t)l->stride * ((int64_t)l->count - 1);",
        "    return (first < last ? first : last) >= 0 && (first > last ? first : last) < (int64_t)l->bound;",
        "}",
        "",
        "/* Encode a side at w (cleared by the caller); returns the words used.  As the",
        "   Python encoder: a check that cannot fail is cleared; no overlap words without",
        "   an overlap group; count and step only for a level neither checked nor overlapped. */",
        "static inline int ztam_encode_side(const ztam_side_t *s, uint32_t *w) {",
        "    uint32_t i, chk = 0;",
        "    int n;",
        "    for (i = 0; i < s->nlevels; i++)",
        "        if (((s->check_mask >> i) & 1) && !ztam_level_in_bound(&s->levels[i]))",
        "            chk |= 1u << i;",
    ]
    for f in SIDE_FIELDS:
        if f.name in ("ovl_start", "ovl_limit"):
            continue
        L.append(f"    ZTAM_PUT(w, ZTAM_SIDE_{f.name.upper()}, "
                 f"{'chk' if f.name == 'check_mask' else 's->' + f.name});")
    L.append("    n = ZTAM_SIDE_SHORT_HEADER_WORDS;")
    L.append("    if (s->ovl_mask) {")
    L.append("        ZTAM_PUT(w, ZTAM_SIDE_OVL_START, s->ovl_start);")
    L.append("        ZTAM_PUT(w, ZTAM_SIDE_OVL_LIMIT, s->ovl_limit);")
    L.append("        n = ZTAM_SIDE_HEADER_WORDS;")
    L.append("    }")
    L.append("    for (i = 0; i < s->nlevels; i++) {")
    L.append("        uint32_t *lw = w + n;")
    for f in LEVEL_FIELDS[:2]:
        L.append(f"        ZTAM_PUT(lw, ZTAM_LEVEL_{f.name.upper()}, s->levels[i].{f.name});")
    L.append("        if (((chk | s->ovl_mask) >> i) & 1) {")
    for f in LEVEL_FIELDS[2:]:
        L.append(f"            ZTAM_PUT(lw, ZTAM_LEVEL_{f.name.upper()}, s->levels[i].{f.name});")
    L.append("            n += ZTAM_LEVEL_WORDS;")
    L.append("        } else {")
    L.append("            n += ZTAM_LEVEL_SHORT_WORDS;")
    L.append("        }")
    L.append("    }")
    L.append("    return n;")
    L.append("}")
    L.append("")
    L.append("/* Encode a transfer into w[ZTAM_XFER_MAX_WORDS]; returns its length in words. */")
    L.append("static inline int ztam_encode_xfer(const ztam_xfer_t *x, uint32_t process, uint32_t *w) {")
    L.append("    int i, n = ZTAM_XFER_HEADER_WORDS;")
    L.append("    for (i = 0; i < ZTAM_XFER_MAX_WORDS; i++) w[i] = 0;")
    L.append("    n += ztam_encode_side(&x->dst, w + n);")
    L.append("    n += ztam_encode_side(&x->src, w + n);")
    L.append("    ZTAM_PUT(w, ZTAM_HDR_OPCODE, ZTAM_OP_TRANSFER); ZTAM_PUT(w, ZTAM_HDR_PROCESS, process); ZTAM_PUT(w, ZTAM_HDR_LENGTH, n);")
    for f in TRANSFER_FIELDS:
        L.append(f"    ZTAM_PUT(w, ZTAM_XFER_{f.name.upper()}, x->{f.name});")
    L.append("    return n;")
    L.append("}")
    L += ["", "#endif /* ZTAM_ISA_H */", ""]
    return "\n".join(L)


def _field_table(table, where):
    rows = [f"| field | word ({where}) | bits | signed | meaning |", "|---|---|---|---|---|"]
    for f in table:
        bits = f"{f.lsb + f.width - 1}:{f.lsb}" if f.width > 1 else f"{f.lsb}"
        rows.append(f"| `{f.name}` | {f.word} | {bits} | {'yes' if f.signed else 'no'} | {f.doc} |")
    return rows


def docs_markdown():
    """The page ``docs/tensor_isa.md``."""
    L = ["# Tensor instruction format", "",
         "<!-- Generated from spec/tensor_isa.py by `python -m tensorsoc.spec.tensor_isa`: do not edit. -->", "",
         "The MCORE sends these instructions to the TensorEngine queue, one 32-bit word at a time",
         "(the runtime's platform hook `ztam_platform_issue()`). The element-level meaning of",
         "every field is specified in [tensor_semantics.md](tensor_semantics.md) and executed by",
         "`verification/golden/tensor_exec.py`.", "",
         "## Layout", "",
         "Every instruction starts with a header word that gives its opcode and its total length",
         "in words, so a decoder can skip any instruction it does not implement.", "",
         "| opcode | length (words) |", "|---|---|",
         f"| TRANSFER | 2 + two sides, each a header of {SIDE_HEADER_WORDS} words ({SIDE_SHORT_HEADER_WORDS} without an overlap "
         f"group) and per level {LEVEL_WORDS} words ({LEVEL_SHORT_WORDS} when the level is neither checked nor overlapped): "
         f"{TRANSFER_HEADER_WORDS + 2 * (SIDE_SHORT_HEADER_WORDS + LEVEL_SHORT_WORDS)} to "
         f"{TRANSFER_HEADER_WORDS + 2 * (SIDE_HEADER_WORDS + LEVEL_WORDS)} for 1-level sides, at most "
         f"{TRANSFER_HEADER_WORDS + 2 * (SIDE_HEADER_WORDS + MAX_LEVELS * LEVEL_WORDS)} |",
         f"| EXE | {EXE_WORDS} |", f"| CALLBACK | {CALLBACK_WORDS} |", f"| LOG | {LOG_WORDS} |", "| NOP | 1 |", "",
         "A TRANSFER is laid out as:", "", "```",
         "word 0        header + transfer flags",
         "word 1        pad",
         "word 2..      destination side header (5 words; 3 when its ovl_mask is 0)",
         "              destination level 0 (innermost) .. level nlevels-1: 5 words each,",
         "                2 (count, step) for a level neither checked nor overlapped",
         "              source side header, then its levels, the same way", "```", "",
         "Decoding in hardware: read word 0, take `length`; read the dst side header, then",
         "`nlevels` level blocks into a register file indexed by level; then the same for the",
         "src side. All fields sit at fixed bit positions inside their block; word 1 of a side",
         "header (the masks) says which words follow. Words that carry nothing are left out: a",
         "side without an overlap group has no overlap offset and limit, a level neither checked",
         "nor overlapped reads start 0, stride 1 and bound 0, and the encoder clears the check of",
         "a level whose indices provably stay inside its bound (it cannot fail).", "",
         "## Opcodes", "", "| name | value | meaning |", "|---|---|---|"]
    L += [f"| {n} | {v} | {m} |" for n, (v, m) in OPCODES.items()]
    L += ["", "## Memory spaces", "", "| name | value | address unit | meaning |", "|---|---|---|---|"]
    L += [f"| {n} | {v} | {u} | {m} |" for n, (v, u, m) in SPACES.items()]
    L += ["", "## Data types", "", "| name | value | bits | signed | C macro |", "|---|---|---|---|---|"]
    L += [f"| {n} | {v} | {b} | {'yes' if s else 'no'} | `{m}` |" for n, (v, b, s, m) in DTYPES.items()]
    L += ["", "In DDR and SCRATCH an element takes 1 byte (UINT8, INT8) or 2 bytes little-endian",
          "(INT16); address units there are bytes. PCORE and SPU addresses count 16-bit words.", ""]
    L += ["## Error flags", "", "| flag | bit | meaning |", "|---|---|---|"]
    L += [f"| {n} | {b} | {m} |" for n, (b, m) in ERRORS.items()]
    L += [""]
    for prefix, table, where, title in _GROUPS:
        L += [f"## {title}", "", f"C macros: `ZTAM_{prefix}_<FIELD>_WORD`, `_LSB`, `_MASK`.", ""]
        L += _field_table(table, where)
        L.append("")
    L += ["## Stream processor", "",
          f"{SPU_PROGRAMS} programs of {SPU_LOOKUP_SIZE} 16-bit words each; program n occupies SPU word",
          f"addresses n*{SPU_LOOKUP_SIZE} .. n*{SPU_LOOKUP_SIZE}+{SPU_LOOKUP_SIZE - 1}. The lookup/interpolation rule is in",
          "[tensor_semantics.md](tensor_semantics.md#stream-processor).", ""]
    return "\n".join(L)


if __name__ == "__main__":   # regenerate the docs page
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    (root / "docs" / "tensor_isa.md").write_text(docs_markdown())
    (root / "sw" / "runtime" / "ztam_isa.h").write_text(c_header())
