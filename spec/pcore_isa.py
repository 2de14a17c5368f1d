"""The PCORE instruction set: encodings shared by the gateware, the assembler
and the instruction-set simulator (defined once, here).

Every instruction is one 32-bit word.  Bit 31 selects the class:

Vector instruction (bit 31 = 0): executed once per active thread, one thread
per clock, by every active PCORE in lockstep::

    31   30..26  25..19  18..12  11..5   4..0
    0    op      dst     srcA    srcB    shift

Each of ``dst``/``srcA``/``srcB`` is a 7-bit operand specifier::

    6..4 kind   3..1 reg (r0-r7 or a0-a7)   0 post-increment

Scalar instruction (bit 31 = 1): executed once by the sequencer in one clock::

    31   30..28  27..25  24..22  21..16  15..0
    1    sop     areg    areg2   -       imm16

``LOOP`` uses bits 27..16 for the address of the last instruction of the loop
body and 15..0 for the iteration count.

See docs/pcore_isa.md for the semantics of each operation.
"""

from dataclasses import dataclass

WORD_BITS = 32
NUM_VREGS = 8          # vector registers r0..r7 per thread
NUM_AREGS = 8          # address registers a0..a7 (sequencer, shared by all threads)
AREG_BITS = 16         # address registers count 16-bit elements
LOOP_DEPTH = 4         # hardware loop nesting
LOOP_END_BITS = 12     # instruction memory of up to 4096 words
LOOP_COUNT_BITS = 16
SHIFT_BITS = 5
LANE_LATENCY = 3       # lane datapath pipeline stages (cores/pcore/lane.py)
# Clocks from the memories' read data to the lanes' operands (cores/pcore/
# pcore.py): the read data registered (1), the selected operands registered (1).
OPERAND_LATENCY = 2
# A vector instruction occupies at least MIN_SLOTS clocks: a thread's next
# instruction must read what this one wrote.  Issue bundle (1) + memory read (1)
# + operands + lane, then the write-back: see docs/pcore.md.
MIN_SLOTS = 2 + OPERAND_LATENCY + LANE_LATENCY
# Accumulator chains (docs/pcore.md, "Accumulator chains"): with at most
# CHAIN_MAX_NT active threads, an instruction that writes the accumulator and
# nothing else (CHAIN_OPS) occupies CHAIN_SLOTS clocks instead of MIN_SLOTS.
# The next instruction, when it follows at once and is one of FORWARD_OPS,
# takes the accumulator from the lanes' output register (the bypass) and is
# chained in turn; any other reader of the accumulator waits until the
# write-back (MIN_SLOTS clocks after the chained instruction's own issue):
# it issues CHAIN_WAIT clocks after the chained instruction ended at the
# earliest.  The accumulator is read OPERAND_LATENCY - 1 clocks after the
# other memories (its data need no register before the operands'), so the
# wait is that much shorter than MIN_SLOTS - CHAIN_SLOTS.
CHAIN_SLOTS = 2
CHAIN_MAX_NT = 2
CHAIN_WAIT = MIN_SLOTS - CHAIN_SLOTS - (OPERAND_LATENCY - 1)

