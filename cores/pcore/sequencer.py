"""The PCORE array sequencer: one instruction stream for all PCOREs.

Kernels run in lockstep, so the array has a single sequencer holding the
instruction memory, the program counter, the hardware loop stack and the
address/stride registers.  It executes scalar instructions itself (one clock
each) and issues every vector instruction once per thread slot, one slot per
clock, to all PCOREs at once (see docs/pcore.md, "Pipeline").

The issue bundle (``iss_*``) is registered: PCOREs use it as their stage 0.
"""

from migen import *

from tensorsoc.spec import pcore_isa as isa


def _bits(n):
    return max(1, (n - 1).bit_length())


class PCORESequencer(Module):
    PREDECODE_BITS = 3       # instruction memory bits per word beyond the 32 of the instruction

    def __init__(self, np, nt, vw, imem_words, round_share=1):
        assert imem_words <= (1 << isa.LOOP_END_BITS)
        self.imem_words = imem_words
        # round_share > 1 (SoCConfig.pcore_round_share): the PCOREs' lanes
        # share their rounding shifters, and each slot of a ROUND_OPS
        # instruction takes isa.round_slot_clocks(round_share) clocks
        # (``_round_hold``)
        self.round_share = round_share
        if round_share > 1:
            self.PREDECODE_BITS = PCORESequencer.PREDECODE_BITS + 1
        max_slots = max(nt, isa.MIN_SLOTS)
        tid_bits = _bits(max_slots)

        # Start interface.
        self.start_valid = Signal()
        self.start_ready = Signal()
        self.start_entry = Signal(16)
        self.start_np = Signal(max=np + 1)        # 1..np
        self.start_nt = Signal(max=nt + 1)        # 1..nt
        self.start_process = Signal()
        # Status.
        self.running = Signal()                   # a kernel runs (incl. pipeline drain)
        self.process = Signal()                   # its process space
        self.np_active = Signal(max=np + 1, reset=np)
        self.nt_active = Signal(max=nt + 1, reset=nt)
        self.cycles = Signal(32)                  # clocks of the current/last kernel
        self.vops = Signal(32)                    # vector ops issued to active threads
        self.macs = Signal(32)                    # MAC lane-operations over the array
        # Instruction memory write port (MCORE or TensorEngine).
        self.imem_we = Signal()
        self.imem_adr = Signal(max=imem_words)
        self.imem_dat_w = Signal(32)
        # Issue bundle (registered).
        self.iss_valid = Signal()
        self.iss_tid = Signal(tid_bits)
        self.iss_thread_en = Signal()             # slot holds an active thread
        self.iss_op = Signal(isa.OP_BITS)
        self.iss_fwd = Signal()                   # the lanes take the accumulator from the bypass
        self.iss_shift = Signal(isa.SHIFT_BITS)
        for n in ("dst", "a", "b"):
            setattr(self, f"iss_{n}_kind", Signal(isa.KIND_BITS))
            setattr(self, f"iss_{n}_reg", Signal(3))
            setattr(self, f"iss_{n}_addr", Signal(isa.AREG_BITS))

        # # #

        # The instruction memory keeps PREDECODE_BITS more per word, decoded
        # from the written word: the accumulator-chain classes of a vector
        # instruction come out of the block RAM as single bits, so that the
        # issue decisions (slot count, bypass, stall) add no decoding after
        # the memory's read (a DP16KD is 36 bits wide: no more block RAM).
        # (the rounding class as a default argument, not read from the
        # enclosing scope: a closure's new cell would rename this
        # function's signals, Migen's tracer on Python 3.11)
        def classes(word, more=(isa.ROUND_OPS,) if round_share > 1 else ()):
            op = word[26:31]
            vec = ~word[31]
            return [vec & reduce(or_, [op == isa.OP[n] for n in sorted(names)])
                    for names in (isa.CHAIN_OPS, isa.FORWARD_OPS, isa.ACC_READ_OPS) + more]
        self.imem = Memory(32 + self.PREDECODE_BITS, imem_words, name="pcore_imem")
        fetch = self.imem.get_port(mode=READ_FIRST)
        wport = self.imem.get_port(write_capable=True)
        self.specials += self.imem, fetch, wport
        self.comb += [wport.we.eq(self.imem_we), wport.adr.eq(self.imem_adr),
                      wport.dat_w.eq(Cat(self.imem_dat_w, *classes(self.imem_dat_w)))]
        # A second copy of the bits the issue decision reads (scalar, its
        # operation, the predecoded classes), written and read with the
        # first, into the instruction register's ``ir_ctl`` (below).  On the
        # ULX3S the path from the one memory's output through the decision
        # into the loop counters was the accel critical path (18.15 ns,
        # 4.73 of them the memory's net; docs/fpga.md, "The sequencer's
        # decision from its own block RAM").
        self.imem_ctl = Memory(4 + self.PREDECODE_BITS, imem_words, name="pcore_imem_ctl")
        fetch_ctl = self.imem_ctl.get_port(mode=READ_FIRST)
        wport_ctl = self.imem_ctl.get_port(write_capable=True)
        self.specials += self.imem_ctl, fetch_ctl, wport_ctl
        self.comb += [wport_ctl.we.eq(self.imem_we), wport_ctl.adr.eq(self.imem_adr),
                      wport_ctl.dat_w.eq(Cat(self.imem_dat_w[28:32], *classes(self.imem_dat_w)))]

        IDLE, FETCH, RUN, DRAIN = 0, 1, 2, 3
        state = Signal(2)
        drain = Signal(max=isa.MIN_SLOTS + 1)
        pc = Signal(max=imem_words)               # the address of the instruction in ir
        pc_next = Signal(max=imem_words)
        slot = Signal(tid_bits)
        last_slot = Signal(tid_bits)
        areg = Array(Signal(isa.AREG_BITS, name=f"a{i}") for i in range(isa.NUM_AREGS))
        sreg = Array(Signal(isa.AREG_BITS, name=f"s{i}") for i in range(isa.NUM_AREGS))
        l_start = Array(Signal(max=imem_words, name=f"loop_start{i}") for i in range(isa.LOOP_DEPTH))
        l_end = Array(Signal(isa.LOOP_END_BITS, name=f"loop_end{i}") for i in range(isa.LOOP_DEPTH))
        l_cnt = Array(Signal(isa.LOOP_COUNT_BITS, name=f"loop_count{i}") for i in range(isa.LOOP_DEPTH))
        sp = Signal(max=isa.LOOP_DEPTH + 1)
        # The top level's and the one below's indices (sp - 1 and sp - 2,
        # modulo LOOP_DEPTH) as registers, and per level flags of its count
        # (above 1, 2, 3) and of a one-instruction body, set when the level
        # is written: the read-ahead address reads them through one
        # multiplexer, with no subtraction or compare between (the ULX3S's
        # accel critical path ran from ``sp`` through ``sp - 1``, the count's
        # compares and the read-ahead address into the instruction memory,
        # 18.50 ns, 14.82 of them routing; docs/fpga.md, "The loop stack's
        # flags as registers").
        top = Signal(max=isa.LOOP_DEPTH, reset=isa.LOOP_DEPTH - 1)
        below = Signal(max=isa.LOOP_DEPTH, reset=isa.LOOP_DEPTH - 2)
        cnt_gt = {k: Array(Signal(name=f"loop_count{i}_gt{k}") for i in range(isa.LOOP_DEPTH)) for k in (1, 2, 3)}
        one_body = Array(Signal(name=f"loop_one{i}") for i in range(isa.LOOP_DEPTH))
        dec = Signal()                            # the top loop's count is one less than l_cnt holds
        dec_level = Signal(max=isa.LOOP_DEPTH)
        # The top level's and the one below's start, end and flags, copied
        # into registers of their own (``loop_top_*``, ``loop_below_*``) as
        # levels are pushed, popped and decremented: the read-ahead address
        # reads flip-flops,
        # not a multiplexer of the levels behind ``top`` (at 64.29 MHz with
        # each lane its own op register, the ULX3S's accel critical path ran
        # from ``top`` through ``one_body[top]`` and the count flags into
        # the instruction memory's address, 15.76 ns, 12.23 routing;
        # docs/fpga_history.md, "The loop stack's top as registers").  ``below2``
        # indexes the level that becomes ``below`` at a pop.
        below2 = Signal(max=isa.LOOP_DEPTH, reset=isa.LOOP_DEPTH - 3)

        def level_regs(name):
            return {"start": Signal(max=imem_words, name=f"{name}_start"),
                    "end": Signal(isa.LOOP_END_BITS, name=f"{name}_end"),
                    "one": Signal(name=f"{name}_one"),
                    **{k: Signal(name=f"{name}_gt{k}") for k in (1, 2, 3)}}
        tl, bl = level_regs("loop_top"), level_regs("loop_below")

        def level_of(i):
            """The stored fields of level ``i`` (an index signal)."""
            return {"start": l_start[i], "end": l_end[i], "one": one_body[i],
                    **{k: cnt_gt[k][i] for k in (1, 2, 3)}}

        # The instruction register.  The issue decision reads flip-flops,
        # not the instruction memory's output (5.83 ns after the clock on
        # the ECP5, unregistered): the memory reads ahead the instruction
        # that follows the one in ``ir`` (``pc_adv``), and ``ir`` takes it
        # when the sequencer advances.  The next address is chosen among
        # the follower of the follower (``adv_adv``, after an advance), the
        # instruction after a LOOP (``push_adv``) and the follower itself
        # (no advance), each computed from flip-flops.  A kernel starts with
        # one clock of fetch (FETCH), not counted in CYCLES
        # (docs/pcore.md, "Pipeline"; docs/fpga.md, "The sequencer's
        # decision from its own block RAM", step 3).
        ir = Signal(32)
        ir_ctl = Signal(len(fetch_ctl.dat_r))
        take = Signal()                           # ir takes the memory's output
        self.sync += If(take, ir.eq(fetch.dat_r[:32]), ir_ctl.eq(fetch_ctl.dat_r))
        ins = ir
        ctl = ir_ctl
        chain_op, forward_op, reads_acc = ctl[4], ctl[5], ctl[6]
        is_scalar, sop = ctl[3], ctl[0:3]         # ins[31], ins[28:31]
        vop, shift = ins[26:31], ins[0:5]
        fields = {"dst": ins[19:26], "a": ins[12:19], "b": ins[5:12]}
        ar, ar2, imm, lend = ins[25:28], ins[22:25], ins[0:16], ins[16:28]

        # Accumulator chains (docs/pcore.md): with at most CHAIN_MAX_NT
        # threads an accumulator-only instruction takes CHAIN_SLOTS clocks;
        # the next one, when it follows at once and is one of FORWARD_OPS,
        # takes the bypass; another reader of the accumulator stalls until
        # the chained instruction's write-back (``wait`` clocks).
        few = Signal(reset=int(nt <= isa.CHAIN_MAX_NT))   # nt_active <= CHAIN_MAX_NT
        short = Signal()                          # this instruction is chained
        chain = Signal()                          # the previous clock ended a chained instruction
        wait = Signal(max=isa.CHAIN_WAIT + 1)
        forward = Signal()
        fwd_hold = Signal()
        stall = Signal()
        last = Signal()                           # this slot is the instruction's last

        run = Signal()
        issue = Signal()
        advance = Signal()
        push = Signal()                           # a LOOP: the next instruction, pushing a loop
        at_end = Signal()
        repeat = Signal()
        pc_adv = Signal(max=imem_words)
        pc1 = Signal(max=imem_words)
        again = Signal()                          # the top loop's count (less a pending decrement) is above 1
        fetch_adr = Signal(max=imem_words)
        free = self._round_hold(state == RUN, issue, ctl[7]) if round_share > 1 else None
        self.comb += [
            run.eq(state == RUN) if free is None else run.eq((state == RUN) & free),
            self.running.eq(state != IDLE),
            self.start_ready.eq(state == IDLE),
            fetch.adr.eq(fetch_adr),
            fetch_ctl.adr.eq(fetch_adr),
            short.eq(few & chain_op),
            forward.eq(chain & forward_op),
            stall.eq((slot == 0) & (wait != 0) & reads_acc & ~forward),
            last.eq(Mux(short, slot == isa.CHAIN_SLOTS - 1, slot == last_slot)),
            issue.eq(run & ~is_scalar & ~stall),
            at_end.eq((sp != 0) & (pc == tl["end"])),
            again.eq(Mux(dec, tl[2], tl[1])),
            repeat.eq(at_end & again),
            pc1.eq(pc + 1),
            If(repeat, pc_adv.eq(tl["start"])).Else(pc_adv.eq(pc1)),
            pc_next.eq(pc),
            advance.eq(0),
            push.eq(0),
            If(state == IDLE,
                If(self.start_valid, pc_next.eq(self.start_entry))
            ).Elif(issue,
                If(last, advance.eq(1), pc_next.eq(pc_adv))
            ).Elif(run & is_scalar,
                Case(sop, {
                    isa.SOP["halt"]: [],
                    isa.SOP["loop"]: [push.eq(1), pc_next.eq(pc1)],
                    "default": [advance.eq(1), pc_next.eq(pc_adv)],
                })
            ),
        ]
        self.sync += pc.eq(pc_next)

        # The read-ahead address.  ``pc_adv`` is the follower of the
        # instruction in ``ir`` (a LOOP is never the last instruction of a
        # loop body, so its follower, pc + 1, is pc_adv too: the assembler's
        # loops nest, and the ISS refuses other programs).  After an advance
        # the memory must read the follower's follower, from the state the
        # advance leaves: the loop repeats (same level, one count less), ends
        # (the level below), or goes on (same level); after a LOOP, from the
        # loop it pushes.
        pc2 = Signal(max=imem_words)
        adv_adv = Signal(max=imem_words)
        push_adv = Signal(max=imem_words)
        # A LOOP's body of one instruction, and its count above 1: the read
        # ahead after the push and the level's flags use the same compares.
        push_one = Signal()
        push_gt = {k: Signal(name=f"push_gt{k}") for k in cnt_gt}
        start_t, end_t = tl["start"], tl["end"]
        self.comb += [
            pc2.eq(pc + 2),
            If(repeat,
                # back to the loop's start: again at its end only with a one-instruction body
                If(tl["one"] & Mux(dec, tl[3], tl[2]),
                    adv_adv.eq(start_t)).Else(adv_adv.eq(start_t + 1))
            ).Elif(at_end,
                # the loop ends: pc + 1 in the loop below, if any (no decrement pending there)
                If((sp > 1) & (pc1 == bl["end"]) & bl[1],
                    adv_adv.eq(bl["start"])).Else(adv_adv.eq(pc2))
            ).Else(
                If((sp != 0) & (pc1 == end_t) & again,
                    adv_adv.eq(start_t)).Else(adv_adv.eq(pc2))
            ),
            # LOOP: its body starts at pc + 1
            push_one.eq(pc1 == lend),
            *[push_gt[k].eq(imm > k) for k in cnt_gt],
            If(push_one & push_gt[1], push_adv.eq(pc1)).Else(push_adv.eq(pc2)),
            If(state == IDLE,
                fetch_adr.eq(self.start_entry)
            ).Elif(state == FETCH,
                fetch_adr.eq(pc1)
            ).Elif(advance,
                fetch_adr.eq(adv_adv)
            ).Elif(push,
                fetch_adr.eq(push_adv)
            ).Else(
                fetch_adr.eq(pc_adv)
            ),
            take.eq((state == FETCH) | advance | push),
        ]

        # Loop stack bookkeeping on advance; LOOP pushes.  The decision to
        # advance (the stall, the last slot) settles late in the clock, so
        # the top loop's count is decremented a clock later, from a
        # flip-flop (``dec``, ``dec_level``), and ``repeat`` reads it less
        # the pending decrement.  No LOOP writes that level in that clock:
        # a repeat does not pop it.  (The same for the address registers'
        # post-increments below; docs/fpga.md, "The sequencer's decision
        # from its own block RAM".)
        loop_op = Signal()
        pop = Signal()
        self.comb += [loop_op.eq(run & is_scalar & (sop == isa.SOP["loop"])),
                      pop.eq(advance & at_end & ~repeat)]
        # the decremented level's count flags (the top level's: a decrement
        # lands the clock after a repeat, which neither pushes nor pops)
        dec_gt = {k: Signal(name=f"dec_gt{k}") for k in cnt_gt}
        self.comb += [dec_gt[k].eq(l_cnt[dec_level] > k + 1) for k in cnt_gt]
        pushed = {"start": pc1, "end": lend, "one": push_one, **push_gt}
        self.sync += [
            dec.eq(advance & repeat),
            dec_level.eq(top),
            If(dec, l_cnt[dec_level].eq(l_cnt[dec_level] - 1),
                *[cnt_gt[k][dec_level].eq(dec_gt[k]) for k in cnt_gt]),
            If(pop, sp.eq(sp - 1), top.eq(top - 1), below.eq(below - 1), below2.eq(below2 - 1)),
            If(loop_op,
                l_start[sp].eq(pc1), l_end[sp].eq(lend), l_cnt[sp].eq(imm), sp.eq(sp + 1),
                *[cnt_gt[k][sp].eq(push_gt[k]) for k in cnt_gt], one_body[sp].eq(push_one),
                top.eq(top + 1), below.eq(below + 1), below2.eq(below2 + 1),
            ),
            # the copies: a push moves the top below (with a decrement that
            # lands now), a pop moves the one below up and reads the next
            # lower level from the stack (a level that no longer changes)
            If(loop_op,
                *[tl[f].eq(v) for f, v in pushed.items()],
                *[bl[f].eq(tl[f]) for f in ("start", "end", "one")],
                *[bl[k].eq(Mux(dec, dec_gt[k], tl[k])) for k in cnt_gt],
            ).Elif(pop,
                *[tl[f].eq(bl[f]) for f in tl],
                *[bl[f].eq(v) for f, v in level_of(below2).items()],
            ).Elif(dec,
                *[tl[k].eq(dec_gt[k]) for k in cnt_gt],
            ),
        ]

        # Address registers: scalar writes, post-increments after the last
        # slot.  A post-increment is applied a clock later, from a flip-flop
        # (``inc``); meanwhile every reader takes the register's value with
        # it (``cur``: the register plus its stride while one is pending).
        cur = Array(Signal(isa.AREG_BITS, name=f"a{i}_cur") for i in range(isa.NUM_AREGS))
        for i in range(isa.NUM_AREGS):
            inc = Signal(name=f"inc{i}")
            self.comb += cur[i].eq(Mux(inc, areg[i] + sreg[i], areg[i]))
            self.sync += [
                inc.eq(issue & advance & reduce(or_, [f[0] & (f[1:4] == i) for f in fields.values()])),
                areg[i].eq(cur[i]),
                If(run & is_scalar & (ar == i),
                    Case(sop, {
                        isa.SOP["seta"]: areg[i].eq(imm),
                        isa.SOP["sets"]: sreg[i].eq(imm),
                        isa.SOP["adda"]: areg[i].eq(cur[i] + imm),
                        isa.SOP["mova"]: areg[i].eq(cur[ar2]),
                    })
                )
            ]

        # Slot counter, state machine, statistics.
        is_mac = (vop == isa.OP["mac"]) | (vop == isa.OP["macz"])
        thread_en = slot < self.nt_active
        # The statistics count a clock after the issue (from flip-flops);
        # the drain after HALT is longer than that, so a kernel's counts are
        # complete when it ends.
        count_vop = Signal()
        count_mac = Signal()
        self.sync += [
            count_vop.eq(issue & thread_en),
            count_mac.eq(issue & thread_en & is_mac),
            If(count_vop, self.vops.eq(self.vops + 1)),
            If(count_mac, self.macs.eq(self.macs + vw * self.np_active)),
        ]
        self.sync += [
            If(issue, If(last, slot.eq(0)).Else(slot.eq(slot + 1))),
            chain.eq(issue & last & short),
            If(issue & last & short, wait.eq(isa.CHAIN_WAIT)
            ).Elif(wait != 0, wait.eq(wait - 1)),
            If(issue & (slot == 0), fwd_hold.eq(forward)),
            If(state == IDLE,
                If(self.start_valid,
                    state.eq(FETCH),
                    self.process.eq(self.start_process),
                    self.np_active.eq(self.start_np),
                    self.nt_active.eq(self.start_nt),
                    few.eq(self.start_nt <= isa.CHAIN_MAX_NT),
                    If(self.start_nt < isa.MIN_SLOTS, last_slot.eq(isa.MIN_SLOTS - 1)
                    ).Else(last_slot.eq(self.start_nt - 1)),
                    slot.eq(0), sp.eq(0), top.eq(isa.LOOP_DEPTH - 1), below.eq(isa.LOOP_DEPTH - 2),
                    below2.eq(isa.LOOP_DEPTH - 3),
                    self.cycles.eq(0), self.vops.eq(0), self.macs.eq(0),
                )
            ).Elif(state == FETCH,
                state.eq(RUN),
            ).Elif(run,
                self.cycles.eq(self.cycles + 1),
                If(is_scalar & (sop == isa.SOP["halt"]), state.eq(DRAIN), drain.eq(isa.MIN_SLOTS - 1)),
            ).Elif(state == DRAIN,
                self.cycles.eq(self.cycles + 1),
                drain.eq(drain - 1),
                If(drain == 0, state.eq(IDLE)),
            ),
        ]

        # Registered issue bundle.
        self.sync += [
            self.iss_valid.eq(issue),
            self.iss_tid.eq(slot),
            self.iss_thread_en.eq(thread_en),
            self.iss_op.eq(vop),
            self.iss_fwd.eq(Mux(slot == 0, forward, fwd_hold)),
            self.iss_shift.eq(shift),
        ]
        for n, f in fields.items():
            self.sync += [
                getattr(self, f"iss_{n}_kind").eq(f[4:7]),
                getattr(self, f"iss_{n}_reg").eq(f[1:4]),
                getattr(self, f"iss_{n}_addr").eq(cur[f[1:4]]),
            ]

    def _round_hold(self, running, issue, round_op):
        """The clocks after each issued slot of a ROUND_OPS instruction in
        which nothing runs (all but the first of
        ``isa.round_slot_clocks(round_share)``): the PCOREs' shared
        rounders gather their lanes one per clock meanwhile, from the lanes'
        stage-A registers, which hold (``cores/pcore/pcore.py``,
        ``PCore._shared_rounders``); CYCLES counts them.  Returns the signal
        that no such clock is running."""
        clocks = isa.round_slot_clocks(self.round_share)
        hold = Signal(max=clocks, name="round_hold")
        free = Signal(name="round_free")
        self.comb += free.eq(hold == 0)
        self.sync += [
            If(issue & round_op, hold.eq(clocks - 1)
            ).Elif(hold != 0, hold.eq(hold - 1)),
            If(running & ~free, self.cycles.eq(self.cycles + 1)),
        ]
        return free

    def read_port(self):
        """An extra read port on the instruction memory (bus read-back: the
        instruction is ``dat_r[:32]``, the predecoded bits above it)."""
        port = self.imem.get_port(mode=READ_FIRST)
        self.specials += port
        return port
