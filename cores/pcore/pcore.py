"""One PCORE: VW lanes shared by NT threads, with its memories.

Per PCORE:

* private memory: one bank per process space, NT x (private_words/VW) vector
  words (thread-major), one read port (the kernel's one private source, or
  the TensorEngine's reads) and one write port;
* shared memory: one bank per process space, shared_words/VW vector words;
  kernels read it, only the TensorEngine writes it;
* per-thread state: 8 vector registers, one VW x 32-bit accumulator and VW
  lane flags (small memories indexed by thread);
* VW instances of the MyHDL lane datapath (``cores/pcore/lane.py``).

Pipeline (clock numbers relative to the sequencer's issue bundle):
stage 0 presents memory/register addresses, the read data are registered,
stage 1 selects operands from those registers, stage 2 holds them in the
operand registers that feed the lanes, the lanes take ``LANE_LATENCY``
clocks, then the results are written back (docs/pcore.md).
"""

from migen import *

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.spec.pcore_isa import LANE_LATENCY
from tensorsoc.cores.pcore.lane import LEFT_SHIFT_OPS, module_name, rounder_name, shift_bits_for


def _bits(n):
    return max(1, (n - 1).bit_length())


# The array's memories (PCore's and the sequencer's instruction memory):
# their read ports are read-first (Migen's ``READ_FIRST``: the read data
# register after the memory, as a block RAM's own), and no port reads an
# address in the clock another port writes it, or its result does not
# matter: a thread's next instruction issues MIN_SLOTS clocks after this
# one, the clock after the write-back (spec/pcore_isa.py); the TensorEngine
# reaches only the process space no kernel runs on, and a transfer whose
# source and destination share an address is not defined
# (docs/tensor_engine.md); the instruction memory is written only with the
# words the sequencer does not run.  yosys is told so with the
# ``no_rw_check`` attribute (``synthesis_commands``); without it it adds
# logic to give a read in the writing clock the old word, and with
# write-first ports (Migen's default) the new one: a register of every
# written bit, an address compare and a multiplexer per read bit after the
# block RAM's output: about 820 LUTs and 260 flip-flops in the ULX3S's
# 4 x 8 x 4 array, on the path from the block RAMs to the operand
# registers (docs/fpga_history.md, "Block RAMs without collision logic").
NO_RW_CHECK_MEMORIES = ("*pcore*_private*", "*pcore*_shared*", "*pcore*_vregs", "*pcore*_acc",
                        "*pcore*_flags", "*pcore_imem", "*pcore_imem_ctl")


# The flip-flops yosys must not merge: each lane's copy of its PCORE's op
# register (``lane_op0`` ..), and with shared rounders the copies of the
# delayed write-back's select (``round_fire*``, ``PCore._round_writeback``).  yosys merges identical flip-flops whatever
# their nets' ``keep``, so the attribute goes on the cells driving them.
KEEP_REGISTERS = ("*lane_op*", "*round_fire*")


def synthesis_commands(top):
    """yosys commands, run after the sources are read and before
    ``synth_ecp5``, that give the array's memories (``NO_RW_CHECK_MEMORIES``)
    the ``no_rw_check`` attribute and the flip-flops of
    ``KEEP_REGISTERS`` the ``keep`` attribute (``proc`` first, so that the
    flip-flops are cells).  (LiteX's Verilog writer has no way to put an
    attribute on a memory or a cell.)"""
    return [f"hierarchy -top {top}",
            "setattr -set no_rw_check 1 " + " ".join(f"m:{p}" for p in NO_RW_CHECK_MEMORIES),
            "proc",
            "setattr -set keep 1 " + " ".join(f"w:{p} %ci1:+[Q]" for p in KEEP_REGISTERS)]


