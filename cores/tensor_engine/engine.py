"""``TensorEngineCore``: decoder, address generators, reader and writer.

Plain Migen; ``cores/tensor_engine/core.py`` wraps it with the CSRs the MCORE
uses.  docs/tensor_engine.md describes the ports and the micro-architecture.

Data path of a TRANSFER::

    src AddressGenerator -> reader (word caches) -> convert -> SPU -> FIFO
        -> writer (write-combining buffers) <- dst AddressGenerator

Instructions run in queue order.  EXE starts a kernel and the engine moves on:
a later PCORE access to the kernel's process space waits on the array's
``te.rd_ready``/``te.wr_ready``; the other process space stays accessible.
With one process space (``SoCConfig.pcore_processes = 1``) every PCORE access
waits for the running kernel, and an instruction of process 1 sets DECODE.
"""

from functools import reduce
from operator import add, or_

from migen import *
from migen.genlib.fifo import SyncFIFO

from litex.soc.interconnect import wishbone

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.cores.pcore.pcore import TEPort
from tensorsoc.cores.tensor_engine.agen import AddressGenerator, SideRegs, if_enabled
from tensorsoc.cores.tensor_engine.fifo import HeadFIFO
from tensorsoc.cores.tensor_engine.ports import WishboneWordPort, ScratchPad, scratch_word_bytes
from tensorsoc.cores.tensor_engine.vector import NoVectorPath, VectorPath, cap_of, eligible
from tensorsoc.cores.tensor_engine.trace import ActivityTrace
from tensorsoc.cores.tensor_engine.spu import LATENCY as SPU_LATENCY, StreamProcessor

ERR = {name: 1 << bit for name, (bit, _) in isa.ERRORS.items()}
OP = {name: v for name, (v, _) in isa.OPCODES.items()}
SPACE = {name: v[0] for name, v in isa.SPACES.items()}
DT = {name: v[0] for name, v in isa.DTYPES.items()}


def _log2(n):
    assert n > 0 and n & (n - 1) == 0, f"{n} is not a power of 2"
    return n.bit_length() - 1


def _f(table, name):
    for f in table:
        if f.name == name:
            return f
    raise KeyError(name)


def field(word, table, name):
    """The bits of field ``name`` (spec/tensor_isa.py) in a 32-bit word."""
    f = _f(table, name)
    return word[f.lsb:f.lsb + f.width]


def _word(table, name):
    return _f(table, name).word


