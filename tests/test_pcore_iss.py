"""The PCORE instruction-set simulator: kernels against the independent numpy
references, lockstep limits, loop/addressing semantics, cycle model, traps."""

import numpy as np
import pytest

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.pcore import workloads
from tensorsoc.sw.pcore.asm import assemble
from tensorsoc.verification.pcore.iss import PcoreISS, PcoreRuntimeError


def run(wl, process=0, np_=0, nt=0):
    prog = wl.assemble()
    iss = PcoreISS(wl.config, prog.words)
    iss.private[process] = wl.private
    iss.shared[process] = wl.shared
    stats = iss.run(isa.function_word(wl.entry, np_, nt), process)
    return iss, stats


@pytest.mark.parametrize("wl", workloads.standard() + workloads.bench_set(), ids=lambda w: w.name)
def test_kernel_matches_reference(wl):
    iss, stats = run(wl, process=1)
    assert not wl.mismatches(iss.private[1])
    assert not iss.private[0].any(), "the other process space was touched"
    if wl.useful_macs:
        assert stats.macs == wl.useful_macs


def test_small_geometry():
    c = SoCConfig(np=2, nt=2, vw=4, pcore_private_words=512, pcore_shared_words=1024)
    for wl in (workloads.convolution(c, H=3, W=4, CIN=4, COUT=8, NPIX=3),
               workloads.linear(c, NIN=16, OB=2, NB=2), workloads.maxpool(c, H=4, W=4, C=8, NPIX=1),
               workloads.epilogue(c, C=8, NPIX=4), workloads.eltwise_add(c, N=64)):
        iss, stats = run(wl)
        assert not wl.mismatches(iss.private[0]), wl.name
        assert stats.cycles % 1 == 0


def test_lockstep_limits_leave_inactive_slots():
    wl = workloads.eltwise_add(N=32)
    iss, stats = run(wl, np_=2, nt=3)
    out = wl.var("out")
    got = iss.private[0][:, :, out.addr:out.addr + out.size]
    assert np.array_equal(got[:2, :3], wl.expected["out"][:2, :3])
    assert not got[2:].any() and not got[:, 3:].any()
    assert (stats.np, stats.nt) == (2, 3)
    # 3 threads still take MIN_SLOTS clocks per vector instruction; two
    # per vector (mov, add: one private read per instruction)
    n_vec = 32 // 8
    assert stats.cycles == 6 + 1 + 2 * n_vec * isa.MIN_SLOTS + 1 + isa.MIN_SLOTS


def test_cycle_model_and_post_increment_strides():
    src = """
class t {
    private v[64]
    private o[64]
    func f {
        seta a0, v, 16
        seta a1, o, VW
        loop 3 {
            mov p[a1+], p[a0+]
        }
        adda a1, -8
        mov r1, pb[a1]
    }
}
"""
    c = SoCConfig()
    prog = assemble([("t.pcore", src)], c)
    iss = PcoreISS(c, prog.words)
    iss.private[0, :, :, :64] = np.arange(64)
    st = iss.run(0, 0)
    o = iss.private[0, 0, 0, 64:88]
    assert list(o) == list(range(0, 8)) + list(range(16, 24)) + list(range(32, 40))
    assert list(iss.vregs[0, 0, 1]) == [32] * 8   # o[16], broadcast
    # 4 setup + loop + 3 vectors x 8 + adda + 1 vector x 8 + halt, then the drain
    assert st.cycles == 4 + 1 + 3 * 8 + 1 + 8 + 1 + isa.MIN_SLOTS
    assert st.vops == 4 * 8 and st.instructions == 4 + 1 + 3 + 1 + 1 + 1


@pytest.mark.parametrize("nt", [1, 2, 3])
def test_accumulator_chains(nt):
    """With at most CHAIN_MAX_NT threads, accumulator-only instructions take
    CHAIN_SLOTS clocks and a mac right after one takes the bypass; an accr
    (or a mac after a scalar) waits for the write-back.  Results are the
    same whatever the timing."""
    src = """
class t {
    private w[64]
    shared x[64]
    private o[8]
    func f {
        seta a0, x, 1
        seta a1, w, VW
        seta a2, o, VW
        macz sb[a0+], p[a1+]
        loop 3 {
            mac sb[a0+], p[a1+]
        }
        adda a3, 1
        mac sb[a0+], p[a1+]
        accr p[a2], 0
    }
}
"""
    c = SoCConfig()
    prog = assemble([("t.pcore", src)], c)
    iss = PcoreISS(c, prog.words)
    rng = np.random.default_rng(5)
    iss.private[0, :, :, :64] = rng.integers(-50, 50, size=64)
    iss.shared[0, :, :64] = rng.integers(-50, 50, size=64)
    st = iss.run(isa.function_word(0, 1, nt), 0)
    w = iss.private[0, 0, 0, :40].reshape(5, 8)
    want = (iss.shared[0, 0, :5, None] * w).sum(axis=0)
    assert list(iss.private[0, 0, 0, 64:72]) == list(want)
    # a vector instruction takes 7 clocks, a chained write-back's reader waits 4
    assert (isa.MIN_SLOTS, isa.CHAIN_WAIT) == (7, 4)
    if nt <= isa.CHAIN_MAX_NT:
        # 3 seta (each with its sets) + macz; the loop breaks the chain: the first mac
        # waits the rest of the 4 clocks (3), the other two chain; adda, then the mac waits 3
        # clocks; accr waits 4; halt, drain
        assert st.cycles == 6 + 2 + 1 + (3 + 2) + 2 * 2 + 1 + (3 + 2) + (4 + 7) + 1 + 7
    else:
        assert st.cycles == 6 + 7 + 1 + 3 * 7 + 1 + 7 + 7 + 1 + 7
    timer = isa.IssueTimer(2)
    assert timer.vector("macz") is False and timer.vector("mac") is True and timer.cycles == 4
    timer.scalar()
    assert timer.vector("mac") is False and timer.cycles == 5 + 3 + 2