# -- vector operations (the lane datapath opcodes) ----------------------------
ISA_VERSION = 1    # reported by the array (CSR pcore_info.isa_version); raise it when an encoding changes
OP_BITS = 5
# Each operation's assembler signature, the one definition of its operands:
# ``d`` the destination, ``s`` a source (srcA, then srcB), ``h`` the shift
# amount; ``A``/``F`` after a ``:`` are the accumulator and the flag when the
# operation reads them.  What it writes follows from the datapath result: a
# ``d`` writes the 16-bit result, ``acc`` and ``flag`` results write those.
VOPS = [
    # name     signature  datapath result (which instructions write the accumulator and flags: docs/pcore.md)
    ("mov",    "ds",      "a"),
    ("add",    "dss",     "sat(a + b)"),
    ("sub",    "dss",     "sat(a - b)"),
    ("mul",    "dssh",    "sat(rnd(a*b >> sh))"),
    ("max",    "dss",     "max(a, b)"),
    ("min",    "dss",     "min(a, b)"),
    ("relu",   "ds",      "max(a, 0)"),
    ("asr",    "dsh",     "rnd(a >> sh)"),
    ("shl",    "dsh",     "sat(a << sh)"),
    ("sel",    "dss:F",   "flag ? a : b"),
    ("cmpgt",  "ss",      "flag = a > b"),
    ("cmpge",  "ss",      "flag = a >= b"),
    ("cmpeq",  "ss",      "flag = a == b"),
    ("mac",    "ss:A",    "acc = wrap(acc + a*b)"),
    ("macz",   "ss",      "acc = a*b"),
    ("accadd", "sh:A",    "acc = wrap(acc + (a << sh))"),
    ("accset", "sh",      "acc = wrap(a << sh)"),
    ("accr",   "dh:A",    "sat(rnd(acc >> sh))"),
]
OP = {name: i for i, (name, _, _) in enumerate(VOPS)}
OP_NAMES = {i: name for name, i in OP.items()}
# The assembler's operand list: d, s and h in order.
SIGNATURES = {name: sig.partition(":")[0] for name, sig, _ in VOPS}
# Number of source operands each operation reads (srcA, srcB).
NUM_SRCS = {name: sig.count("s") for name, sig in SIGNATURES.items()}
USES_SHIFT = {name for name, sig in SIGNATURES.items() if "h" in sig}
# Operations whose 16-bit result is written to ``dst``.
RESULT_OPS = {name for name, sig in SIGNATURES.items() if "d" in sig}
ACC_WRITE_OPS = {name for name, _, res in VOPS if res.startswith("acc =")}
FLAG_WRITE_OPS = {name for name, _, res in VOPS if res.startswith("flag =")}
ACC_READ_OPS = {name for name, sig, _ in VOPS if "A" in sig.partition(":")[2]}
FLAG_READ_OPS = {name for name, sig, _ in VOPS if "F" in sig.partition(":")[2]}
# Accumulator-only operations: they write the accumulator and no register,
# memory or flag, so what follows them never waits for their write-back but
# for the accumulator (CHAIN_SLOTS above).
CHAIN_OPS = ACC_WRITE_OPS - RESULT_OPS - FLAG_WRITE_OPS
# Chained readers of the accumulator, served by the bypass.
FORWARD_OPS = CHAIN_OPS & ACC_READ_OPS
# The operations whose result is a rounding right shift: with lanes that
# share their rounding shifter (SoCConfig.pcore_round_share = S > 1) each of
# their thread slots takes S + 2 clocks (slots(), docs/pcore.md, "Shared
# rounding shifters").
ROUND_OPS = {"mul", "asr", "accr"}

# -- operand kinds --------------------------------------------------------------
KIND_BITS = 3
K_NONE = 0   # no operand; reads as 0
K_REG = 1    # vector register rN of the thread
K_PRIV = 2   # vector at private[aN] (aN a multiple of VW)
K_PRIVB = 3  # element private[aN] broadcast to all lanes
K_SHR = 4    # vector at shared[aN]
K_SHRB = 5   # element shared[aN] broadcast
KIND_NAMES = {K_NONE: "none", K_REG: "r", K_PRIV: "p", K_PRIVB: "pb", K_SHR: "s", K_SHRB: "sb"}
MEM_KINDS = {K_PRIV, K_PRIVB, K_SHR, K_SHRB}
VECTOR_MEM_KINDS = {K_PRIV, K_SHR}
# A PCORE reads each data memory once per clock (one read port per bank):
# an instruction has at most one private and at most one shared source.
ONE_READ_KINDS = (("private", (K_PRIV, K_PRIVB), "p[]/pb[]", "; mov one into a register first"),
                  ("shared", (K_SHR, K_SHRB), "s[]/sb[]", ""))