class PCOREMap:
    """Linear PCORE element addresses -> (pcore, thread, vector word, lane)."""

    def __init__(self, config):
        self.lvw = _log2(config.vw)
        self.lpw = _log2(config.pcore_private_words)
        self.lsw = _log2(config.pcore_shared_words)
        self.lnt = _log2(config.nt)
        self.lnp = _log2(config.np)
        self.private_words = config.np * config.nt * config.pcore_private_words
        self.shared_words = config.np * config.pcore_shared_words
        self.addr_bits = max(config.pcore_private_words // config.vw,
                             config.pcore_shared_words // config.vw).bit_length()

    def command(self, te, channel, shared, tag):
        """Drive shared/pcore/thread/addr of te channel ``channel`` ("rd" or
        "wr") from ``tag`` = element address >> log2(VW)."""
        pv = self.lpw - self.lvw
        sv = self.lsw - self.lvw
        sig = {n: getattr(te, f"{channel}_{n}") for n in ("shared", "addr", "thread", "pcore")}
        return [
            sig["shared"].eq(shared),
            If(shared,
                sig["addr"].eq(tag[:sv]),
                sig["thread"].eq(0),
                sig["pcore"].eq(tag[sv:sv + self.lnp] if self.lnp else 0),
            ).Else(
                sig["addr"].eq(tag[:pv]),
                sig["thread"].eq(tag[pv:pv + self.lnt] if self.lnt else 0),
                sig["pcore"].eq(tag[pv + self.lnt:pv + self.lnt + self.lnp] if self.lnp else 0),
            ),
        ]


def esize(sd):
    """The size of side ``sd``'s element in address units: 2 for INT16 in
    DDR and the scratch-pad (byte addresses), else 1 (the PCORE memories
    and the SPU tables hold an element per address)."""
    return Mux((sd.dtype == DT["INT16"]) & (sd.space <= SPACE["SCRATCH"]), 2, 1)


def below_const(x, c):
    """``x < c`` for an unsigned signal ``x`` and an integer constant ``c``,
    as logic on the bits of ``x`` (from the top: where ``c`` has a 1, ``x``
    below it there or equal and below further down; where a 0, equal and
    below further down): no subtraction on a carry chain, which a compare
    with a constant would otherwise take."""
    w = len(x)
    if c <= 0:
        return C(0, 1)
    if c >= 1 << w:
        return C(1, 1)
    k = (c & -c).bit_length() - 1          # c's trailing zeros: x's low k bits do not matter
    r = C(0, 1)
    for i in range(k, w):
        r = (~x[i] | r) if (c >> i) & 1 else (~x[i] & r)
    return r


class RangeCheck(Module):
    """``ok``: the element of side ``sd`` at address ``addr`` lies inside
    the memory of the side's space (DDR ``ddr_base .. ddr_base+ddr_size-1``,
    the scratch-pad, the PCORE memories' element addresses, the SPU
    tables); else the transfer flags RANGE.  Every bound is a constant, so
    the check is compares of ``addr`` with constants (``below_const``), no
    carry chain: the generators check each candidate of their next address
    in parallel and keep the result as a register
    (``AddressGenerator(range_of=...)``).  An INT16 element (two address
    units in DDR and the scratch-pad) must fit whole: its last unit is
    inside too."""

    def __init__(self, sd, addr, ddr_base, ddr_size, scratch_size, private_words, shared_words):
        self.ok = Signal()

        # # #

        assert ddr_base + ddr_size <= 1 << 32
        two = Signal()
        ddr = Signal()
        scr = Signal()
        self.comb += [
            two.eq(esize(sd) == 2),
            # ddr_base <= addr <= ddr_base + ddr_size - esize
            ddr.eq(~below_const(addr, ddr_base) & below_const(addr, ddr_base + ddr_size)
                   & ~(two & (addr == ddr_base + ddr_size - 1))),
            scr.eq(below_const(addr, scratch_size) & ~(two & (addr == scratch_size - 1))),
            Case(sd.space, {
                SPACE["DDR"]: self.ok.eq(ddr),
                SPACE["SCRATCH"]: self.ok.eq(scr),
                SPACE["PCORE_PRIVATE"]: self.ok.eq(below_const(addr, private_words)),
                SPACE["PCORE_SHARED"]: self.ok.eq(below_const(addr, shared_words)),
                "default": self.ok.eq(below_const(addr, isa.SPU_PROGRAMS * isa.SPU_LOOKUP_SIZE)),
            })]


def _refuse_process1(config, w, bad, by_opcode):
    """The decoder's dispatch ``by_opcode`` of a header word ``w``; with one
    process space (SoCConfig.pcore_processes = 1) an instruction of process 1
    is refused (DECODE, skipped) whatever it is.  (A function of its own: a
    closure in the engine's constructor would make its signals' variables
    closure cells, which Migen's naming does not see.)"""
    if config.pcore_processes > 1:
        return by_opcode
    return If(field(w, isa.HEADER_FIELDS, "process") != 0, NextValue(bad, 1), NextState("SKIP")).Else(by_opcode)


class TensorEngineCore(Module):
    """The TensorEngine.

    Queue: ``q_we``/``q_data`` push one instruction word (ignored when
    ``q_space`` is 0).  ``idle``: queue empty and nothing executing.
    ``errors``: sticky ``isa.ERRORS`` bits, ``errors_clear`` clears them.
    CALLBACK tags: ``cb_valid``/``cb_tag``/``cb_pop``.  DDR: Wishbone master
    ``bus`` over bus addresses ``ddr_base .. ddr_base+ddr_size-1``.  PCORE
    array: ``te`` (master side of ``tensorsoc.cores.pcore.pcore.TEPort``: read and
    write channels),
    ``start_*``, ``busy``.
    """

    def __init__(self, config, ddr_base=0, ddr_size=1 << 20, queue_depth=None, cb_depth=16, fifo_depth=8,
                 trace_depth=None):
        vw = config.vw
        levels = config.te_levels      # loop levels of the source side (the decoder refuses more: DECODE)
        dst_levels = config.dst_levels  # ... of the destination side (SoCConfig.te_dst_levels; te_levels by default)
        pm = PCOREMap(config)
        self.config = config
        # Queue (``config.te_queue_depth`` words unless ``queue_depth``).
        queue_depth = queue_depth or config.te_queue_depth
        self.q_we = Signal()
        self.q_data = Signal(32)
        self.q_space = Signal(max=queue_depth + 1)
        self.idle = Signal()
        # Status.
        self.errors = Signal(len(isa.ERRORS))
        self.errors_clear = Signal()
        self.cb_valid = Signal()
        self.cb_tag = Signal(32)
        self.cb_pop = Signal()
        self.log_on = Signal()
        self.xfer_active = Signal()       # a transfer is executing (trace)
        self.xfer_vector = Signal()       # ... on the vector path
        # Activity trace (LOG_ON): the next 32-bit word of the buffer (0: empty),
        # trace_pop takes it; trace_level records buffered.  Records:
        # ``config.te_trace_depth`` unless ``trace_depth`` (0: no trace).
        trace_depth = config.te_trace_depth if trace_depth is None else trace_depth
        self.trace_word = Signal(32)
        self.trace_pop = Signal()
        self.trace_level = Signal(max=trace_depth + 2)
        self.trace_depth = trace_depth
        # PCORE array.
        self.te = te = TEPort(config.np, config.nt, vw, pm.addr_bits)
        self.start_valid = Signal()
        self.start_ready = Signal()
        self.start_func = Signal(32)
        self.start_process = Signal()
        self.busy = Signal(2)

        # # #

        # Memories.
        self.submodules.ddr = ddr = WishboneWordPort()
        self.bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
        self.submodules.scratch = scratch = ScratchPad(config.scratch_size,
                                                       scratch_word_bytes(vw, config.te_vector_path))
        self.submodules.spu = spu = StreamProcessor()

        # The instruction queue, with its head word in a register (fifo.py),
        # so that the decoder starts from flip-flops: the LUT-RAM read, the
        # queue's level and the decoder's state logic into the count
        # product's reset in one clock were the ULX3S's accel critical path
        # (51.14 MHz, 16.3 of its 19.6 ns routing).
        self.submodules.queue = q = HeadFIFO(32, queue_depth)
        self.submodules.cbq = cbq = SyncFIFO(32, cb_depth)
        self.comb += [
            q.we.eq(self.q_we), q.din.eq(self.q_data),
            self.q_space.eq(queue_depth - q.level),
            self.cb_valid.eq(cbq.readable), self.cb_tag.eq(cbq.dout), cbq.re.eq(self.cb_pop),
        ]
        err_set = Signal(len(self.errors))
        err_fsm = Signal(len(self.errors))      # decoder: DECODE, COUNT
        err_range = Signal(len(self.errors))    # an in-bound element outside its memory: RANGE
        self.comb += err_set.eq(err_fsm | err_range)
        self.sync += If(self.errors_clear, self.errors.eq(err_set)).Else(self.errors.eq(self.errors | err_set))

        # ------------------------------------------------------------------
        # Decoder and executor.  The decoder parses the words of one
        # instruction into the *decoded* registers (``d_*``, a second set of
        # sides and transfer attributes) while the previous transfer
        # executes from the *active* registers, which the address
        # generators, the data paths and the trace read.  A decoded TRANSFER
        # waits in READY until the executor is free, which copies it into
        # the active set in one clock (IDLE), starts the generators (LOAD)
        # and runs it (XFER): decode is hidden behind the previous transfer.
        # An EXE is parsed into a pending register which the executor issues
        # before it takes the next decoded transfer (the decoder goes on
        # parsing meanwhile); CALLBACK and LOG act only when the executor is
        # idle with nothing decoded or pending, so every instruction takes
        # effect in queue order.
        # ------------------------------------------------------------------
        w = q.dout
        rem = Signal(8)            # words of the instruction not yet consumed
        op = Signal(4)
        bad = Signal()             # malformed: DECODE at the end, not executed
        bad_count = Signal()       # a level count of 0: DECODE
        exe_func = Signal(32)
        exe_process = Signal()
        exe_pending = Signal()     # an EXE waits for the executor
        exe_set = Signal()
        exe_issued = Signal()
        cb_tag = Signal(32)
        log_next = Signal()        # LOG's on bit, waiting for the executor
        # Decoded (the next transfer) ...
        d_process = Signal()
        d_pad = Signal(16)
        d_proc_en = Signal()
        d_proc = Signal(2)
        d_scatter = Signal()
        d_vmode = Signal()
        d_bmode = Signal()
        d_sides = [SideRegs(dst_levels, config.te_ovl_bits), SideRegs(levels, config.te_ovl_bits)]
        d_dst, d_src = d_sides
        d_l0_count = [Signal(32), Signal(32)]     # level 0 as written, per side: the trace's Vn
        d_l0_step = [Signal(32), Signal(32)]
        # ... and active (the executing one).
        self.process = process = Signal()      # the source half's (te read channel, the trace)
        wr_process = Signal()                  # the destination half's (te write channel)
        pad = Signal(16)
        self.proc_en = proc_en = Signal()
        proc = Signal(2)
        self.scatter = scatter = Signal()
        vmode = Signal()          # the transfer runs on the vector path
        bmode = Signal()          # ... in broadcast mode (below)
        self.bmode = bmode
        sides = [SideRegs(dst_levels, config.te_ovl_bits), SideRegs(levels, config.te_ovl_bits)]
        self.dst, self.src = dst, src = sides
        l0_count = [Signal(32), Signal(32)]
        l0_step = [Signal(32), Signal(32)]

        sidesel = Signal()
        nlev = Signal(4)
        bmask = Signal(8)
        lvl = Signal(3)
        # The element counts' product: ``prod`` accumulates the side being
        # decoded; the destination's (decoded first) moves to ``prod_dst``
        # when the source's first word is written.  A transfer always
        # carries both sides, so CHECK compares the two.
        prod = Signal(32)
        ovf = Signal()
        prod_dst = Signal(32)
        ovf_dst = Signal()

        # Slot of the level being decoded: broadcast levels first (innermost).
        lvl_bc = Signal()
        below = Signal(8)
        nb_below = Signal(4)
        nbcast_all = Signal(4)
        slot = Signal(3)
        nlmask = Signal(8)
        self.comb += [
            nlmask.eq((1 << nlev) - 1),
            lvl_bc.eq((bmask >> lvl)[0]),
            below.eq(bmask & ((1 << lvl) - 1)),
            nb_below.eq(reduce(add, [below[k] for k in range(8)])),
            nbcast_all.eq(reduce(add, [(bmask & nlmask)[k] for k in range(8)])),
            slot.eq(Mux(lvl_bc, nb_below, nbcast_all + lvl - nb_below)),
        ]

        # The decoded side registers are written a clock after their word is
        # taken, from the write stage's registers (wr_*): in the ULX3S build
        # the queue's level, the decoder's state and slot decode and the
        # enables of the ~2,900 side-register flip-flops, spread over the
        # chip, were the accel clock's critical path in one clock (34.5 MHz,
        # 25 of its 29 ns routing).  Only CHECK reads the decoded sides, and
        # SETTLE before it lets the last word's write land.
        wr_w = Signal(32)
        wr_sidesel = Signal()
        wr_slot = Signal(3)
        wr_op = {k: Signal(name=f"wr_{k}") for k in (
            "side0", "side1", "side2", "side3", "side4") + tuple(f.name for f in isa.LEVEL_FIELDS)}
        wr_ovl_en = Signal()       # SIDE1: some level of the side is overlapped
        wr_nbcast = Signal(4)      # SIDE2: its broadcast slots
        wr_no_ovl = Signal()       # SIDE2: no overlap group (words 3-4 absent)
        wr_src_bc = Signal()       # count: a broadcast level of the source (count 1)
        wr_chk = Signal()          # count: the level is checked
        wr_ovl = Signal()          # count: the level is overlapped

        # The element count of each side (the product of its level counts,
        # broadcast levels of the source left out) is multiplied in 32 bits
        # (a count of 2**32 or more is COUNT: isa.ELEMENT_COUNT_LIMIT) in two
        # clocks after the count word is taken, from registers (mul_*).  The
        # first clock takes three 16 x 16 products, one MULT18X18D each and
        # nothing after them: of the product's halves P1:P0 and the count's
        # C1:C0, P0*C0, P1*C0 and P0*C1; with P1 and C1 both nonzero the
        # product reaches 2**32 (``mul_big``).  Otherwise one of P1*C0 and
        # P0*C1 is 0, so the second clock adds P0*C0 and their OR moved up 16
        # bits: one 48-bit sum, whose bits from 32 up are the overflow.  (A
        # 64-bit product as two 64 x 16 multiplies took eight MULT18X18D and
        # an 80-bit carry chain after them in the first clock: the ULX3S's
        # accel critical path at 59.15 MHz, 16.91 ns.)  A count word is a
        # level's first word and the step word always follows it, so the
        # next count word comes two clocks after at the earliest (its product
        # starts a clock later, when this one has landed) and ELIG three
        # (step, SETTLE): both see the product.  The sides are decoded one
        # after the other, so one product register feeds the multipliers,
        # with no select between the sides' in front of them.
        mul_go = Signal()
        mul_go2 = Signal()
        mul_cnt = Signal(32)
        mul_00 = Signal(32)
        mul_10 = Signal(32)
        mul_01 = Signal(32)
        mul_big = Signal()
        new_prod = Signal(49)
        self.comb += new_prod.eq(mul_00 + ((mul_10 | mul_01) << 16))
        self.sync += [
            mul_go2.eq(mul_go),
            If(mul_go,
                mul_00.eq(prod[:16] * mul_cnt[:16]),
                mul_10.eq(prod[16:] * mul_cnt[:16]),
                mul_01.eq(prod[:16] * mul_cnt[16:]),
                mul_big.eq((prod[16:] != 0) & (mul_cnt[16:] != 0))),
        ]
        chk_mask = Signal(8)
        ovl_mask = Signal(8)
        side_ok = Signal()
        sp = field(w, isa.SIDE_FIELDS, "space")
        dt = field(w, isa.SIDE_FIELDS, "dtype")
        nl = field(w, isa.SIDE_FIELDS, "nlevels")
        # (sidesel: 1 for the source, decoded second)
        nl_ok = (nl <= levels) if dst_levels == levels else (nl <= Mux(sidesel, levels, dst_levels))
        self.comb += side_ok.eq((sp <= SPACE["SPU"]) & (dt <= DT["INT16"]) & (nl >= 1) & nl_ok
                                & ~(sidesel & (sp == SPACE["SPU"])))

        take = Signal()
        self.comb += q.re.eq(take)
        xfer_go = Signal()
        xfer_done = Signal()
        vdone = Signal()
        lw = Signal(3)           # word within a level block

        # Executor: IDLE (the decoded transfer is copied in) -> LOAD -> XFER.
        # Overlap (vector path): when the source side of the executing
        # transfer has read its last word and the decoded one is also a
        # vector transfer that reads no memory the executing one still
        # writes, its source half is copied in (hand_src) and its source
        # generator started (LOAD_SRC) while the executing transfer's last
        # words drain to its destination; its destination half follows when
        # they are written (hand_dst, then dst_go loads the generator).
        #
        # The copies' enables reach about a thousand flip-flops of the
        # active sides; from the whole hand-over decision (the executor's
        # and the decoder's states, the overlap's conditions) they were the
        # ULX3S's accel critical path (17.48 ns, 15.30 of them routing;
        # docs/fpga_history.md, "The copy into the active sides from flip-flops").
        # So while the executor is idle (``track``, a flip-flop) the active
        # registers take the decoded ones in every clock: they hold the
        # decoded transfer in the clock it is handed over, as before, and
        # nothing reads them while idle (the generators are stopped, the
        # trace records nothing before the transfer starts).  An overlap's
        # conditions other than the source's end are registered
        # (``ovl_ok_r``; they hold while the decoded transfer waits), so its
        # copies' enables are the vector path's done flags and flip-flops.
        self.submodules.xfsm = xfsm = FSM(reset_state="IDLE")
        self.submodules.fsm = fsm = FSM(reset_state="HDR")
        exec_idle = Signal()     # nothing executing or pending (nothing decoded waits when the decoder asks)
        hand = Signal()          # decoded -> active
        hand_src = Signal()      # the decoded source half -> active (overlap)
        hand_dst = Signal()      # ... then its destination half
        src_go = Signal()        # start the source generator alone
        dst_go = Signal()        # start the destination generator alone
        track = Signal(reset=1)  # the executor is idle: the active registers follow the decoded ones
        ovl_ok_r = Signal()      # overlap_ok's conditions but the source's end, a clock ago
        dst_pending = Signal()   # the active source half's destination half is not running yet
        dst_handed = Signal()
        overlap_ok = Signal()
        self.comb += exec_idle.eq(xfsm.ongoing("IDLE") & ~exe_pending)
        xfsm.act("IDLE",
            If(exe_pending,
                self.start_valid.eq(1),
                If(self.start_ready, exe_issued.eq(1), NextState("EXE_GUARD")),
            ).Elif(fsm.ongoing("READY"), hand.eq(1), NextState("LOAD")))
        xfsm.act("EXE_GUARD", NextState("IDLE"))   # the array's busy rises the clock after the start
        xfsm.act("LOAD", xfer_go.eq(1), NextState("XFER"))
        # (An overlap is taken even when the executing transfer is complete
        # in the same clock, when it could have gone through IDLE: its
        # destination half is then handed over at once.  So the copy's
        # enable does not wait for the completion's compare.)
        xfsm.act("XFER", self.xfer_active.eq(~hand_src),
            If(overlap_ok, hand_src.eq(1), NextState("LOAD_SRC")
            ).Elif(Mux(vmode, vdone & ~dst_pending, xfer_done), NextState("IDLE")))
        xfsm.act("LOAD_SRC", src_go.eq(1), NextState("XFER"))
        self.sync += [
            If(xfsm.before_leaving("IDLE"), track.eq(0)).Elif(xfsm.before_entering("IDLE"), track.eq(1)),
            If(hand_src, dst_pending.eq(1)).Elif(dst_go, dst_pending.eq(0)),
            If(hand_dst, dst_handed.eq(1)).Elif(dst_go, dst_handed.eq(0)),
            dst_go.eq(hand_dst),
        ]

        fsm.act("HDR",
            If(q.readable,
                take.eq(1),
                NextValue(op, field(w, isa.HEADER_FIELDS, "opcode")),
                NextValue(d_process, field(w, isa.HEADER_FIELDS, "process")),
                NextValue(rem, field(w, isa.HEADER_FIELDS, "length") - 1),
                NextValue(d_scatter, field(w, isa.TRANSFER_FIELDS, "scatter")),
                NextValue(d_proc_en, field(w, isa.TRANSFER_FIELDS, "proc_en")),
                NextValue(d_proc, field(w, isa.TRANSFER_FIELDS, "proc")),
                NextValue(bad, 0),
                _refuse_process1(config, w, bad, Case(field(w, isa.HEADER_FIELDS, "opcode"), {
                    OP["NOP"]: NextState("SKIP"),
                    OP["TRANSFER"]: NextState("PAD"),
                    OP["EXE"]: If(field(w, isa.HEADER_FIELDS, "length") == isa.EXE_WORDS, NextState("EXE_FUNC"))
                               .Else(NextValue(bad, 1), NextState("SKIP")),
                    OP["CALLBACK"]: If(field(w, isa.HEADER_FIELDS, "length") == isa.CALLBACK_WORDS, NextState("CB_TAG"))
                                    .Else(NextValue(bad, 1), NextState("SKIP")),
                    OP["LOG"]: If(field(w, isa.HEADER_FIELDS, "length") == isa.LOG_WORDS,
                                  If(exec_idle, NextValue(self.log_on, field(w, isa.LOG_FIELDS, "on")))
                                  .Else(NextValue(log_next, field(w, isa.LOG_FIELDS, "on")), NextState("LOG_WAIT")))
                               .Else(NextValue(bad, 1), NextState("SKIP")),
                    "default": [NextValue(bad, 1), NextState("SKIP")],
                })),
                If(field(w, isa.HEADER_FIELDS, "length") == 0, NextValue(rem, 0), NextValue(bad, 1), NextState("SKIP")),
            )
        )
        # Consume the rest of an instruction; DECODE if it was malformed.
        fsm.act("SKIP",
            If(rem == 0,
                If(bad, err_fsm.eq(ERR["DECODE"])),
                NextState("HDR"),
            ).Elif(q.readable, take.eq(1), NextValue(rem, rem - 1))
        )

        def consume(*body):
            """Take the next word of this instruction; a missing word is DECODE."""
            return If(rem == 0, err_fsm.eq(ERR["DECODE"]), NextState("HDR")
                   ).Elif(q.readable, take.eq(1), NextValue(rem, rem - 1), *body)

        # CALLBACK and LOG wait for the instructions before them; an EXE for
        # the one before it to be issued.
        fsm.act("LOG_WAIT", If(exec_idle, NextValue(self.log_on, log_next), NextState("HDR")))
        fsm.act("EXE_FUNC", If(~exe_pending, consume(
            NextValue(exe_func, w), NextValue(exe_process, d_process), exe_set.eq(1), NextState("HDR"))))
        self.sync += If(exe_set, exe_pending.eq(1)).Elif(exe_issued, exe_pending.eq(0))
        fsm.act("CB_TAG", consume(NextValue(cb_tag, w), NextState("CB_PARM")))
        fsm.act("CB_PARM", consume(NextState("CB_PUSH")))
        fsm.act("CB_PUSH", If(exec_idle & cbq.writable, cbq.we.eq(1), NextState("HDR")))
        self.comb += [cbq.din.eq(cb_tag), self.start_func.eq(exe_func), self.start_process.eq(exe_process)]

        fsm.act("PAD", consume(NextValue(d_pad, field(w, isa.TRANSFER_FIELDS, "pad")),
                               NextValue(sidesel, 0), NextState("SIDE0")))
        fsm.act("SIDE0", consume(
            NextValue(nlev, nl),
            If(side_ok, NextState("SIDE1")).Else(NextValue(bad, 1), NextState("SKIP"))))
        # (SoCConfig.te_dst_overlap=0: a destination's overlap group is
        # DECODE once the instruction is consumed; no new local name here,
        # it would rename signals through Migen's tracer)
        fsm.act("SIDE1", consume(
            *if_enabled(not config.te_dst_overlap,
                   If(~sidesel & (field(w, isa.SIDE_FIELDS, "ovl_mask") != 0), NextValue(bad, 1))),
            NextValue(chk_mask, field(w, isa.SIDE_FIELDS, "check_mask")),
            NextValue(ovl_mask, field(w, isa.SIDE_FIELDS, "ovl_mask")),
            NextValue(bmask, field(w, isa.SIDE_FIELDS, "bcast_mask")),
            NextState("SIDE2")))
        # Words 3-4 (the overlap offset and limit) only when the side has an
        # overlap group (spec.tensor_isa: SIDE_SHORT_HEADER_WORDS).
        fsm.act("SIDE2", consume(If(ovl_mask != 0, NextState("SIDE3")
                                    ).Else(NextValue(lvl, 0), NextValue(lw, 0), NextState("LEVEL"))))
        fsm.act("SIDE3", consume(NextState("SIDE4")))
        fsm.act("SIDE4", consume(NextValue(lvl, 0), NextValue(lw, 0), NextState("LEVEL")))
        # Level words: count, step, start, stride, bound (their order in isa.LEVEL_FIELDS).
        lf = {f.name: f.word for f in isa.LEVEL_FIELDS}
        # The write stage: what the word taken this clock writes, registered.
        level_take = fsm.ongoing("LEVEL") & take
        self.sync += [
            wr_w.eq(w), wr_sidesel.eq(sidesel), wr_slot.eq(slot),
            [wr_op[f"side{k}"].eq(fsm.ongoing(f"SIDE{k}") & take) for k in range(5)],
            [wr_op[name].eq(level_take & (lw == word)) for name, word in lf.items()],
            wr_ovl_en.eq((field(w, isa.SIDE_FIELDS, "ovl_mask") & nlmask) != 0),
            wr_nbcast.eq(nbcast_all),
            wr_no_ovl.eq(ovl_mask == 0),
            wr_src_bc.eq(sidesel & lvl_bc),
            wr_chk.eq((chk_mask >> lvl)[0]),
            wr_ovl.eq((ovl_mask >> lvl)[0]),
        ]
        wr_signed = Signal((32, True))
        self.comb += wr_signed.eq(wr_w)
        # Each register has one enable (its word, side and slot) and takes
        # wr_w, or its reset value at the side's first word: no per-bit
        # select between slots or sides (yosys left several muxes per bit of
        # the nested Case/If form).
        for k, sd in ((1, d_src), (0, d_dst)):
            this = Signal(name=f"wr_this{k}")
            self.comb += this.eq(wr_sidesel == k)
            self.sync += [
                If(wr_op["side0"] & this, sd.space.eq(field(wr_w, isa.SIDE_FIELDS, "space")),
                   sd.dtype.eq(field(wr_w, isa.SIDE_FIELDS, "dtype"))),
                If(wr_op["side1"] & this, sd.ovl_en.eq(wr_ovl_en)),
                If(wr_op["side2"] & this, sd.base.eq(wr_w), sd.nbcast.eq(wr_nbcast)),
                If(wr_op["side2"] & this & wr_no_ovl, sd.ovl_start.eq(0), sd.ovl_limit.eq(0)
                ).Elif(wr_op["side3"] & this, sd.ovl_start.eq(wr_signed)
                ).Elif(wr_op["side4"] & this, sd.ovl_limit.eq(wr_w)),
            ]
            for sl in range(len(sd.count)):
                here = Signal(name=f"wr_here{k}_{sl}")
                self.comb += here.eq(this & (wr_slot == sl))
                self.sync += [
                    If(wr_op["side0"] & this, sd.count[sl].eq(1), sd.chk[sl].eq(0), sd.ovl[sl].eq(0)
                    ).Elif(wr_op["count"] & here, sd.count[sl].eq(Mux(wr_src_bc, 1, wr_w)),
                           sd.chk[sl].eq(wr_chk), sd.ovl[sl].eq(wr_ovl)),
                    [If(wr_op["side0"] & this, getattr(sd, name)[sl].eq(0)
                        ).Elif(wr_op[name] & here, getattr(sd, name)[sl].eq(wr_w))
                     for name in ("step", "start", "stride", "bound")],
                ]
        # The count product's reset is written a clock after the side's
        # first word too (its first count word comes three words later, and
        # the destination's last product landed the clock before: a count
        # word is always followed by its step word); the decoder's other
        # bookkeeping stays in the clock of the word.
        self.sync += [
            If(wr_op["side0"],
                prod.eq(1), ovf.eq(0),
                If(wr_sidesel, prod_dst.eq(prod), ovf_dst.eq(ovf))),
            If(fsm.ongoing("HDR"), bad_count.eq(0)),
        ]
        self.sync += [
            mul_go.eq(0),
            If(level_take & (lw == lf["count"]),
                If(w == 0, bad_count.eq(1)),
                If(~lvl_bc, mul_go.eq(1), mul_cnt.eq(w))),
            If(mul_go2, prod.eq(new_prod[:32]), ovf.eq(ovf | mul_big | (new_prod[32:] != 0))),
        ]
        for k in range(2):
            self.sync += If(fsm.ongoing("LEVEL") & take & (lvl == 0) & (sidesel == k),
                            If(lw == lf["count"], d_l0_count[k].eq(w)),
                            If(lw == lf["step"], d_l0_step[k].eq(w)))
        # A level neither checked nor overlapped carries count and step only
        # (spec.tensor_isa: LEVEL_SHORT_WORDS); its start, stride and bound
        # stay at the 0 the side's first word wrote.
        lvl_full = Signal()
        self.comb += lvl_full.eq(((chk_mask | ovl_mask) >> lvl)[0])
        fsm.act("LEVEL", consume(
            If((lw == isa.LEVEL_WORDS - 1) | ((lw == isa.LEVEL_SHORT_WORDS - 1) & ~lvl_full),
                NextValue(lw, 0),
                If(lvl == nlev - 1,
                    If(sidesel, NextState("SETTLE")).Else(NextValue(sidesel, 1), NextState("SIDE0"))
                ).Else(NextValue(lvl, lvl + 1))
            ).Else(NextValue(lw, lw + 1))))
        vector_ok = Signal()
        s_elig, d_elig = eligible(d_src), eligible(d_dst)
        # Broadcast over the PCORE dimension on the vector path (bmode): a
        # PCORE destination whose one broadcast level (slot 0) steps by the
        # PCORE stride, at most NP copies, not overlapped, the rest of the
        # side eligible.  The copies of a word differ only in the PCORE, so
        # each destination word is one write of the te channel to all of
        # them (te.wr_bcast).  CHECK shifts the decoded destination's slots
        # down (the broadcast level leaves the agen) and keeps the per-copy
        # bound check of the broadcast level, constant over the transfer,
        # in d_bc_copy (bc_copy once active).
        bvector_ok = Signal()
        d_pcore = (d_dst.space == SPACE["PCORE_PRIVATE"]) | (d_dst.space == SPACE["PCORE_SHARED"])
        d_pstride = Mux(d_dst.space == SPACE["PCORE_SHARED"], config.pcore_shared_words,
                        config.nt * config.pcore_private_words)
        db_elig = eligible(d_dst, first=1)
        self.comb += d_src.vector_eligibility + d_dst.vector_eligibility
        if config.te_vector_path:
            self.comb += vector_ok.eq(s_elig & d_elig & ~d_proc_en
                                      & ~((d_src.space == SPACE["DDR"]) & (d_dst.space == SPACE["DDR"])))
            self.comb += bvector_ok.eq(s_elig & db_elig & ~d_proc_en & d_pcore & (d_dst.step[0][:32] == d_pstride)
                                       & ~d_dst.ovl[0] & (d_dst.count[0] <= config.np))
        # else (SoCConfig.te_vector_path = 0): no transfer qualifies, so
        # vmode and bmode stay 0 and synthesis leaves out the vector path,
        # the broadcast mode and the generators' chunk mode, which they
        # alone select (docs/fpga.md, "An engine without its vector path").
        d_bc_copy = Signal(config.np)   # copy j of a word is not out of bound on the broadcast level
        bc_copy = Signal(config.np)
        bc_copy_next = Signal(config.np)
        for j in range(config.np):
            # start + j * stride, j < NP: |value| < 2**(32 + bits(NP)) (32-bit start and stride).
            # Registered (computed every clock; the decoded side is stable
            # from ELIG on, so the value is valid in CHECK): its adders and
            # the bound compare in one clock were the TensorEngine's
            # critical path out of context at the ULX3S's shape, 68.3 MHz.
            bc_bits = 34 + config.np.bit_length()
            idx_j = Signal((bc_bits, True), name=f"bc_idx{j}")
            bnd = Signal((bc_bits, True), name=f"bc_bound{j}")
            self.sync += idx_j.eq(d_dst.start[0] + j * d_dst.stride[0])
            self.comb += [
                bnd.eq(d_dst.bound[0]),
                bc_copy_next[j].eq((d_dst.count[0] > j) & ~(d_dst.chk[0] & ((idx_j < 0) | (idx_j >= bnd)))),
            ]
        check_ok = Signal()
        self.comb += check_ok.eq((rem == 0) & ~bad & ~bad_count & ~((prod_dst != prod) | ovf_dst | ovf))
        # The eligibility of the decoded sides (their rows' last index
        # against the bound, on carry chains) is registered in ELIG and used
        # in CHECK: in one clock it ran into the broadcast shift's enables of
        # every decoded destination register (the ULX3S's accel critical
        # path at 2 x 8 x 4, 20.7 ns, 15.7 of them routing).  Nothing writes
        # the decoded sides between ELIG and CHECK.
        vok_r = Signal()
        bvok_r = Signal()
        bshift_r = Signal()
        self.sync += [vok_r.eq(vector_ok), bvok_r.eq(bvector_ok), bshift_r.eq(check_ok & bvector_ok)]
        bshift = Signal()
        self.comb += bshift.eq(fsm.ongoing("CHECK") & bshift_r)
        shift = []
        for k in range(dst_levels):
            for name in ("count", "step", "start", "stride", "bound", "chk", "ovl"):
                reg = getattr(d_dst, name)
                shift.append(reg[k].eq(reg[k + 1] if k + 1 < dst_levels else (1 if name == "count" else 0)))
        self.sync += If(bshift, *shift, d_dst.nbcast.eq(0), d_bc_copy.eq(bc_copy_next))
        fsm.act("SETTLE", NextState("ELIG"))       # the last level word's write lands
        fsm.act("ELIG", NextState("CHECK"))        # vok_r, bvok_r, bshift_r
        fsm.act("CHECK",
            If(rem != 0, NextValue(bad, 1), NextState("SKIP")
            ).Elif(bad | bad_count, err_fsm.eq(ERR["DECODE"]), NextState("HDR")
            ).Elif((prod_dst != prod) | ovf_dst | ovf, err_fsm.eq(ERR["COUNT"]), NextState("HDR")
            ).Elif(bvok_r, NextValue(d_vmode, 1), NextValue(d_bmode, 1), NextState("READY")
            ).Else(NextValue(d_vmode, vok_r), NextValue(d_bmode, 0), NextState("READY")))
        # Decoded: wait for the executor to take it (hand, in its IDLE state;
        # or hand_src then hand_dst, overlapping the transfer before).
        fsm.act("READY", If(hand | hand_dst, NextState("HDR")))
        self.sync += [
            If(track | hand_src,
                *[a.eq(d) for a, d in zip(src.flat(), d_src.flat())],
                l0_count[1].eq(d_l0_count[1]), l0_step[1].eq(d_l0_step[1]),
                process.eq(d_process), pad.eq(d_pad), proc_en.eq(d_proc_en), proc.eq(d_proc),
                vmode.eq(d_vmode)),
            If(track | hand_dst,
                *[a.eq(d) for a, d in zip(dst.flat(), d_dst.flat())],
                l0_count[0].eq(d_l0_count[0]), l0_step[0].eq(d_l0_step[0]),
                wr_process.eq(d_process), scatter.eq(d_scatter), bmode.eq(d_bmode), bc_copy.eq(d_bc_copy)),
        ]
        self.comb += self.xfer_vector.eq(vmode)
        self.comb += self.idle.eq(fsm.ongoing("HDR") & ~q.readable & exec_idle)

        # ------------------------------------------------------------------
        # Address generators and physical ranges.
        # ------------------------------------------------------------------
        # Each generator keeps chunk mode's cap (the elements left in the
        # memory word at its address) as a register (agen.py: cap_of).
        limits = dict(ddr_base=ddr_base, ddr_size=ddr_size, scratch_size=config.scratch_size,
                      private_words=pm.private_words, shared_words=pm.shared_words)
        # (SideRegs.parallel_checks: the generators' checks per candidate, registered)
        src.parallel_checks = dst.parallel_checks = bool(config.te_parallel_checks)
        # (no vector path: no chunk mode, cap_of None; no new local name
        # here: Migen's name tracer would rename signals)
        self.submodules.src_gen = sg = AddressGenerator(src, cap_of=cap_of(src, config),
                                                        range_of=lambda a: RangeCheck(src, a, **limits))
        dst.overlap = bool(config.te_dst_overlap)     # (SideRegs.overlap: the generator's overlap offset)
        self.submodules.dst_gen = dg = AddressGenerator(dst, cap_of=cap_of(dst, config),
                                                        range_of=lambda a: RangeCheck(dst, a, **limits))
        self.comb += [sg.load.eq(xfer_go | src_go), dg.load.eq(xfer_go | dst_go),
                      sg.chunk.eq(vmode), dg.chunk.eq(vmode)]

        # The range checks are registers of the generators (``in_range``,
        # from a RangeCheck of each candidate of the next address: agen.py),
        # so the skips are ORs of flip-flops.
        s_in = sg.in_range
        d_in = dg.in_range

        # Broadcast mode: dg.addr is copy 0's address; copy j is at
        # + j * PCORE stride (mod 2**32), i.e. PCORE field hi + j, the same
        # thread and word.  bc_pcores: the PCOREs of the copies not out of
        # bound and inside the memory; bc_range: a copy not out of bound
        # lies outside the memory (RANGE).
        bc_pcores = Signal(config.np)
        bc_range = Signal()

        def copies(shift):
            hi = dg.addr[shift:32]
            pcores, outside = [], []
            for j in range(config.np):
                hj = Signal(32 - shift, name_override=None)
                inj = Signal()
                self.comb += [hj.eq(hi + j), inj.eq(hj < config.np)]
                pcores.append(Cat(*[bc_copy[j] & inj & (hj == p) for p in range(config.np)]))
                outside.append(bc_copy[j] & ~inj)
            return reduce(or_, pcores), reduce(or_, outside)
        sh_pc, sh_out = copies(pm.lsw)
        pr_pc, pr_out = copies(pm.lpw + pm.lnt)
        self.comb += [
            bc_pcores.eq(Mux(dst.space == SPACE["PCORE_SHARED"], sh_pc, pr_pc)),
            bc_range.eq(Mux(dst.space == SPACE["PCORE_SHARED"], sh_out, pr_out)),
        ]
        d_in_all = Signal()
        self.comb += d_in_all.eq(Mux(bmode, bc_pcores != 0, d_in))
        s_skip = Signal()
        d_skip = Signal()
        self.comb += [s_skip.eq(sg.oob | ~s_in), d_skip.eq(dg.oob | ~d_in_all)]
        self.comb += If((sg.valid & sg.ready & ~sg.oob & ~s_in)
                        | (dg.valid & dg.ready & ~dg.oob & Mux(bmode, bc_range, ~d_in)),
                        err_range.eq(ERR["RANGE"]))

        def next_word_in(addr):
            """DDR: the 32-bit word after the one at ``addr`` is inside the memory."""
            word, after = Signal(30), Signal(32)
            self.comb += [word.eq((addr - ddr_base)[2:32]), after.eq(word + 2)]
            return after <= ddr_size // 4

        # ------------------------------------------------------------------
        # Vector path (vector.py): qualifying transfers, a memory word per clock.
        # ------------------------------------------------------------------
        if config.te_vector_path:
            self.submodules.vec = vec = VectorPath(
                config, src, dst, sg, dg, s_skip, d_skip, next_word_in(sg.addr), next_word_in(dg.addr),
                pad, scratch, te, d_bcast=Mux(bmode, bc_pcores, 0))
        else:
            # (SoCConfig.te_vector_path=0: its ports, idle)
            self.submodules.vec = vec = NoVectorPath(config)
        self.comb += [vec.active.eq(vmode), vdone.eq(vec.done), scratch.wide.eq(vmode)]
        # Overlap: the decoded transfer may start its source while the
        # executing one drains when both take the vector path, no EXE is
        # pending, and it reads no memory the executing one writes (another
        # space, or the PCORE memories of the other process space).
        pc_space = lambda sd: (sd.space == SPACE["PCORE_PRIVATE"]) | (sd.space == SPACE["PCORE_SHARED"])
        raw_hazard = Signal()
        self.comb += [
            raw_hazard.eq((d_src.space == dst.space) & (~pc_space(d_src) | (d_process == wr_process))),
            overlap_ok.eq(ovl_ok_r & vec.src_done),
            hand_dst.eq(dst_pending & ~dst_handed & vec.dst_done),
        ]
        # A clock late is safe: none of them turns false while the decoded
        # transfer waits in READY and the executor runs, except by a
        # hand-over, which sets dst_pending (or, hand, leaves XFER).
        self.sync += ovl_ok_r.eq(vmode & d_vmode & fsm.ongoing("READY") & ~exe_pending & ~dst_pending & ~raw_hazard)
        # ------------------------------------------------------------------
        # Activity trace (trace.py, record format sw/te_trace.py).
        # ------------------------------------------------------------------
        def vattr(space, dtype, count, step):
            v = Signal(2)
            unit = Mux((dtype == DT["INT16"]) & (space <= SPACE["SCRATCH"]), 2, 1)
            cands = [c for c in (8, 4, 2) if c <= vw]
            expr = 0
            for c in reversed(cands):
                expr = Mux(count[:_log2(c)] == 0, _log2(c), expr)
            self.comb += v.eq(Mux(step == unit, expr, 0))
            return v

        if trace_depth:
            # While an overlapping transfer's destination half is still only
            # decoded (dst_pending, not yet handed) the trace takes its
            # destination attributes from the decoded registers.
            t_dec = Signal()
            t_dst_space, t_dst_dtype, t_scatter = Signal(3), Signal(2), Signal()
            t_dst_count, t_dst_step = Signal(32), Signal(32)
            self.comb += [
                t_dec.eq(dst_pending & ~dst_handed),
                t_dst_space.eq(Mux(t_dec, d_dst.space, dst.space)),
                t_dst_dtype.eq(Mux(t_dec, d_dst.dtype, dst.dtype)),
                t_scatter.eq(Mux(t_dec, d_scatter, scatter)),
                t_dst_count.eq(Mux(t_dec, d_l0_count[0], l0_count[0])),
                t_dst_step.eq(Mux(t_dec, d_l0_step[0], l0_step[0])),
            ]
            self.submodules.trace = tr = ActivityTrace(dict(
                process=process, dst=t_dst_space, src=src.space,
                dst_v=vattr(t_dst_space, t_dst_dtype, t_dst_count, t_dst_step), dst_x2=t_dst_dtype == DT["INT16"],
                src_v=vattr(src.space, src.dtype, l0_count[1], l0_step[1]), src_x2=src.dtype == DT["INT16"],
                scatter=t_scatter, vector=vmode), depth=trace_depth)
            self.comb += [
                tr.log_on.eq(self.log_on), tr.busy.eq(self.busy), tr.xfer_active.eq(self.xfer_active),
                self.trace_word.eq(tr.word), tr.pop.eq(self.trace_pop), self.trace_level.eq(tr.level),
            ]
        # else: no trace buffer; trace_word and trace_level stay 0.

        # ------------------------------------------------------------------
        # Element path, a pipeline (the vector path reads the generators
        # directly):
        #   1. address generation (the agens' registers);
        #   2. bound / overlap / range check into an element register per side
        #      (e_* for the source, f_* for the destination: address, skip,
        #      first, last), taken when empty or consumed;
        #   3. reader: cache or memory, source conversion, into p2;
        #   4. SPU table read into the SPU's registers (p3 keeps the value);
        #   5. SPU difference of the two entries (p4 keeps the value);
        #   6. interpolation into the value FIFO.
        # Stages 3-6 never stall: the reader emits only when the FIFO has
        # room for what is in flight.
        # ------------------------------------------------------------------
        e_valid = Signal()
        e_addr = Signal(32)
        e_skip = Signal()
        e_take = Signal()        # the reader consumes the element
        f_valid = Signal()
        f_addr = Signal(32)
        f_skip = Signal()
        f_first = Signal()
        f_last = Signal()
        f_take = Signal()        # the writer consumes the element
        sg_el = Signal()         # stage 2 takes an element from the source agen
        dg_el = Signal()
        # Each element register has a skid register behind it (k_* for the
        # source, g_* for the destination): the generator advances while the
        # skid register is empty, a flip-flop, so its clock enables (about
        # 1,200 flip-flops across the chip) no longer wait for the reader's
        # cache compare or the writer's decision of this clock (the `accel`
        # critical path of the ULX3S build, 27 ns).  The element register
        # takes the skid register first; in a steady flow the skid register
        # stays empty and the timing is that of a single register.
        k_valid = Signal()
        k_addr = Signal(32)
        k_skip = Signal()
        g_valid = Signal()
        g_addr = Signal(32)
        g_skip = Signal()
        g_first = Signal()
        g_last = Signal()
        self.comb += [
            # the generators' own copies of vmode (taken at their load; a
            # generator presents elements only while it runs)
            sg_el.eq(~sg.chunk_q & sg.valid & ~k_valid),
            dg_el.eq(~dg.chunk_q & dg.valid & ~g_valid),
        ]
        def skid(push, take, valid, k_valid, fields):
            """The element register (``valid``, each field's first signal)
            with its skid register (``k_valid``, the second) behind it; the
            third is the generator's value, taken on ``push``."""
            return If(~valid | take,
                If(k_valid, valid.eq(1), k_valid.eq(0), *[r.eq(k) for r, k, _ in fields]
                ).Elif(push, valid.eq(1), *[r.eq(v) for r, _, v in fields]
                ).Else(valid.eq(0))
            ).Elif(push, k_valid.eq(1), *[k.eq(v) for _, k, v in fields])
        self.sync += [
            skid(sg_el, e_take, e_valid, k_valid, [(e_addr, k_addr, sg.addr), (e_skip, k_skip, s_skip)]),
            skid(dg_el, f_take, f_valid, g_valid, [(f_addr, g_addr, dg.addr), (f_skip, g_skip, d_skip),
                                                   (f_first, g_first, dg.first), (f_last, g_last, dg.last)]),
        ]
        slow_bus = ddr.bus
        self.comb += If(vmode, *vec.bus.connect(self.bus)).Else(*slow_bus.connect(self.bus))

        # ------------------------------------------------------------------
        # Reader: one element per clock on cache hits.
        # ------------------------------------------------------------------
        self.submodules.vfifo = vf = SyncFIFO(16, fifo_depth)
        cache_valid = Signal()
        cache_tag = Signal(32)
        cache = Signal(max(32, 16 * vw))
        s_byte = Signal()
        s_shared = Signal()
        self.comb += [s_byte.eq(src.space <= SPACE["SCRATCH"]), s_shared.eq(src.space == SPACE["PCORE_SHARED"])]
        s_wadr = Signal(30)
        s_b = Signal(2)
        self.comb += [s_wadr.eq(e_addr[2:]), s_b.eq(e_addr[:2])]
        bytes_ = Array(cache[8 * k:8 * k + 8] for k in range(4))
        lanes = Array(cache[16 * k:16 * k + 16] for k in range(vw))
        s_tag = Signal(32)
        self.comb += s_tag.eq(e_addr >> pm.lvw)
        raw = Signal(16)
        emit = Signal()
        r_lo = Signal(8)
        rd_adr = Signal(30)
        rd_stb = Signal()
        te_rd_req = Signal()
        te_rd_go = Signal()
        te_wr_req = Signal()

        rdp = [ddr.port, scratch.port]
        self.comb += [p.rd_adr.eq(rd_adr) for p in rdp]
        self.comb += [
            ddr.port.rd_stb.eq(rd_stb & (src.space == SPACE["DDR"])),
            scratch.port.rd_stb.eq(rd_stb & (src.space == SPACE["SCRATCH"])),
        ]
        rd_ack = Signal()
        rd_dat = Signal(32)
        self.comb += [
            rd_ack.eq(Mux(src.space == SPACE["DDR"], ddr.port.rd_ack, scratch.port.rd_ack)),
            rd_dat.eq(Mux(src.space == SPACE["DDR"], ddr.port.rd_dat, scratch.port.rd_dat)),
        ]
        self.sync += [
            If(xfer_go, cache_valid.eq(0)),
            If(rd_stb & rd_ack, cache_valid.eq(1), cache_tag.eq(rd_adr), cache.eq(rd_dat)),
            If(te_rd_go, cache_valid.eq(0), cache_tag.eq(s_tag)),
            If(te.rvalid, cache_valid.eq(1), cache.eq(te.rdata)),
        ]
        # The cache's hit flags are registers: whether the element register's
        # word (``s_wadr``), the word after it and its PCORE vector word
        # (``s_tag``) are the cached one.  They are compared when the element
        # register loads (against the skid register's address or the
        # generator's, whichever it takes, both flip-flops) and set by
        # construction when the cache loads; the two never happen in one
        # clock (the reader reads only while it holds an element it does not
        # emit).  So the reader's decision, and the element register's clock
        # enable behind it, start at flip-flops rather than at a 30-bit
        # compare after an adder (the accel critical path of a ULX3S build:
        # docs/fpga_history.md, "The reader's hit flags as registers").
        # ``cache_tag_m1`` is the cached word's address less one, for the
        # word-after compare without an adder.
        cache_tag_m1 = Signal(30)
        self.sync += If(rd_stb & rd_ack, cache_tag_m1.eq(rd_adr - 1))
        hit_lo_r = Signal()      # cache_tag == s_wadr
        hit_hi_r = Signal()      # cache_tag == s_wadr + 1
        hit_t_r = Signal()       # cache_tag == s_tag
        e_load = Signal()        # the element register loads this clock
        self.comb += e_load.eq((~e_valid | e_take) & (k_valid | sg_el))
        def flags_of(addr):
            return [cache_tag == addr[2:], cache_tag_m1 == addr[2:], cache_tag == (addr >> pm.lvw)]
        for r, k, g in zip((hit_lo_r, hit_hi_r, hit_t_r), flags_of(k_addr), flags_of(sg.addr)):
            self.sync += If(e_load, r.eq(Mux(k_valid, k, g)))
        in_hi = Signal()
        self.sync += [
            If(rd_stb & rd_ack, hit_lo_r.eq(~in_hi), hit_hi_r.eq(in_hi), hit_t_r.eq(0)),
            If(te_rd_go, hit_lo_r.eq(0), hit_hi_r.eq(0), hit_t_r.eq(1)),
        ]
        hit_lo = Signal()
        hit_hi = Signal()
        self.comb += [hit_lo.eq(cache_valid & hit_lo_r), hit_hi.eq(cache_valid & hit_hi_r)]
        room = Signal()          # the FIFO has room for this element and those in stages 4-6
        p2_valid = Signal()
        p3_valid = Signal()
        p4_valid = Signal()
        self.comb += room.eq(vf.level + p2_valid + p3_valid + p4_valid < fifo_depth)
        self.submodules.rfsm = rfsm = FSM(reset_state="ELEM")
        rfsm.act("ELEM",
            If(e_valid & room,
                If(e_skip,
                    raw.eq(pad), emit.eq(1),
                ).Elif(s_byte,
                    rd_adr.eq(s_wadr),
                    If(hit_lo,
                        If(esize(src) == 1,
                            raw.eq(bytes_[s_b]), emit.eq(1),
                        ).Elif(s_b != 3,
                            raw.eq(Cat(bytes_[s_b], bytes_[s_b + 1])), emit.eq(1),
                        ).Else(NextValue(r_lo, bytes_[3]), NextState("HI"))
                    ).Else(rd_stb.eq(1))
                ).Else(
                    If(cache_valid & hit_t_r,
                        raw.eq(lanes[e_addr[:pm.lvw] if pm.lvw else 0]), emit.eq(1),
                    ).Else(te_rd_req.eq(1), If(te_rd_go, NextState("WAIT")))
                )
            )
        )
        rfsm.act("HI",
            in_hi.eq(1),
            rd_adr.eq(s_wadr + 1),
            If(hit_hi, raw.eq(Cat(r_lo, bytes_[0])), emit.eq(1), NextState("ELEM")).Else(rd_stb.eq(1)))
        rfsm.act("WAIT", If(te.rvalid, NextState("ELEM")))
        self.comb += [e_take.eq(emit), sg.ready.eq(Mux(sg.chunk_q, vec.src_ready, ~k_valid))]

        # Source conversion, then the stream processor.
        value = Signal(16)
        self.comb += [
            Case(src.dtype, {
                DT["UINT8"]: value.eq(raw[:8]),
                DT["INT8"]: value.eq(Cat(raw[:8], Replicate(raw[7], 8))),
                "default": value.eq(raw),
            }),
        ]
        p2_value = Signal(16)
        p3_value = Signal(16)
        p4_value = Signal(16)
        assert SPU_LATENCY == 2
        self.sync += [
            p2_valid.eq(emit), p2_value.eq(value),
            p3_valid.eq(p2_valid), p3_value.eq(p2_value),
            p4_valid.eq(p3_valid), p4_value.eq(p3_value),
        ]
        self.comb += [
            spu.x.eq(p2_value),           # table read in stage 4, difference in 5, y in 6
            spu.program.eq(proc),
            vf.din.eq(Mux(proc_en, spu.y, p4_value)),
            vf.we.eq(p4_valid),
        ]

        # ------------------------------------------------------------------
        # Writer: write-combining buffers flushed when the word changes.
        # ------------------------------------------------------------------
        held = Signal(16)
        cur = Signal(16)
        can_go = Signal()
        self.comb += [cur.eq(Mux(f_first, vf.dout, held)), can_go.eq(~f_first | vf.readable)]
        stored = Signal(16)     # the destination's 16-bit word (PCORE, SPU)
        self.comb += Case(dst.dtype, {
            DT["UINT8"]: stored.eq(cur[:8]),
            DT["INT8"]: stored.eq(Cat(cur[:8], Replicate(cur[7], 8))),
            "default": stored.eq(cur),
        })
        d_byte = Signal()
        d_shared = Signal()
        self.comb += [d_byte.eq(dst.space <= SPACE["SCRATCH"]), d_shared.eq(dst.space == SPACE["PCORE_SHARED"])]
        d_wadr = Signal(30)
        d_b = Signal(2)
        self.comb += [d_wadr.eq(f_addr[2:]), d_b.eq(f_addr[:2])]
        d_tag = Signal(32)
        self.comb += d_tag.eq(f_addr >> pm.lvw)

        pw_valid = Signal()
        pw_adr = Signal(30)
        pw_dat = Signal(32)
        pw_sel = Signal(4)
        pv_valid = Signal()
        pv_tag = Signal(32)
        pv_dat = Signal(16 * vw)
        pv_mask = Signal(vw)
        w_hi = Signal(8)
        wr_stb = Signal()
        wr_ack = Signal()
        for p in (ddr.port, scratch.port):
            self.comb += [p.wr_adr.eq(pw_adr), p.wr_dat.eq(pw_dat), p.wr_sel.eq(pw_sel)]
        self.comb += [
            ddr.port.wr_stb.eq(wr_stb & (dst.space == SPACE["DDR"])),
            scratch.port.wr_stb.eq(wr_stb & (dst.space == SPACE["SCRATCH"])),
            wr_ack.eq(Mux(dst.space == SPACE["DDR"], ddr.port.wr_ack, scratch.port.wr_ack)),
        ]
        consume_el = Signal()   # the element (all its bytes) is written or skipped
        pop = Signal()          # the FIFO value is taken (first broadcast copy)
        self.comb += [f_take.eq(consume_el), dg.ready.eq(Mux(dg.chunk_q, vec.dst_ready, ~g_valid)), vf.re.eq(pop)]
        self.sync += If(pop, held.eq(vf.dout))

        wr_flush = Signal()
        te_wr_go = Signal()
        byte_hi = Signal()      # INT16 element: high byte in the same word
        self.comb += byte_hi.eq((esize(dst) == 2) & (d_b != 3))
        # merge of the element's bytes into the pending word
        pw_merge_dat = Signal(32)
        pw_merge_sel = Signal(4)
        lo_sel = Signal(4)
        hi_sel = Signal(4)
        self.comb += [
            lo_sel.eq(1 << d_b),
            hi_sel.eq(Mux(byte_hi, 1 << (d_b + 1), 0)),
        ]
        dat_cases = {}
        for b in range(4):
            parts = []
            for k in range(4):
                if k == b:
                    parts.append(cur[:8])
                elif k == b + 1:
                    parts.append(Mux(byte_hi, cur[8:16], pw_dat[8 * k:8 * k + 8]))
                else:
                    parts.append(pw_dat[8 * k:8 * k + 8])
            dat_cases[b] = pw_merge_dat.eq(Cat(*parts))
        self.comb += [Case(d_b, dat_cases), pw_merge_sel.eq(Mux(pw_valid, pw_sel, 0) | lo_sel | hi_sel)]
        lane = Signal(max=max(vw, 2))
        self.comb += lane.eq(f_addr[:pm.lvw] if pm.lvw else 0)
        pv_merge = Signal(16 * vw)
        self.comb += [pv_merge.eq(pv_dat)] + [If(lane == k, pv_merge[16 * k:16 * k + 16].eq(stored)) for k in range(vw)]

        self.submodules.wfsm = wfsm = FSM(reset_state="ELEM")
        wfsm.act("ELEM",
            If(f_valid & can_go,
                If(f_skip,
                    consume_el.eq(1), pop.eq(f_first),
                ).Elif(d_byte,
                    If(pw_valid & (pw_adr != d_wadr),
                        wr_flush.eq(1),
                    ).Else(
                        NextValue(pw_valid, 1), NextValue(pw_adr, d_wadr),
                        NextValue(pw_dat, pw_merge_dat), NextValue(pw_sel, pw_merge_sel),
                        pop.eq(f_first),
                        If((esize(dst) == 2) & (d_b == 3),
                            NextValue(w_hi, cur[8:16]), NextState("HI"),
                        ).Else(consume_el.eq(1))
                    )
                ).Elif(dst.space == SPACE["SPU"],
                    spu.we.eq(1), consume_el.eq(1), pop.eq(f_first),
                ).Else(
                    If(pv_valid & (pv_tag != d_tag),
                        te_wr_req.eq(1),
                    ).Else(
                        NextValue(pv_valid, 1), NextValue(pv_tag, d_tag), NextValue(pv_dat, pv_merge),
                        NextValue(pv_mask, Mux(pv_valid, pv_mask, 0) | (1 << lane)),
                        consume_el.eq(1), pop.eq(f_first),
                    )
                ),
                If(consume_el & f_last, NextState("FLUSH")),
            )
        )
        wfsm.act("HI",
            If(pw_valid & (pw_adr != d_wadr + 1),
                wr_flush.eq(1),
            ).Else(
                NextValue(pw_valid, 1), NextValue(pw_adr, d_wadr + 1),
                NextValue(pw_dat, Cat(w_hi, pw_dat[8:32])), NextValue(pw_sel, Mux(pw_valid, pw_sel, 0) | 1),
                consume_el.eq(1),
                If(f_last, NextState("FLUSH")).Else(NextState("ELEM")),
            )
        )
        wfsm.act("FLUSH",
            If(pw_valid, wr_flush.eq(1)
            ).Elif(pv_valid, te_wr_req.eq(1)
            ).Else(xfer_done.eq(1), NextState("ELEM")))
        self.comb += wr_stb.eq(wr_flush)
        self.sync += [
            If(wr_flush & wr_ack, pw_valid.eq(0)),
            If(te_wr_go, pv_valid.eq(0)),
        ]
        self.comb += [spu.wadr.eq(f_addr[:8]), spu.wdat.eq(stored)]

        # PCORE port: the vector path drives both channels; the element
        # path writes its flushes on the write channel and reads on the read
        # channel, a read waiting for a pending flush (reads after writes).
        self.comb += [
            te.rd_process.eq(process),
            te.wr_process.eq(wr_process),
            If(vmode,
                te.rd_valid.eq(vec.t_rd_valid), *pm.command(te, "rd", vec.t_rd_shared, vec.t_rd_tag),
                te.wr_valid.eq(vec.t_wr_valid), *pm.command(te, "wr", vec.t_wr_shared, vec.t_wr_tag),
                te.wdata.eq(vec.t_wdata), te.wmask.eq(vec.t_wmask), te.wr_bcast.eq(vec.t_wr_bcast),
            ).Else(
                te.rd_valid.eq(te_rd_req & ~te_wr_req), *pm.command(te, "rd", s_shared, s_tag),
                te.wr_valid.eq(te_wr_req), *pm.command(te, "wr", d_shared, pv_tag),
                te.wdata.eq(pv_dat), te.wmask.eq(pv_mask),
            ),
            te_wr_go.eq(te_wr_req & te.wr_ready),
            te_rd_go.eq(te_rd_req & ~te_wr_req & te.rd_ready),
        ]