class TEPort:
    """The TensorEngine data port signals (shared by all PCOREs): a read
    channel (``rd_*``, data back on ``rvalid``/``rdata``) and a write channel
    (``wr_*``, ``wdata``, ``wmask``, ``wr_bcast``), each taking one command
    per clock, both in the same clock; see ``PCOREArrayCore`` for their
    meaning.  ``wr_bcast`` (NP bits, 0 when unconnected): a non-zero mask
    writes the command to every PCORE whose bit is set (``wr_pcore``
    ignored), the same word, thread and lanes in each."""

    CHANNEL = ("valid", "process", "shared", "pcore", "thread", "addr")
    # The PCOREs' process spaces (SoCConfig.pcore_processes): the array sets
    # it on its port; each PCORE has that many banks of each memory.
    processes = 2
    # Driven by the TensorEngine / by the array.
    OUT = (tuple("rd_" + n for n in CHANNEL) + tuple("wr_" + n for n in CHANNEL)
           + ("wdata", "wmask", "wr_bcast"))
    IN = ("rd_ready", "wr_ready", "rvalid", "rdata")

    def connect(self, array_port):
        """Statements joining this (the TensorEngine's) port to ``array_port``
        (a PCORE array's, or a model of it)."""
        return ([getattr(array_port, n).eq(getattr(self, n)) for n in self.OUT]
                + [getattr(self, n).eq(getattr(array_port, n)) for n in self.IN])

    def __init__(self, np, nt, vw, addr_bits):
        # Read channel.
        self.rd_valid = Signal()
        self.rd_ready = Signal()
        self.rd_process = Signal()
        self.rd_shared = Signal()
        self.rd_pcore = Signal(max=max(np, 2))
        self.rd_thread = Signal(max=max(nt, 2))
        self.rd_addr = Signal(addr_bits)
        self.rvalid = Signal()
        self.rdata = Signal(16 * vw)
        # Write channel.
        self.wr_valid = Signal()
        self.wr_ready = Signal()
        self.wr_process = Signal()
        self.wr_shared = Signal()
        self.wr_pcore = Signal(max=max(np, 2))
        self.wr_thread = Signal(max=max(nt, 2))
        self.wr_addr = Signal(addr_bits)
        self.wdata = Signal(16 * vw)
        self.wmask = Signal(vw)
        self.wr_bcast = Signal(np)

    def wr_selects(self, index):
        """Expression: a write command addresses PCORE ``index`` (its
        ``wr_bcast`` bit, else ``wr_pcore``); valid/ready not included."""
        return Mux(self.wr_bcast != 0, self.wr_bcast[index], self.wr_pcore == index)


def _in_space(te, process, q):
    """``process`` selects bank ``q`` of a memory.  With one process space
    (``te.processes`` = SoCConfig.pcore_processes = 1) there is one bank of
    each memory, and the engine's decoder refuses a process-1 instruction
    (DECODE).  (The number comes with the port, not as a parameter or a
    closure of PCore's constructor: a new local variable there renumbers
    its closure cells, from whose numbers Migen's naming takes some
    signals' names, and every board's netlist would change.)"""
    return (process == q) if te.processes > 1 else 1