def source_conflict(srcs):
    """None, or what is wrong with the source operands ``srcs`` (the ones the
    operation reads): two of them read the same data memory."""
    for space, kinds, text, fix in ONE_READ_KINDS:
        if sum(o.kind in kinds for o in srcs) > 1:
            return (f"two {space}-memory sources: a PCORE reads {space} memory once per clock "
                    f"(expected at most one {text} operand{fix})")
    return None

# -- scalar operations ------------------------------------------------------------
SOP = {"nop": 0, "halt": 1, "seta": 2, "sets": 3, "adda": 4, "mova": 5, "loop": 6}
SOP_NAMES = {v: k for k, v in SOP.items()}


@dataclass(frozen=True)
class Operand:
    kind: int = K_NONE
    reg: int = 0
    inc: bool = False

    def encode(self):
        return (self.kind << 4) | (self.reg << 1) | int(self.inc)

    @classmethod
    def decode(cls, v):
        return cls((v >> 4) & 7, (v >> 1) & 7, bool(v & 1))

    def __str__(self):
        if self.kind == K_NONE:
            return "0"
        if self.kind == K_REG:
            return f"r{self.reg}"
        return f"{KIND_NAMES[self.kind]}[a{self.reg}{'+' if self.inc else ''}]"


def encode_vector(op, dst=Operand(), a=Operand(), b=Operand(), shift=0):
    opcode = OP[op] if isinstance(op, str) else op
    assert 0 <= shift < (1 << SHIFT_BITS)
    return ((opcode << 26) | (dst.encode() << 19) | (a.encode() << 12)
            | (b.encode() << 5) | shift)


def encode_scalar(sop, areg=0, areg2=0, imm=0, loop_end=0):
    code = SOP[sop] if isinstance(sop, str) else sop
    word = (1 << 31) | (code << 28)
    if code == SOP["loop"]:
        assert 0 <= loop_end < (1 << LOOP_END_BITS) and 0 < imm < (1 << LOOP_COUNT_BITS)
        return word | (loop_end << 16) | imm
    return word | (areg << 25) | (areg2 << 22) | (imm & 0xFFFF)


@dataclass(frozen=True)
class Decoded:
    word: int
    is_scalar: bool
    op: str = ""
    dst: Operand = Operand()
    a: Operand = Operand()
    b: Operand = Operand()
    shift: int = 0
    sop: str = ""
    areg: int = 0
    areg2: int = 0
    imm: int = 0           # zero-extended 16-bit immediate
    loop_end: int = 0

    @property
    def simm(self):
        return self.imm - 0x10000 if self.imm & 0x8000 else self.imm


def decode(word):
    if word >> 31:
        code = (word >> 28) & 7
        if code not in SOP_NAMES:
            raise ValueError(f"undefined scalar operation {code} in word {word:#010x}")
        sop = SOP_NAMES[code]
        if sop == "loop":
            return Decoded(word, True, sop=sop, imm=word & 0xFFFF, loop_end=(word >> 16) & 0xFFF)
        return Decoded(word, True, sop=sop, areg=(word >> 25) & 7, areg2=(word >> 22) & 7,
                       imm=word & 0xFFFF)
    code = (word >> 26) & 0x1F
    if code not in OP_NAMES:
        raise ValueError(f"undefined vector operation {code} in word {word:#010x}")
    return Decoded(word, False, op=OP_NAMES[code], dst=Operand.decode((word >> 19) & 0x7F),
                   a=Operand.decode((word >> 12) & 0x7F), b=Operand.decode((word >> 5) & 0x7F),
                   shift=word & 0x1F)


def disassemble(word):
    d = decode(word)
    if d.is_scalar:
        if d.sop in ("nop", "halt"):
            return d.sop
        if d.sop == "loop":
            return f"loop {d.imm}, end={d.loop_end}"
        if d.sop == "mova":
            return f"mova a{d.areg}, a{d.areg2}"
        return f"{d.sop} a{d.areg}, {d.simm if d.sop == 'adda' else d.imm}"
    parts = []
    if d.op in RESULT_OPS:
        parts.append(str(d.dst))
    parts += [str(o) for o in (d.a, d.b)[:NUM_SRCS[d.op]]]
    if d.op in USES_SHIFT:
        parts.append(str(d.shift))
    return f"{d.op} " + ", ".join(parts)


