"""PCORE instruction-set simulator: the golden model of the PCORE array.

Executes an instruction image on numpy memory images with the arithmetic of
``verification/golden/fixedpoint.py``.  All active PCOREs and threads run
each instruction together (numpy over axes (pcore, thread, lane)), exactly
like the lockstep hardware.  It also predicts the hardware's cycle, vector-op
and MAC counts.

Memory images (int64 arrays holding 16-bit values):

* ``private[process, pcore, thread, element]``
* ``shared[process, pcore, element]``
"""

from dataclasses import dataclass

import numpy as np

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.pcore.vector_ops import execute


class PcoreRuntimeError(Exception):
    pass


@dataclass
class RunStats:
    cycles: int          # clocks from start to the last write-back (hardware CYCLES)
    vops: int            # vector operations issued to active threads, per PCORE (hardware VOPS)
    macs: int            # MAC lane-operations over the array (hardware MACS)
    instructions: int    # instructions executed by the sequencer
    np: int
    nt: int


class PcoreISS:
    def __init__(self, config=None, image=()):
        self.config = c = config or SoCConfig()
        self.imem = list(image)
        self.private = np.zeros((2, c.np, c.nt, c.pcore_private_words), np.int64)
        self.shared = np.zeros((2, c.np, c.pcore_shared_words), np.int64)
        self.vregs = np.zeros((c.np, c.nt, isa.NUM_VREGS, c.vw), np.int64)
        self.acc = np.zeros((c.np, c.nt, c.vw), np.int64)
        self.flags = np.zeros((c.np, c.nt, c.vw), np.int64)
        self.areg = [0] * isa.NUM_AREGS
        self.sreg = [0] * isa.NUM_AREGS

    def load(self, image, base=0):
        end = base + len(image)
        if len(self.imem) < end:
            self.imem += [0] * (end - len(self.imem))
        self.imem[base:end] = list(image)

    # -- operands ---------------------------------------------------------------
    def _check(self, pc, d, addr, vector, limit, what):
        vw = self.config.vw
        if vector and addr % vw:
            raise PcoreRuntimeError(f"pc {pc} ({isa.disassemble(d.word)}): {what} vector address "
                                    f"{addr} is not a multiple of VW={vw}")
        if addr + (vw if vector else 1) > limit:
            raise PcoreRuntimeError(f"pc {pc} ({isa.disassemble(d.word)}): {what} address {addr} "
                                    f"beyond the {limit}-word space")

    def _read(self, pc, d, o, proc, npa, nta):
        c = self.config
        vw = c.vw
        if o.kind == isa.K_NONE:
            return np.zeros((npa, nta, vw), np.int64)
        if o.kind == isa.K_REG:
            return self.vregs[:npa, :nta, o.reg].copy()
        addr = self.areg[o.reg]
        if o.kind in (isa.K_PRIV, isa.K_PRIVB):
            vec = o.kind == isa.K_PRIV
            self._check(pc, d, addr, vec, c.pcore_private_words, "private")
            m = self.private[proc, :npa, :nta]
            v = m[..., addr:addr + vw] if vec else np.repeat(m[..., addr:addr + 1], vw, axis=-1)
            return v.copy()
        vec = o.kind == isa.K_SHR
        self._check(pc, d, addr, vec, c.pcore_shared_words, "shared")
        m = self.shared[proc, :npa]
        v = m[:, addr:addr + vw] if vec else np.repeat(m[:, addr:addr + 1], vw, axis=-1)
        return np.repeat(v[:, None, :], nta, axis=1)

    # -- execution ----------------------------------------------------------------
    def run(self, func, process=0, np_=None, nt=None, max_instructions=10_000_000):
        """Run the kernel at ``func`` (entry address, or a function word when
        ``np_``/``nt`` are None and ``func`` > 0xFFFF) on ``process``."""
        c = self.config
        if np_ is None and nt is None:
            entry, npa, nta = isa.split_function_word(func, c.np, c.nt)
        else:
            entry = func
            npa = c.np if not np_ or np_ > c.np else np_
            nta = c.nt if not nt or nt > c.nt else nt
        timer = isa.IssueTimer(nta, c.pcore_round_share)
        pc = entry
        loops = []
        vops = macs = count = 0
        while True:
            if pc >= len(self.imem):
                raise PcoreRuntimeError(f"pc {pc} beyond the loaded program ({len(self.imem)} words)")
            count += 1
            if count > max_instructions:
                raise PcoreRuntimeError(f"kernel at {entry} did not halt within {max_instructions} instructions")
            d = isa.decode(self.imem[pc])
            if d.is_scalar:
                timer.scalar()
                if d.sop == "halt":
                    break
                if d.sop == "loop":
                    if loops and pc == loops[-1][1]:
                        # (the sequencer reads ahead the instruction after a
                        # LOOP as pc + 1, and at a loop end that is not it)
                        raise PcoreRuntimeError(f"pc {pc}: a loop instruction ends the enclosing loop's body; "
                                                "loops must nest (the assembler's `loop N {{ }}` blocks do)")
                    if len(loops) >= isa.LOOP_DEPTH:
                        raise PcoreRuntimeError(f"pc {pc}: loops nested deeper than {isa.LOOP_DEPTH}")
                    loops.append([pc + 1, d.loop_end, d.imm])
                    pc += 1
                    continue
                if d.sop == "seta":
                    self.areg[d.areg] = d.imm
                elif d.sop == "sets":
                    self.sreg[d.areg] = d.imm
                elif d.sop == "adda":
                    self.areg[d.areg] = (self.areg[d.areg] + d.imm) & 0xFFFF
                elif d.sop == "mova":
                    self.areg[d.areg] = self.areg[d.areg2]
            else:
                timer.vector(d.op)
                vops += nta
                self._vector(pc, d, process, npa, nta)
                if d.op in ("mac", "macz"):
                    macs += nta * npa * c.vw
                incs = {o.reg for o in (d.dst, d.a, d.b) if o.inc}
                for r in sorted(incs):
                    self.areg[r] = (self.areg[r] + self.sreg[r]) & 0xFFFF
            # advance, with the hardware loop check on the innermost loop
            if loops and pc == loops[-1][1]:
                if loops[-1][2] > 1:
                    loops[-1][2] -= 1
                    pc = loops[-1][0]
                    continue
                loops.pop()
            pc += 1
        cycles = timer.cycles + isa.MIN_SLOTS     # pipeline drain before busy drops
        return RunStats(cycles, vops, macs, count, npa, nta)

    def _vector(self, pc, d, proc, npa, nta):
        c = self.config
        op = d.op
        nsrc = isa.NUM_SRCS[op]
        conflict = isa.source_conflict([d.a, d.b][:nsrc])
        if conflict:
            raise PcoreRuntimeError(f"pc {pc} ({isa.disassemble(d.word)}): {conflict}")
        a = self._read(pc, d, d.a, proc, npa, nta) if nsrc >= 1 else None
        b = self._read(pc, d, d.b, proc, npa, nta) if nsrc >= 2 else None
        sh = d.shift
        acc = self.acc[:npa, :nta]
        flags = self.flags[:npa, :nta]
        if op not in isa.OP:
            raise PcoreRuntimeError(f"pc {pc}: unknown vector operation {op}")
        result, acc_out, flag_out = execute(op, a, b, acc, flags, sh)
        if op in isa.ACC_WRITE_OPS:
            acc[...] = acc_out
        if op in isa.FLAG_WRITE_OPS:
            flags[...] = flag_out
        if result is None or d.dst.kind == isa.K_NONE:
            return
        if d.dst.kind == isa.K_REG:
            self.vregs[:npa, :nta, d.dst.reg] = result
        elif d.dst.kind == isa.K_PRIV:
            addr = self.areg[d.dst.reg]
            self._check(pc, d, addr, True, c.pcore_private_words, "private destination")
            self.private[proc, :npa, :nta, addr:addr + c.vw] = result
        else:
            raise PcoreRuntimeError(f"pc {pc}: {isa.disassemble(d.word)}: invalid destination")
