"""Random PCORE programs for hardware-vs-ISS checking.

Every vector operation with random operand kinds (registers, private and
shared vectors and broadcasts, zero), random destinations, post-increments,
hardware loops (one, and nested ones), then all registers, the accumulator and the flags stored to
private memory so that any difference becomes visible.  Programs the ISS
traps (an address leaving its space) are drawn again.
"""

import copy

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.verification.pcore.iss import PcoreRuntimeError

_SRC_KINDS = [isa.K_NONE, isa.K_REG, isa.K_REG, isa.K_PRIV, isa.K_PRIVB, isa.K_SHR, isa.K_SHRB]


# Accumulator chains (docs/pcore.md): the accumulator-only operations, their
# readers, and scalars between them, so that chained instructions, the bypass
# and the stalls of other readers all occur (with at most CHAIN_MAX_NT threads).
CHAIN_MIX = sorted(isa.CHAIN_OPS) * 3 + ["accr", "mov", "add"]


def _program(rng, config, length, chains=False):
    vw = config.vw
    pwords, swords = config.pcore_private_words, config.pcore_shared_words
    words = []
    # a0..a3 private pointers, a4, a5 shared pointers, a6 spare, a7 result area
    out_base = pwords - (isa.NUM_VREGS + 3) * vw
    for r in range(4):
        words.append(isa.encode_scalar("seta", r, imm=int(rng.integers(0, out_base // 2 // vw)) * vw
                                       + (int(rng.integers(0, vw)) if rng.random() < 0.2 else 0)))
        words.append(isa.encode_scalar("sets", r, imm=int(rng.choice([0, vw, vw, 2 * vw]))))
    for r in (4, 5):
        words.append(isa.encode_scalar("seta", r, imm=int(rng.integers(0, swords // 2 // vw)) * vw))
        words.append(isa.encode_scalar("sets", r, imm=int(rng.choice([0, vw, 3 * vw]))))
    words.append(isa.encode_scalar("seta", 7, imm=out_base))
    words.append(isa.encode_scalar("sets", 7, imm=vw))

    def src():
        kind = int(rng.choice(_SRC_KINDS))
        if kind == isa.K_REG:
            return isa.Operand(kind, int(rng.integers(0, 8)))
        if kind in (isa.K_PRIV, isa.K_PRIVB):
            return isa.Operand(kind, int(rng.integers(0, 4)), bool(rng.random() < 0.4))
        if kind in (isa.K_SHR, isa.K_SHRB):
            return isa.Operand(kind, int(rng.integers(4, 6)), bool(rng.random() < 0.4))
        return isa.Operand()

    def body(n):
        out = []
        for _ in range(n):
            if chains and rng.random() < 0.15:
                out.append(isa.encode_scalar("adda", 6, imm=int(rng.integers(0, 4))))
            op = str(rng.choice(CHAIN_MIX if chains else list(isa.OP)))
            a, b = src(), src()
            if isa.source_conflict([a, b]):      # one private and one shared read per clock
                b = isa.Operand(isa.K_REG, int(rng.integers(0, 8)))
            if rng.random() < 0.7:
                dst = isa.Operand(isa.K_REG, int(rng.integers(0, 8)))
            else:
                dst = isa.Operand(isa.K_PRIV, int(rng.integers(0, 4)), bool(rng.random() < 0.4))
            out.append(isa.encode_vector(op, dst, a, b, int(rng.integers(0, 32))))
            incs = sorted({o.reg for o in (dst, a, b) if o.inc})
            if incs and rng.random() < 0.3:
                # a scalar that reads a pointer this instruction post-increments
                # (and leaves it as it is): the sequencer applies a
                # post-increment a clock late (cores/pcore/sequencer.py)
                r = int(rng.choice(incs))
                out.append(isa.encode_scalar("adda", r, imm=0) if rng.random() < 0.5
                           else isa.encode_scalar("mova", r, areg2=r))
        return out

    pre = body(length // 2)
    words += pre
    loop_body = body(length - length // 2) or body(1)
    start = len(words) + 1
    words.append(isa.encode_scalar("loop", imm=int(rng.integers(1, 4)), loop_end=start + len(loop_body) - 1))
    words += loop_body
    words.append(isa.encode_scalar("adda", 0, imm=int(rng.integers(0, 3)) * vw))
    # Loops of one and two scalars, one clock per instruction: each loop end
    # reads the count the clock after the previous one decremented it.
    for n_body in (1, 2):
        start = len(words) + 1
        words.append(isa.encode_scalar("loop", imm=int(rng.integers(1, 6)), loop_end=start + n_body - 1))
        words += [isa.encode_scalar("adda", 6, imm=1)] * n_body
    # Loops nested 2 to LOOP_DEPTH deep, each body scalars and vector adds
    # around the next loop: the loop stack's pushes and pops, an inner loop
    # ending the instruction before its enclosing loop's end, an outer loop
    # starting with the inner one (the sequencer's copies of its top and
    # next-lower levels: cores/pcore/sequencer.py).
    r7 = isa.Operand(isa.K_REG, 7)

    def step():
        if rng.random() < 0.5:
            return isa.encode_vector("add", r7, r7, isa.Operand(isa.K_REG, int(rng.integers(0, 7))))
        return isa.encode_scalar("adda", 6, imm=1)

    def nest(depth, at):
        pre = [step() for _ in range(int(rng.integers(0, 2)))]
        inner = nest(depth - 1, at + 1 + len(pre)) if depth > 1 else []
        post = [step() for _ in range(int(rng.integers(1, 3)))]
        body = pre + inner + post
        return [isa.encode_scalar("loop", imm=int(rng.integers(1, 4)), loop_end=at + len(body))] + body
    words += nest(int(rng.integers(2, isa.LOOP_DEPTH + 1)), len(words))
    # Dump the thread state.
    p7 = isa.Operand(isa.K_PRIV, 7, True)
    for r in range(isa.NUM_VREGS):
        words.append(isa.encode_vector("mov", p7, isa.Operand(isa.K_REG, r)))
    words.append(isa.encode_vector("accr", p7, shift=0))
    words.append(isa.encode_vector("accr", p7, shift=16))
    words.append(isa.encode_vector("sel", p7, isa.Operand(isa.K_REG, 1), isa.Operand(isa.K_REG, 2)))
    words.append(isa.encode_scalar("halt"))
    return words


def draw(rng, config, iss, process, length=24, np_=0, nt=0, tries=200, chains=False):
    """A program that runs without traps from the ISS's current state
    (``chains``: mostly accumulator operations, see CHAIN_MIX).
    Returns (words, function word)."""
    for _ in range(tries):
        words = _program(rng, config, length, chains)
        trial = copy.deepcopy(iss)
        trial.load(words)
        try:
            trial.run(isa.function_word(0, np_, nt), process, max_instructions=10_000)
        except PcoreRuntimeError:
            continue
        return words, isa.function_word(0, np_, nt)
    raise RuntimeError("could not draw a valid random program")