def test_shared_rounders_take_round_share_clocks_per_slot():
    """With lanes sharing their rounding shifter (pcore_round_share = S),
    each thread slot of mul, asr and accr takes S + 2 clocks, every other
    instruction as many as before; the results do not change."""
    src = ("class t {\n func f {\n seta a0, 0\n seta a1, 8\n mov r3, p[a1]\n mul r0, p[a0], r3, 3\n"
           " add r1, r0, r0\n"
           " accr r2, 5\n asr p[a0], r1, 2\n }\n}\n")
    runs = {}
    for share in (1, 4):
        c = SoCConfig(pcore_round_share=share)
        prog = assemble([("t.pcore", src)], c)
        iss = PcoreISS(c, prog.words)
        rng = np.random.default_rng(9)
        iss.private[0] = rng.integers(-3000, 3000, size=iss.private[0].shape)
        iss.acc[:] = rng.integers(-(1 << 20), 1 << 20, size=iss.acc.shape)
        runs[share] = (iss.run(prog.function("t", "f")).cycles, iss.private.copy(), iss.vregs.copy())
    (c1, p1, v1), (c4, p4, v4) = runs[1], runs[4]
    assert (p1 == p4).all() and (v1 == v4).all()
    # three rounding instructions of nt = 8 slots: 3 x 8 x 5 more clocks
    assert c4 - c1 == 3 * 8 * 5
    assert isa.slots(8, "accr", 4) == 48 and isa.slots(8, "mac", 4) == 8 and isa.slots(2, "mul", 2) == 28
    assert isa.slots(8, "accr", 1) == 8
    assert isa.slots(8, "shl", 4) == 8          # shl's saturation needs no shifter


def test_traps_misaligned_and_out_of_range():
    c = SoCConfig()
    prog = assemble([("t.pcore", "class t {\n func f {\n seta a0, 3\n mov r0, p[a0]\n }\n"
                                  " func g {\n seta a0, 600\n mov r0, pb[a0]\n }\n}\n")], c)
    iss = PcoreISS(c, prog.words)
    with pytest.raises(PcoreRuntimeError, match="not a multiple of VW"):
        iss.run(prog.function("t", "f"))
    with pytest.raises(PcoreRuntimeError, match="beyond"):
        iss.run(prog.function("t", "g"))


def test_refuses_a_loop_that_ends_the_enclosing_loop_body():
    """The sequencer reads ahead pc + 1 after a LOOP, which at the end of the
    enclosing loop's body is not the next instruction: such programs (only
    hand-encoded ones; the assembler's loops nest) stop in the ISS."""
    words = [isa.encode_scalar("loop", imm=2, loop_end=1),
             isa.encode_scalar("loop", imm=2, loop_end=2),
             isa.encode_scalar("adda", 0, imm=1),
             isa.encode_scalar("halt")]
    with pytest.raises(PcoreRuntimeError, match="ends the enclosing loop's body"):
        PcoreISS(SoCConfig(), words).run(isa.function_word(0))
    nested = [isa.encode_scalar("loop", imm=2, loop_end=2), isa.encode_scalar("loop", imm=2, loop_end=2),
              isa.encode_scalar("adda", 0, imm=1), isa.encode_scalar("halt")]
    assert PcoreISS(SoCConfig(), nested).run(isa.function_word(0)).instructions > 0


def test_stops_on_an_instruction_that_reads_a_memory_twice():
    """The hardware reads each data memory once per clock: the ISS stops on
    a word the assembler would refuse (two private or two shared sources),
    and accepts one of each with two registers."""
    c = SoCConfig()
    p0, s0 = isa.Operand(isa.K_PRIV, 0), isa.Operand(isa.K_SHRB, 1)
    for a, b, bad in [(p0, isa.Operand(isa.K_PRIVB, 1), "two private-memory sources"),
                      (isa.Operand(isa.K_SHR, 0), s0, "two shared-memory sources"),
                      (p0, s0, None), (isa.Operand(isa.K_REG, 1), isa.Operand(isa.K_REG, 2), None)]:
        words = [isa.encode_vector("add", isa.Operand(isa.K_REG, 0), a, b), isa.encode_scalar("halt")]
        iss = PcoreISS(c, words)
        if bad:
            with pytest.raises(PcoreRuntimeError, match=bad):
                iss.run(0, np_=1, nt=1)
        else:
            iss.run(0, np_=1, nt=1)
    # a one-source op ignores its b field
    words = [isa.encode_vector("mov", isa.Operand(isa.K_REG, 0), p0, isa.Operand(isa.K_PRIV, 1)),
             isa.encode_scalar("halt")]
    PcoreISS(c, words).run(0, np_=1, nt=1)