# -- kernel function word (EXE_LOCKSTEP / ztamBuildKernelFunc) ------------------
#   15..0 entry address, 23..16 number of PCOREs (0 = all), 31..24 threads (0 = all)

def function_word(entry, np=0, nt=0):
    if not (0 <= entry < 1 << 16 and 0 <= np < 256 and 0 <= nt < 256):
        raise ValueError("function word fields out of range")
    return entry | (np << 16) | (nt << 24)


def split_function_word(word, np_max, nt_max):
    """(entry, active PCOREs, active threads) of a function word; 0 or an
    over-large count means all."""
    entry = word & 0xFFFF
    np = (word >> 16) & 0xFF
    nt = (word >> 24) & 0xFF
    np = np_max if np == 0 or np > np_max else np
    nt = nt_max if nt == 0 or nt > nt_max else nt
    return entry, np, nt


def round_slot_clocks(round_share):
    """Clocks one thread slot of a ROUND_OPS instruction takes with
    ``round_share`` lanes per rounding shifter (SoCConfig.pcore_round_share):
    1 with a shifter per lane; above 1, round_share + 2 (the rounder gathers
    one lane per clock from the lanes' stage A, starting the clock after the
    slot's, and takes it a clock later).  The sequencer holds for the
    clocks after the first (cores/pcore/sequencer.py ``_round_hold``)."""
    return round_share + 2 if round_share > 1 else 1


def slots(nt_active, op=None, round_share=1):
    """Clocks one vector instruction ``op`` occupies with ``nt_active``
    threads (``op`` None: any operation outside CHAIN_OPS and ROUND_OPS);
    ``round_share``: lanes per rounding shifter, each slot of a ROUND_OPS
    instruction ``round_slot_clocks(round_share)``."""
    if op in CHAIN_OPS and nt_active <= CHAIN_MAX_NT:
        return CHAIN_SLOTS
    n = max(nt_active, MIN_SLOTS)
    return n * round_slot_clocks(round_share) if op in ROUND_OPS else n


class IssueTimer:
    """The sequencer's issue timing, clock by clock (docs/pcore.md): the
    clocks each instruction takes, the stalls of an accumulator reader after
    a chained instruction, and which instructions take the bypass.  The ISS
    counts with it, and the tests check the hardware's CYCLES counter
    against the ISS."""

    def __init__(self, nt_active, round_share=1):
        self.nt = nt_active
        self.round_share = round_share
        self.cycles = 0
        self.chain = False          # the previous instruction was chained, and nothing since
        self.short_end = None       # clock at which the last chained instruction ended

    def scalar(self):
        self.cycles += 1
        self.chain = False

    def vector(self, op):
        """Account one vector instruction; returns True when it takes the
        accumulator from the bypass."""
        forward = self.chain and op in FORWARD_OPS
        if not forward and op in ACC_READ_OPS and self.short_end is not None:
            self.cycles += max(0, CHAIN_WAIT - (self.cycles - self.short_end))
        n = slots(self.nt, op, self.round_share)
        self.cycles += n
        self.chain = n == CHAIN_SLOTS and op in CHAIN_OPS
        if self.chain:
            self.short_end = self.cycles
        return forward


def vector_table_markdown():
    """The vector instructions as docs/pcore_isa.md shows them: the assembler's
    operands (from the signature) and the datapath result, in opcode order."""
    names = {"d": ["d"], "s": ["a", "b"], "h": ["sh"]}
    rows = ["| opcode | instruction | operation per lane |", "|---|---|---|"]
    for name, sig, result in VOPS:
        used = {"d": 0, "s": 0, "h": 0}
        ops = []
        for k in SIGNATURES[name]:
            ops.append(names[k][used[k]])
            used[k] += 1
        text = f"d = {result}" if "d" in SIGNATURES[name] else result
        rows.append(f"| {OP[name]} | `{name}{' ' + ', '.join(ops) if ops else ''}` | {text} |")
    return "\n".join(rows)