class PCore(Module):
    def __init__(self, index, seq, te, nt, vw, private_words, shared_words,
                 data_width=16, acc_width=32, dsp_shift=False, round_share=1):
        W, AW = data_width, acc_width
        shared_round = round_share > 1
        lg = _bits(vw) if vw > 1 else 0
        pwords = private_words // vw            # vector words per thread and process
        swords = shared_words // vw
        # Read data for the TensorEngine port (valid one clock after the command).
        self.te_rdata = Signal(W * vw)

        # # #

        active = Signal()
        self.comb += active.eq(index < seq.np_active)
        # TensorEngine commands taken by this PCORE, one per channel.
        te_rd_hit = Signal()
        te_wr_hit = Signal()
        te_rd_shared = Signal()
        te_rd_process = Signal()
        self.comb += [
            te_rd_hit.eq(te.rd_valid & te.rd_ready & (te.rd_pcore == index)),
            te_wr_hit.eq(te.wr_valid & te.wr_ready & te.wr_selects(index)),
        ]
        self.sync += If(te_rd_hit, te_rd_shared.eq(te.rd_shared), te_rd_process.eq(te.rd_process))

        tid_bits = _bits(nt)
        tid = seq.iss_tid[:tid_bits] if nt > 1 else Constant(0, 1)

        def waddr(elem_addr, words):
            return elem_addr[lg:lg + _bits(words)]

        # Control pipeline: s0 = the memories' read data arrive and are
        # registered, s1 = operand selection (from those registers), then one
        # clock in the operand registers and LANE_LATENCY in the lanes; ``wb``
        # is the write-back stage.
        #
        # Each stage's fields are loaded only with a valid instruction for
        # this PCORE (its clock enable is the previous stage's valid, which
        # includes ``active``, ``index < np_active``), and hold otherwise:
        # nothing reads them without their valid.  The enables make each
        # PCORE's control registers its own: the PCOREs run in lockstep, so
        # without them yosys merged the NP PCOREs' identical registers (and
        # the lanes' decoding of them) into one copy whose nets spanned the
        # whole array; the ULX3S 4 x 8 x 4 array's critical path out of
        # context went from one such op register through the decoding
        # shared by the lanes of all four PCOREs (docs/fpga.md, "Each
        # PCORE's own control registers").
        keys = ("op", "shift", "fwd", "a_kind", "b_kind", "dst_kind", "dst_reg", "dst_addr", "tid")
        s1_keys = tuple(k for k in keys if k not in ("a_kind", "b_kind"))   # the kinds are used in s0 only
        s0 = {k: Signal(len(getattr(seq, "iss_" + k)), name="s0_" + k) for k in keys}
        s1 = {k: Signal(len(getattr(seq, "iss_" + k)), name="s1_" + k) for k in s1_keys}
        issue = Signal()
        s0_valid, s1_valid = Signal(), Signal()
        s0_a_lane, s1_a_lane = Signal(max=max(vw, 2)), Signal(max=max(vw, 2))
        s0_b_lane, s1_b_lane = Signal(max=max(vw, 2)), Signal(max=max(vw, 2))
        self.comb += issue.eq(seq.iss_valid & seq.iss_thread_en & active)
        self.sync += [
            s0_valid.eq(issue),
            If(issue,
                s0_a_lane.eq(seq.iss_a_addr[:lg] if lg else 0),
                s0_b_lane.eq(seq.iss_b_addr[:lg] if lg else 0),
                [s0[k].eq(getattr(seq, "iss_" + k)) for k in keys],
            ),
            s1_valid.eq(s0_valid),
            If(s0_valid, s1_a_lane.eq(s0_a_lane), s1_b_lane.eq(s0_b_lane), [s1[k].eq(s0[k]) for k in s1_keys]),
        ]
        wb_keys = ("valid", "op", "dst_kind", "dst_reg", "dst_addr", "tid")
        stage = dict(s1, valid=s1_valid)
        for n in range(1 + LANE_LATENCY):
            nxt = {k: Signal(len(stage[k]), name=f"s{n + 2}_{k}") for k in wb_keys}
            self.sync += [nxt["valid"].eq(stage["valid"]),
                          If(stage["valid"], [nxt[k].eq(stage[k]) for k in wb_keys if k != "valid"])]
            stage = nxt
        s2 = stage                         # the write-back stage
        s2_valid = s2["valid"]

        def op_in(op, names):
            return reduce(or_, [op == isa.OP[n] for n in sorted(names)])

        def kind_in(kind, kinds):
            return reduce(or_, [kind == k for k in kinds])

        wb_result = Signal()
        wb_acc = Signal()
        wb_flag = Signal()
        self.comb += [
            wb_result.eq(s2_valid & op_in(s2["op"], isa.RESULT_OPS)),
            wb_acc.eq(s2_valid & op_in(s2["op"], isa.ACC_WRITE_OPS)),
            wb_flag.eq(s2_valid & op_in(s2["op"], isa.FLAG_WRITE_OPS)),
        ]

        # Lane outputs (write-back stage).
        res = [Signal((W, True), name=f"res{i}") for i in range(vw)]
        acc_out = [Signal((AW, True), name=f"acc_out{i}") for i in range(vw)]
        flag_out = [Signal(name=f"flag_out{i}") for i in range(vw)]
        res_vec = Cat(*res)
        # What the write-back stage writes: the lanes' results and the
        # instruction in ``s2``; with shared rounders, a rounding
        # instruction's results and fields round_share + 1 clocks later
        # (``_round_writeback``)
        if shared_round:
            wbv, wb_data, wb_data_ok, round_fire, round_data = self._round_writeback(
                s2, wb_result, res_vec, op_in, W, vw)
        else:
            wbv, wb_data, wb_data_ok = s2, res_vec, wb_result

        # Private memory banks: one read port each (an instruction reads at
        # most one private source, the assembler's rule, so a bank is stored
        # once), shared by the kernel and the TensorEngine's read channel.
        def source_addr(kinds):
            """The address of the source operand that reads the memory of
            operand ``kinds`` (at most one does: isa.source_conflict)."""
            return Mux(kind_in(seq.iss_a_kind, kinds), seq.iss_a_addr, seq.iss_b_addr)

        priv = Signal(W * vw)
        te_priv_rd = []
        priv_addr = source_addr((isa.K_PRIV, isa.K_PRIVB))

        def te_adr(thread, addr):
            return thread[:tid_bits] * pwords + addr[:_bits(pwords)] if nt > 1 else addr[:_bits(pwords)]

        # The TensorEngine's writes are registered here, in each PCORE, and
        # land in the memory the clock after the command is taken: the
        # engine's write decision, the array's ready (from the sequencer's
        # state) and the bank select into the block RAMs' byte enables in
        # one clock were the ULX3S 4 x 8 x 4 build's accel critical path at
        # seed 5 (19.34 ns, 16.18 of them routing) and the array's out of
        # context.  Nothing reads a word in the clock its write lands: the
        # engine's next transfer reads only memory the one before does not
        # write until that one has finished, a kernel starts after the
        # transfers before its EXE and reads clocks later, and a transfer
        # whose source and destination share an address is not defined
        # (docs/tensor_engine.md); kernels write only their own process
        # space, which the engine's ready keeps it out of, so a landing
        # write never meets a kernel's.
        tw_priv = Signal(te.processes)      # a TensorEngine write lands in private bank q
        tw_shr = Signal(te.processes)       # ... in shared bank q
        tw_padr = Signal(_bits(nt * pwords))
        tw_sadr = Signal(_bits(swords))
        tw_dat = Signal(W * vw)
        tw_mask = Signal(vw)
        self.sync += [
            [tw_priv[q].eq(te_wr_hit & ~te.wr_shared & _in_space(te, te.wr_process, q)) for q in range(te.processes)],
            [tw_shr[q].eq(te_wr_hit & te.wr_shared & _in_space(te, te.wr_process, q)) for q in range(te.processes)],
            # (no clock enable: the command's fields are registered every
            # clock, so the select above is the only flip-flop the engine's
            # write decision reaches; yosys shares these between PCOREs)
            tw_padr.eq(te_adr(te.wr_thread, te.wr_addr)), tw_sadr.eq(te.wr_addr[:_bits(swords)]),
            tw_dat.eq(te.wdata), tw_mask.eq(te.wmask),
        ]
        for q in range(te.processes):
            mem = Memory(W * vw, nt * pwords, name=f"pcore{index}_private{q}")
            rd = mem.get_port(mode=READ_FIRST)
            wr = mem.get_port(write_capable=True, we_granularity=W)
            self.specials += mem, rd, wr
            own = Signal(name=f"own_private{q}")
            self.comb += [
                own.eq(seq.running & _in_space(te, seq.process, q)),
                rd.adr.eq(Mux(own, tid * pwords + waddr(priv_addr, pwords), te_adr(te.rd_thread, te.rd_addr))),
                If(tw_priv[q],
                    wr.adr.eq(tw_padr),
                    wr.dat_w.eq(tw_dat),
                    wr.we.eq(tw_mask),
                ).Else(
                    wr.adr.eq(wbv["tid"][:tid_bits] * pwords + waddr(wbv["dst_addr"], pwords)),
                    wr.dat_w.eq(wb_data),
                    wr.we.eq(Replicate(own & wb_data_ok & (wbv["dst_kind"] == isa.K_PRIV), len(wr.we))),
                ),
            ]
            te_priv_rd.append(rd.dat_r)
            self.comb += If(_in_space(te, seq.process, q), priv.eq(rd.dat_r))

        # Shared memory banks (kernels read, the TensorEngine reads and writes).
        shr = Signal(W * vw)
        te_shr_rd = []
        shr_addr = source_addr((isa.K_SHR, isa.K_SHRB))
        for q in range(te.processes):
            mem = Memory(W * vw, swords, name=f"pcore{index}_shared{q}")
            rd = mem.get_port(mode=READ_FIRST)
            wr = mem.get_port(write_capable=True, we_granularity=W)
            self.specials += mem, rd, wr
            own = Signal(name=f"own_shared{q}")
            self.comb += [
                own.eq(seq.running & _in_space(te, seq.process, q)),
                rd.adr.eq(Mux(own, waddr(shr_addr, swords), te.rd_addr[:_bits(swords)])),
                wr.adr.eq(tw_sadr),
                wr.dat_w.eq(tw_dat),
                wr.we.eq(Replicate(tw_shr[q], len(wr.we)) & tw_mask),
            ]
            te_shr_rd.append(rd.dat_r)
            self.comb += If(_in_space(te, seq.process, q), shr.eq(rd.dat_r))

        if te.processes > 1:
            self.comb += Case(Cat(te_rd_process, te_rd_shared), {
                0: self.te_rdata.eq(te_priv_rd[0]), 1: self.te_rdata.eq(te_priv_rd[1]),
                2: self.te_rdata.eq(te_shr_rd[0]), 3: self.te_rdata.eq(te_shr_rd[1]),
            })
        else:
            self.comb += self.te_rdata.eq(Mux(te_rd_shared, te_shr_rd[0], te_priv_rd[0]))

        # Per-thread state: vector registers, accumulator, flags.
        vrf = Memory(W * vw, nt * isa.NUM_VREGS, name=f"pcore{index}_vregs")
        vrf_a, vrf_b = vrf.get_port(mode=READ_FIRST), vrf.get_port(mode=READ_FIRST)
        vrf_w = vrf.get_port(write_capable=True)
        accm = Memory(AW * vw, nt, name=f"pcore{index}_acc")
        acc_rd, acc_wr = accm.get_port(mode=READ_FIRST), accm.get_port(write_capable=True)
        flagm = Memory(vw, nt, name=f"pcore{index}_flags")
        flag_rd, flag_wr = flagm.get_port(mode=READ_FIRST), flagm.get_port(write_capable=True)
        self.specials += vrf, vrf_a, vrf_b, vrf_w, accm, acc_rd, acc_wr, flagm, flag_rd, flag_wr
        s2_tid = s2["tid"][:tid_bits] if nt > 1 else Constant(0, 1)
        wbv_tid = wbv["tid"][:tid_bits] if nt > 1 else Constant(0, 1)
        # The accumulator and the flags are read a clock after the other
        # memories (from s0), so their data meet the operands in s1.
        s0_tid = s0["tid"][:tid_bits] if nt > 1 else Constant(0, 1)
        self.comb += [
            vrf_a.adr.eq(Cat(seq.iss_a_reg, tid)),
            vrf_b.adr.eq(Cat(seq.iss_b_reg, tid)),
            vrf_w.adr.eq(Cat(wbv["dst_reg"], wbv_tid)),
            vrf_w.dat_w.eq(wb_data),
            vrf_w.we.eq(wb_data_ok & (wbv["dst_kind"] == isa.K_REG)),
            acc_rd.adr.eq(s0_tid),
            acc_wr.adr.eq(s2_tid),
            acc_wr.dat_w.eq(Cat(*acc_out)),
            acc_wr.we.eq(wb_acc),
            flag_rd.adr.eq(s0_tid),
            flag_wr.adr.eq(s2_tid),
            flag_wr.dat_w.eq(Cat(*flag_out)),
            flag_wr.we.eq(wb_flag),
        ]

        # Stage 1: operand selection and the lanes.
        def lanes_of(vec):
            return [vec[W * i:W * (i + 1)] for i in range(vw)]

        # An operand is a vector register, the memory word it reads (private
        # or shared: each memory is read for one operand at most,
        # isa.source_conflict), one lane of that word broadcast, or 0.
        SEL_REG, SEL_MEM, SEL_BCAST, SEL_ZERO = range(4)

        def select_of(kind):
            return Mux(kind == isa.K_REG, SEL_REG,
                       Mux(kind_in(kind, (isa.K_PRIV, isa.K_SHR)), SEL_MEM,
                           Mux(kind_in(kind, (isa.K_PRIVB, isa.K_SHRB)), SEL_BCAST, SEL_ZERO)))

        def reads_private(kind):
            return kind_in(kind, (isa.K_PRIV, isa.K_PRIVB))

        def operand(sel, lane_sel, regs, mem, name):
            bcast = Signal(W, name=f"{name}_bcast")
            self.comb += bcast.eq(Array(lanes_of(mem))[lane_sel])
            out = [Signal((W, True), name=f"{name}{i}") for i in range(vw)]
            for i, o in enumerate(out):
                self.comb += Case(sel, {
                    SEL_REG: o.eq(lanes_of(regs)[i]),
                    SEL_MEM: o.eq(lanes_of(mem)[i]),
                    SEL_BCAST: o.eq(bcast),
                    SEL_ZERO: o.eq(0),
                })
            return out

        # The memories' read data are registered first (s0 -> s1): their
        # unregistered block-RAM outputs (5.8 ns clock-to-out on an ECP5),
        # the process bank's and the operand's multiplexers and the route to
        # the lanes' operand registers in one clock were the ULX3S's accel
        # critical path (48.12 MHz, 14.0 of its 20.8 ns routing).  What is
        # registered is each operand's memory word (m_a, m_b: the private
        # or the shared word, chosen with the process bank) rather than the
        # private and the shared word, so that each operand multiplexer has
        # three sources, not five, and each registered bit two loads, not
        # four: the private and shared read data's fan-out into both
        # operands was the ULX3S 4 x 8 x 4 build's most congested routing
        # (docs/fpga_history.md, "One memory word per operand").
        m_a, m_b = Signal(W * vw), Signal(W * vw)
        m_vra, m_vrb = Signal(W * vw), Signal(W * vw)
        s1_a_sel, s1_b_sel = Signal(2), Signal(2)
        self.sync += [
            m_a.eq(Mux(reads_private(s0["a_kind"]), priv, shr)),
            m_b.eq(Mux(reads_private(s0["b_kind"]), priv, shr)),
            m_vra.eq(vrf_a.dat_r), m_vrb.eq(vrf_b.dat_r),
            If(s0_valid, s1_a_sel.eq(select_of(s0["a_kind"])), s1_b_sel.eq(select_of(s0["b_kind"]))),
        ]
        opa = operand(s1_a_sel, s1_a_lane, m_vra, m_a, "opa")
        opb = operand(s1_b_sel, s1_b_lane, m_vrb, m_b, "opb")
        # Operand registers: the memories' read data and the operand muxes
        # get a clock of their own, the lanes start from flip-flops.
        # the op register once per lane (``lane_op0`` ..): one register read by
        # every lane of the PCORE was the ULX3S's accel critical path above
        # 60 MHz, through the lanes' op decoding (shared between them by
        # yosys) into a far lane (docs/fpga.md, "Each lane its own op
        # register"); ``synthesis_commands`` keeps the copies apart.
        r_op = [Signal(len(s1["op"]), name=f"lane_op{i}") for i in range(vw)]
        r_fwd = Signal()
        r_sh = Signal(shift_bits_for(AW))
        # the lanes' predecoded shift controls (lane.shift_controls)
        r_rlo = Signal(log2_int(W))
        r_rhi = Signal()
        r_rz = Signal()
        s1_sh = Signal(shift_bits_for(AW))
        self.comb += s1_sh.eq(s1["shift"][:shift_bits_for(AW)])
        r_acc = Signal(AW * vw)
        r_flag = Signal(vw)
        r_a = [Signal((W, True), name=f"r_opa{i}") for i in range(vw)]
        r_b = [Signal((W, True), name=f"r_opb{i}") for i in range(vw)]
        # each lane's multiplier operand: b, or 2**(sh mod W) for the left
        # shifts (lane.shift_controls), chosen here into the lane's own
        # register, so that its DSP block starts from flip-flops beside it
        r_mb = [Signal((W + 1, True), name=f"r_mb{i}") for i in range(vw)]
        s1_lsh = Signal()
        s1_pow2 = Signal(W + 1)
        # (with shared rounders asr's operand is the product a * 1:
        # lane.shift_controls)
        self.comb += [s1_lsh.eq(op_in(s1["op"], LEFT_SHIFT_OPS)),
                      s1_pow2.eq(C(1, W + 1) << s1_sh[:log2_int(W)])] if not shared_round else [
                      s1_lsh.eq(op_in(s1["op"], LEFT_SHIFT_OPS + ("asr",))),
                      s1_pow2.eq(Mux(s1["op"] == isa.OP["asr"], 1, C(1, W + 1) << s1_sh[:log2_int(W)]))]
        self.sync += [
            # the lanes' controls, this PCORE's own (enabled by its valid)
            If(s1_valid,
                [r.eq(s1["op"]) for r in r_op], r_fwd.eq(s1["fwd"]), r_sh.eq(s1_sh),
                If((s1_sh == 0) | (s1["op"] == isa.OP["shl"]),
                    r_rlo.eq(0), r_rhi.eq(0), r_rz.eq(1)
                ).Else(
                    # (sh - 1) mod W: the low log2(W) bits of sh - 1
                    r_rlo.eq((s1_sh - 1)[:log2_int(W)]), r_rhi.eq(s1_sh > W), r_rz.eq(0)),
            ),
        ]
        operand_regs = [r.eq(Mux(s1_lsh, s1_pow2, o)) for r, o in zip(r_mb, opb)] \
            + [r_acc.eq(acc_rd.dat_r), r_flag.eq(flag_rd.dat_r)] \
            + [r.eq(o) for r, o in zip(r_a + r_b, opa + opb)]
        # with shared rounders the operands hold in the clocks the
        # sequencer leaves empty after a rounding slot, so that the lanes'
        # stage A keeps each lane's product and accumulator (rnd_p,
        # rnd_acc) for the rounder, which takes one lane per clock
        self.sync += If(s1_valid, *operand_regs) if shared_round else operand_regs
        rnd_p = [Signal((2 * W, True), name=f"rnd_p{i}") for i in range(vw)] if shared_round else []
        rnd_acc = [Signal((AW, True), name=f"rnd_acc{i}") for i in range(vw)] if shared_round else []
        for i in range(vw):
            self.specials += Instance(module_name(W, AW, dsp_shift, shared_round), name=f"lane{i}",
                i_clk=ClockSignal(), i_op=r_op[i], i_a=r_a[i], i_b=r_b[i], i_mb=r_mb[i],
                i_acc_in=r_acc[AW * i:AW * (i + 1)], i_flag_in=r_flag[i], i_fwd=r_fwd,
                i_sh=r_sh, i_rlo=r_rlo, i_rhi=r_rhi, i_rz=r_rz, o_result=res[i], o_acc_out=acc_out[i], o_flag_out=flag_out[i],
                **({"o_rnd_p": rnd_p[i], "o_rnd_acc": rnd_acc[i]} if shared_round else {}))
        if shared_round:
            self._shared_rounders(s1_valid & op_in(s1["op"], isa.ROUND_OPS), r_op[0] == isa.OP["accr"],
                                  (r_rz, r_rhi, r_rlo), rnd_p, rnd_acc, round_fire, round_data, W, AW, round_share)

    def _round_writeback(self, s2, wb_result, res_vec, op_in, W, vw):
        """The write-back with shared rounders (``SoCConfig.pcore_round_share``
        = S > 1): a rounding instruction (ROUND_OPS) writes nothing from the
        lanes when it reaches ``s2``; its fields are kept, and S + 1 clocks
        later (``round_fire``) it writes the rounders' results
        (``round_data``).  Nothing else writes back in that clock: the
        sequencer issues nothing in the S + 1 clocks after a rounding slot,
        so the next instruction reaches ``s2`` a clock after it.  Returns the
        fields written, the data, the result write's enable, the fire
        signal and the rounders' data (driven by ``_shared_rounders``)."""
        keys = ("dst_kind", "dst_reg", "dst_addr", "tid")
        # ``fire_next``: the clock before; the select itself is a register
        # of its own for the fields and one per lane's 16 data bits (kept
        # apart by KEEP_REGISTERS): one register for all of them, some 150
        # loads, was a PCORE's critical path out of context (64.8 MHz, 8.3
        # ns of routing on the one net)
        fire_next = Signal(name="round_fire_next")
        fire = Signal(name="round_fire")
        fire_data = [Signal(name=f"round_fire_data{i}") for i in range(vw)]
        data = Signal(W * vw, name="round_data")
        rounding = Signal(name="wb_rounding")
        kept = {k: Signal(len(s2[k]), name=f"round_wb_{k}") for k in keys}
        wbv = {k: Signal(len(s2[k]), name=f"wb_{k}") for k in keys}
        wb_data = Signal(W * vw, name="wb_data")
        ok = Signal(name="wb_data_ok")
        self.comb += [
            rounding.eq(s2["valid"] & op_in(s2["op"], isa.ROUND_OPS)),
            [wbv[k].eq(Mux(fire, kept[k], s2[k])) for k in keys],
            [wb_data[W * i:W * (i + 1)].eq(Mux(f, data[W * i:W * (i + 1)], res_vec[W * i:W * (i + 1)]))
             for i, f in enumerate(fire_data)],
            ok.eq((wb_result & ~rounding) | fire),
        ]
        self.sync += [If(rounding, [kept[k].eq(s2[k]) for k in keys]),
                      fire.eq(fire_next), [f.eq(fire_next) for f in fire_data]]
        return wbv, wb_data, ok, fire_next, data

    def _shared_rounders(self, start, accr, controls, rnd_p, rnd_acc, fire, data, W, AW, share):
        """vw / ``share`` rounders (``lane.pcore_rounder``), each serving
        ``share`` lanes one per clock.  ``start``: a rounding instruction
        enters the operand registers (``accr``: it is accr, read there);
        a clock later its lanes' stage A hold their product and accumulator
        (``rnd_p``, ``rnd_acc``) for ``share`` + 2 clocks: the sequencer
        issues nothing meanwhile, and the operands hold.  Rounder g takes
        its ``share`` lanes' products and accumulators into a chain of
        registers of its own in the clock ``turn[0]`` has bit 0 (lane
        g*share + k into link k), and the chain moves them one link down
        per clock, so its first link (``round{g}_p``, ``round{g}_acc``)
        holds lane g*share + k in the clock after ``turn[0]`` has bit k;
        the rounder takes the first link into its first stage, with
        the instruction's controls ``controls`` (rz, rhi, rlo: kept, the next
        instruction's reach the operand registers meanwhile); its results
        arrive three clocks after that (``turn[4]``), are kept
        (``round{g}_lane{k}``), and the last one goes out with them when the
        instruction writes back (``fire``, ``_round_writeback``).  (Without
        the gathering registers the lanes' multiplexer, the operand's
        select and its move in one clock were a PCORE's critical path out
        of context, 72.7 MHz, 11.9 of its 13.8 ns routing.  A chain rather
        than a multiplexer of the lanes into one register: each link is
        loaded from its own lane and from its neighbour, where the
        multiplexer brought every lane's 64 bits to one place under a
        select with 64 loads per rounder: the rounders' nets went from
        7.5% to 4.1% of router2's overused wires in a ULX3S 4 x 8 x 8
        build, docs/fpga_history.md "Shared rounding shifters".)"""
        first = Signal(name="round_start")
        turn = [Signal(share, name=f"round_turn{n}") for n in range(5)]
        kept_ctl = [Signal(len(c), name=f"round_{n}") for c, n in zip(controls, ("rz", "rhi", "rlo"))]
        from_acc = Signal(name="round_from_acc")
        self.sync += [
            first.eq(start),
            If(first, [k.eq(c) for k, c in zip(kept_ctl, controls)], from_acc.eq(accr)),
            turn[0].eq(Cat(first, turn[0][:-1])), [turn[n + 1].eq(turn[n]) for n in range(4)],
        ]
        load = turn[0][0]
        self.comb += fire.eq(turn[3][share - 1])       # (the write-back's select a clock later)
        rz, rhi, rlo = kept_ctl
        for g in range(len(rnd_p) // share):
            lanes = slice(g * share, (g + 1) * share)
            p = Signal((2 * W, True), name=f"round{g}_p")
            acc = Signal((AW, True), name=f"round{g}_acc")
            chain_p = [p] + [Signal((2 * W, True), name=f"round{g}_p{k}") for k in range(1, share)]
            chain_acc = [acc] + [Signal((AW, True), name=f"round{g}_acc{k}") for k in range(1, share)]
            result = Signal((W, True), name=f"round{g}_result")
            kept = [Signal(W, name=f"round{g}_lane{k}") for k in range(share - 1)]
            for chain, lane_out in ((chain_p, rnd_p[lanes]), (chain_acc, rnd_acc[lanes])):
                self.sync += If(load, [link.eq(out) for link, out in zip(chain, lane_out)]).Else(
                    [link.eq(below) for link, below in zip(chain, chain[1:])])
            self.sync += [If(turn[4][k], h.eq(result)) for k, h in enumerate(kept)]
            self.comb += data[W * share * g:W * share * (g + 1)].eq(Cat(*kept, result))
            self.specials += Instance(rounder_name(W, AW), name=f"rounder{g}", i_clk=ClockSignal(), i_p=p,
                                      i_acc=acc, i_from_acc=from_acc, i_rz=rz, i_rhi=rhi, i_rlo=rlo,
                                      o_result=result)
