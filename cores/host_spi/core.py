"""Host port: the inference-engine datasheet's SPI/QPI protocol in gateware.

The PHY (phy.py) turns pin activity into bytes and end-of-transaction
records; this module decodes commands, enforces the protocol's rules (status,
errors, chunked writes, lengths, windows), moves data between the link and
main RAM with Wishbone DMA, and posts completed commands to the server
firmware through a message FIFO (the MCORE's ztamMsgq).  Command codes,
status bits, error causes and layouts come from spec/host_protocol.py.

The host can only write inside the model, tensor and server windows: the
window bounds are constants of the gateware, checked on every word.
"""

from migen import Case, Cat, If, Mux, Signal, Constant
from migen.genlib.fsm import FSM, NextState, NextValue
from migen.genlib.cdc import MultiReg

from litex.gen import LiteXModule
from litex.soc.cores.dma import WishboneDMAReader, WishboneDMAWriter
from litex.soc.integration.doc import ModuleDoc
from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.csr import CSR, CSRField, CSRStatus

from tensorsoc.cores.csr_storage import storage_class

from tensorsoc.cores.host_spi.phy import HostSPIPHY, EPOCH_BITS
from tensorsoc.cores.host_spi.pins import connect_lines
from tensorsoc.cores.host_spi.sensor import SensorDMA
from tensorsoc.spec.host_protocol import (ALIASES, ALLOWED_IN_SEQUENCE, CHUNK_SIZE, COMMANDS, DEVICE_ID, DUMMY_CLOCKS,
                              RERROR_STATUS_SHIFT, Cmd, ErrorCause, Kind, Msg, Status, Window)

_WRITE_WINDOW = {Cmd.WMODEL: Window.MODEL, Cmd.WSERVER: Window.SERVER, Cmd.WTENSOR: Window.TENSOR}


class WriteQueue(LiteXModule):
    """The host port's queue of words to write to main RAM.

    ``sink`` takes entries of ``data_width`` bits: a data word, or, with
    ``is_addr`` set, the word address the data words after it go to, one
    after another (the words of a write transaction are consecutive, so
    the protocol engine queues its address once, in front of its first
    word); ``source`` gives (address, data) to a Wishbone DMA writer.
    Queueing the address with every word took a FIFO of 66 bits (with
    the stream's first and last flags) in two block RAMs, the 25F's most
    congested net (docs/fpga.md, "The host port's write FIFO without
    addresses"): this one is 35 bits wide, one block RAM.

    ``pipe`` (``SoCConfig.host_write_pipe``): ``source`` comes from a
    register (LiteX ``stream.PipeValid``).  Without it the FIFO's read
    data, a block RAM's output, forms the DMA writer's request (its
    ``is_addr`` bit), which on a shared bus runs through the arbiter
    into the memory in the same clock: the 25F's ``sys`` critical path
    at 2 x 8 x 4 (docs/fpga.md, "The host port's write queue from a
    register").  ``level``: entries in the FIFO; ``held``: a word in the
    output register (0 without it); ``drained``: neither, every word is
    written.
    """

    def __init__(self, depth, data_width=32, adr_width=30, pipe=False):
        self.sink = stream.Endpoint([("is_addr", 1), ("data", data_width)])
        self.source = stream.Endpoint([("address", adr_width), ("data", data_width)])
        self.fifo = fifo = stream.SyncFIFO(self.sink.description, depth, buffered=True)
        if pipe:
            self.out = out = stream.PipeValid(self.source.description)
        else:
            out = None
        self.level = fifo.level
        self.held = out.source.valid if pipe else Constant(0, 1)
        # (Signal() in a statement of its own: Migen's tracer names it from
        # the assignment.  Without the register an expression, not a
        # signal: nothing is added to the netlist unless it is used.)
        if pipe:
            self.drained = Signal()
        else:
            self.drained = fifo.level == 0
        nxt = Signal(adr_width)      # the address of the next data word
        to = out.sink if pipe else self.source
        stmts = [
            self.sink.connect(fifo.sink),
            to.valid.eq(fifo.source.valid & ~fifo.source.is_addr),
            to.address.eq(nxt),
            to.data.eq(fifo.source.data),
            fifo.source.ready.eq(fifo.source.is_addr | to.ready),
        ]
        if pipe:
            stmts += [out.source.connect(self.source), self.drained.eq((fifo.level == 0) & ~out.source.valid)]
        self.comb += stmts
        self.sync += If(fifo.source.valid & fifo.source.ready,
                        nxt.eq(Mux(fifo.source.is_addr, fifo.source.data[:adr_width], nxt + 1)))


class HostSPISlave(LiteXModule):
    """SPI/QPI slave speaking the host protocol of spec/host_protocol.py.

    ``windows`` maps protocol.Window to (byte address, size) in main RAM.
    ``pads``: the datasheet's pins (cores/host_spi/pins.py: CS_N, CLK,
    MOSI, MISO and Q0..Q3, bidirectional ones split into in / out / output
    enable); MISO low at reset selects QPI.  ``sensor_pads``:
    valid, data[8] in; ready out (a byte stream filling the input tensor on
    Acquire).  ``msb_first`` selects the build option for the bit order.
    ``sensor`` False: no sensor port (``SoCConfig.host_sensor=0``): the
    stream's ready stays low and Acquire answers the error SENSOR.
    ``readback`` False: the storage registers (``status_set`` ..
    ``spec3``), which the firmware only writes, read as 0
    (``SoCConfig.csr_readback=0``, cores/csr_storage.py).

    ``write_pipe`` (class attribute; ``host_port(..., write_pipe=True)``
    sets it on the instance before the constructor runs): the write
    queue's output from a register (``SoCConfig.host_write_pipe``,
    WriteQueue).  It is not a constructor parameter because a new
    parameter renumbers the constructor's closure cells, and Migen's
    name tracer (Python 3.11) names signals from those numbers: every
    board's netlist would change (docs/fpga.md, "The host port's write
    queue from a register").
    """

    write_pipe = False

    def __init__(self, pads, sensor_pads, windows, msb_first=False, bus_data_width=32, bus_adr_width=30,
                 sensor=True, readback=True):
        self.intro = ModuleDoc(__doc__)
        self.wb_write = wishbone.Interface(data_width=bus_data_width, adr_width=bus_adr_width)
        self.wb_read = wishbone.Interface(data_width=bus_data_width, adr_width=bus_adr_width)

        # Firmware interface (CSRs) -------------------------------------
        Storage = storage_class(readback)
        self._status = CSRStatus(32, description="Status word as the host reads it (spec/host_protocol.py Status).")
        self._status_set = Storage(32, description="Write 1s to set status bits 0..2 (busy flags).")
        self._status_clear = Storage(description="Finish a command: clear busy bits and, in the same write, "
                                                    "raise an error, so the host never sees one without the other.",
                                        fields=[
            CSRField("busy", size=3, description="1s clear status bits 0..2."),
            CSRField("error", size=8, offset=8, description="ErrorCause to raise (0: none)."),
        ])
        self._error = Storage(8, description="Write an ErrorCause to raise the error bit (first error wins).")
        self._error_cause = CSRStatus(8, description="Cause of the pending error (0: none).")
        self._msg_valid = CSRStatus(1, description="A message from the host is waiting.")
        self._msg_code = CSRStatus(8, description="Message code (protocol.Msg) at the head of the queue.")
        self._msg_length = CSRStatus(32, description="Message length word at the head of the queue.")
        self._msg_pop = CSR()
        self._msg_pop.description = "Write to remove the head message."
        self._rtensor_addr = Storage(32, description="Byte address RTensor reads from.")
        self._rtensor_len = Storage(32, description="Bytes RTensor returns (the host must read exactly this many).")
        self._rtimings_addr = Storage(32, description="Byte address RTimings reads from.")
        self._rtimings_len = Storage(32, description="Bytes RTimings returns.")
        self._input_len = Storage(32, description="Input tensor bytes: the WTensor length (0: unchecked) and the Acquire frame length.")
        self._spec = []
        for i in range(4):
            csr = Storage(32, name=f"spec{i}", description=f"RSpec bytes {4*i}..{4*i+3}.")
            setattr(self, f"_spec{i}", csr)
            self._spec.append(csr)
        self._mode = CSRStatus(fields=[
            CSRField("qpi", size=1, description="1: QPI (MISO was low at reset), 0: SPI."),
            CSRField("msb_first", size=1, description="Bit order build option."),
        ])

        # # #

        # QPI strap: MISO low at reset selects QPI (the datasheet: "tie the
        # MISO pin to ground"); it is sampled for the first clocks after reset.
        qpi = Signal()
        miso_sync = Signal(reset=1)
        strap_count = Signal(3)
        self.specials += MultiReg(pads.miso_i, miso_sync, reset=1)
        self.sync += If(strap_count != 7, strap_count.eq(strap_count + 1), qpi.eq(~miso_sync))
        self.comb += [self._mode.fields.qpi.eq(qpi), self._mode.fields.msb_first.eq(int(msb_first))]

        # The PHY shifts data lines: MOSI/MISO in SPI, Q0..Q3 in QPI.
        lines, connect = connect_lines(pads, qpi)
        self.comb += connect
        self.phy = phy = HostSPIPHY(lines, qpi, msb_first=msb_first)
        # Words are assembled in memory byte order already: LiteX's DMA swaps
        # bytes for "little", so ask for "big" (no swap).
        self.dma_w = dma_w = WishboneDMAWriter(self.wb_write, endianness="big")
        # Written words queue here, so receiving never waits for the bus:
        # a whole chunk fits (block RAM), so a chunk comes in at the link's
        # rate whatever the memory's (SDRAM behind an L2 cache is slower
        # than QPI), and the transaction ends without waiting for memory.
        # ``drained``: every word queued is written (the DMA writer takes a
        # word off the queue when the bus acknowledges it).  Its entries
        # are data words and, in front of each transaction's first word,
        # the address they go to (WriteQueue): one block RAM, 64 entries
        # and the FIFO's output register, a chunk's 64 words and its
        # address (and, with ``write_pipe``, the queue's own register).
        self.wfifo = wfifo = WriteQueue(CHUNK_SIZE * 8 // bus_data_width, bus_data_width, bus_adr_width,
                                        pipe=self.write_pipe)
        self.comb += wfifo.source.connect(dma_w.sink)
        # (Without the register, the signal of old rather than the queue's
        # ``drained`` expression: the same function, and the boards'
        # netlists and placements stay as they were.)
        if self.write_pipe:
            drained = wfifo.drained
        else:
            drained = Signal()
            self.comb += drained.eq(wfifo.level == 0)
        self.dma_r = dma_r = WishboneDMAReader(self.wb_read, endianness="big", fifo_depth=4)
        # Read addresses reach the reader through a register stage both ways
        # (LiteX stream.Buffer, valid and ready piped): the reader takes an
        # address in the clock the bus acknowledges it, so without it the
        # memory's acknowledge (the L2 cache's block RAM and tag compare)
        # ran on into this FSM's counters in the same clock: the ULX3S's
        # `sys` critical path (docs/fpga.md).  It counts in rd_out like an
        # address the reader holds.
        self.rd_q = rd_q = stream.Buffer(dma_r.sink.description, pipe_valid=True, pipe_ready=True)
        self.comb += rd_q.source.connect(dma_r.sink)
        if sensor:
            self.sensor = sensor = SensorDMA(sensor_pads, windows[Window.TENSOR], bus_data_width, bus_adr_width)
        else:
            # No sensor port (SoCConfig.host_sensor=0): the stream is never
            # taken, and Acquire answers SENSOR (below).
            self.sensor = sensor = None
            self.comb += sensor_pads.ready.eq(0)
        self.msgq = msgq = stream.SyncFIFO([("code", 8), ("length", 32)], 8)

        # Status and errors ------------------------------------------------
        busy = Signal(3)
        error = Signal()
        cause = Signal(8)
        set_error = Signal()
        new_cause = Signal(8)
        hw_set_busy = Signal(3)
        hw_clear_busy = Signal(3)
        tensor_written = Signal()    # a WTensor posted: bit 0 is set for it
        tensor_pending = Signal()    # bit 0 is a WTensor's (Inference may queue behind it)
        clear_error = Signal()
        status = Signal(32)
        self.comb += [
            status.eq(Cat(busy, Constant(0, 5), error)),
            self._status.status.eq(status),
            self._error_cause.status.eq(cause),
        ]
        fw_error = self._error.re
        self.sync += [
            tensor_pending.eq(tensor_written | (tensor_pending & busy[Status.BUSY_WRITE])),
            busy.eq((busy | hw_set_busy | Mux(self._status_set.re, self._status_set.storage[:3], 0))
                    & ~Mux(self._status_clear.re, self._status_clear.fields.busy, 0) & ~hw_clear_busy),
            If(clear_error,
                error.eq(0), cause.eq(0),
            ).Elif(set_error & ~error,
                error.eq(1), cause.eq(new_cause),
            ).Elif(fw_error & ~error,
                error.eq(1), cause.eq(self._error.storage),
            ).Elif(self._status_clear.re & (self._status_clear.fields.error != 0) & ~error,
                error.eq(1), cause.eq(self._status_clear.fields.error),
            ),
        ]
        raise_error = lambda c: [set_error.eq(1), new_cause.eq(int(c))]
        self.comb += If(phy.underrun, *raise_error(ErrorCause.UNDERRUN)).Elif(
            phy.overrun, *raise_error(ErrorCause.OVERRUN))

        # Messages to the firmware ------------------------------------------
        # A message waits in ``posts`` until every word written before it is
        # in memory (``drained``): the firmware reads what the host wrote as
        # soon as it hears of it.  In posting order, so an Inference queued
        # behind a WTensor still comes after it.
        post = Signal()
        post_code = Signal(8)
        post_len = Signal(32)
        self.posts = posts = stream.SyncFIFO([("code", 8), ("length", 32)], 4)
        post_msg = If(post,
            posts.sink.valid.eq(1), posts.sink.code.eq(post_code), posts.sink.length.eq(post_len),
        )
        if sensor is not None:
            post_msg = post_msg.Elif(sensor.done,
                posts.sink.valid.eq(1), posts.sink.code.eq(int(Msg.ACQUIRE_DONE)), posts.sink.length.eq(sensor.length),
            )
        self.comb += [
            post_msg,
            msgq.sink.valid.eq(posts.source.valid & drained),
            msgq.sink.code.eq(posts.source.code),
            msgq.sink.length.eq(posts.source.length),
            posts.source.ready.eq(msgq.sink.ready & drained),
            self._msg_valid.status.eq(msgq.source.valid),
            self._msg_code.status.eq(msgq.source.code),
            self._msg_length.status.eq(msgq.source.length),
            msgq.source.ready.eq(self._msg_pop.re),
        ]
        if sensor is not None:
            self.comb += sensor.done_ack.eq(~post)

        # Command decode ----------------------------------------------------
        cmd_byte = Signal(8)
        cmd = Signal(8)          # aliases resolved
        known = Signal()
        kind = Signal(2)
        fixed_len = Signal(5)
        dma_read = Signal()
        while_busy = Signal()
        chunked = Signal()
        neutral = Signal()
        behind_tensor = Signal()
        cases = {}
        for code in list(COMMANDS) + list(ALIASES):
            info = COMMANDS[ALIASES.get(code, code)]
            c = info.cmd
            cases[int(code)] = [
                cmd.eq(int(c)), known.eq(1), kind.eq(int(info.kind)),
                fixed_len.eq(info.read_len or 0), dma_read.eq(info.kind == Kind.READ and info.read_len is None),
                while_busy.eq(int(info.allowed_while_busy)), chunked.eq(int(info.chunked)),
                neutral.eq(int(c in ALLOWED_IN_SEQUENCE)),
                behind_tensor.eq(int(info.behind_tensor_write)),
            ]
        cases["default"] = [cmd.eq(0), known.eq(0)]
        self.comb += Case(cmd_byte, cases)

        # Read sources: fixed words and DMA ---------------------------------
        # Words of the fixed-length answers, chosen at decode time.
        words = [Signal(32, name=f"fixed_word{i}") for i in range(4)]
        word_idx = Signal(3)
        byte_idx = Signal(2)
        read_len = Signal(32)    # bytes the host must read
        rd_addr = Signal(30)     # next word address to request (DMA reads)
        rd_left = Signal(32)     # words still to request
        rd_out = Signal(32)      # words requested and not yet consumed
        cur_word = Signal(32)
        have_word = Signal()
        fsm_reading_fixed = Signal()

        # Transaction state -------------------------------------------------
        epoch = Signal(EPOCH_BITS)
        nbytes = Signal(32)      # data bytes after the command byte
        acc = Signal(32)         # write word being assembled
        wr_base = Signal(30)     # window base (word address)
        wr_size = Signal(32)     # window size in bytes
        wr_offset = Signal(32)   # byte offset in the window of the next byte
        overflow = Signal()
        too_long = Signal()
        addr_queued = Signal()   # the write FIFO holds this transaction's address
        seq_active = Signal()
        seq_cmd = Signal(8)
        seq_offset = Signal(32)
        clocks = Signal(32)

        win_base = {w: Constant(b >> 2, 30) for w, (b, s) in windows.items()}
        win_size = {w: Constant(s, 32) for w, (b, s) in windows.items()}

        cmd_clocks = Mux(qpi, 2, 8)
        shift = Mux(qpi, 1, 3)
        byte_mask = Mux(qpi, 1, 7)

        rx = phy.rx
        end = phy.end
        rx_mine = Signal()       # rx head belongs to the current transaction
        end_mine = Signal()      # end record is the current transaction's
        self.comb += [
            rx_mine.eq(rx.valid & (rx.epoch == epoch) & ~rx.sot),
            end_mine.eq(end.valid & (end.epoch == epoch) & ~rx_mine),
        ]

        # Bytes towards the transmitter: from the fixed words or the DMA word.
        fixed_word = Signal(32)
        tx_word = Signal(32)
        self.comb += [
            If(word_idx < (read_len >> 2), Case(word_idx, {i: fixed_word.eq(words[i]) for i in range(4)})),
            tx_word.eq(Mux(fsm_reading_fixed, fixed_word, Mux(have_word, cur_word, 0))),
            phy.tx.epoch.eq(epoch),
            Case(byte_idx, {i: phy.tx.data.eq(tx_word[8 * i:8 * i + 8]) for i in range(4)}),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        self.comb += fsm_reading_fixed.eq(fsm.ongoing("READ_FIXED"))
        fsm.act("IDLE",
            If(end.valid & ~(rx.valid & (rx.epoch == end.epoch)),
                # A transaction ended before its command byte was complete.
                end.ready.eq(1),
                If(end.active & (end.clocks != 0), *raise_error(ErrorCause.PARTIAL_BYTE)),
            ).Elif(rx.valid & rx.sot,
                rx.ready.eq(1),
                NextValue(cmd_byte, rx.data),
                NextValue(epoch, rx.epoch),
                NextState("DECODE"),
            ).Elif(rx.valid,
                rx.ready.eq(1),   # data of a transaction already closed
            ),
        )
        fsm.act("DECODE",
            NextValue(nbytes, 0),
            NextValue(overflow, 0),
            NextValue(too_long, 0),
            NextValue(addr_queued, 0),
            NextValue(word_idx, 0),
            NextValue(byte_idx, 0),
            NextValue(have_word, 0),
            If(~known,
                *raise_error(ErrorCause.UNKNOWN_COMMAND),
                NextState("IGNORE"),
            ).Elif((busy != 0) & ~while_busy
                   & ~(behind_tensor & tensor_pending & (busy == 1 << Status.BUSY_WRITE)),
                *raise_error(ErrorCause.BUSY),
                NextState("IGNORE"),
            ).Elif(seq_active & ~neutral & (cmd != seq_cmd),
                *raise_error(ErrorCause.BROKEN_SEQUENCE),
                NextValue(seq_active, 0), NextValue(seq_offset, 0),
                NextState("IGNORE"),
            ).Elif(kind == Kind.READ,
                Case(cmd, {
                    int(Cmd.RSTATUS): [NextValue(words[0], status), clear_error.eq(1)],
                    # RERROR: cause | status << 16, nothing cleared (protocol.encode_rerror).
                    int(Cmd.RERROR): NextValue(words[0], cause | (status[:16] << RERROR_STATUS_SHIFT)),
                    int(Cmd.RID): NextValue(words[0], DEVICE_ID),
                    int(Cmd.RSPEC): [NextValue(words[i], self._spec[i].storage) for i in range(4)],
                    int(Cmd.RTENSOR): [NextValue(rd_addr, self._rtensor_addr.storage[2:]),
                                       NextValue(read_len, self._rtensor_len.storage),
                                       NextValue(rd_left, (self._rtensor_len.storage + 3) >> 2)],
                    int(Cmd.RTIMINGS): [NextValue(rd_addr, self._rtimings_addr.storage[2:]),
                                        NextValue(read_len, self._rtimings_len.storage),
                                        NextValue(rd_left, (self._rtimings_len.storage + 3) >> 2)],
                }),
                If(dma_read,
                    NextValue(rd_out, 0),
                    NextState("READ_DMA"),
                ).Else(
                    NextValue(read_len, fixed_len),
                    NextState("READ_FIXED"),
                ),
            ).Elif(kind == Kind.WRITE,
                Case(cmd, {int(c): [NextValue(wr_base, win_base[w]), NextValue(wr_size, win_size[w])]
                           for c, w in _WRITE_WINDOW.items()}),
                NextValue(wr_offset, Mux(chunked & seq_active, seq_offset, 0)),
                If(chunked & ~seq_active, NextValue(seq_offset, 0)),
                NextState("WRITE"),
            ).Else(
                NextState("ACTION"),
            ),
        )
        # Host bytes of a transaction that is ignored or that sends none.
        drop_rx = If(rx_mine, rx.ready.eq(1), NextValue(nbytes, nbytes + 1))

        fsm.act("IGNORE",
            drop_rx,
            If(end_mine, end.ready.eq(1), NextState("IDLE")),
        )

        # Fixed-length reads: up to four words from registers.
        fsm.act("READ_FIXED",
            drop_rx,
            # Past the answer the host reads zeros (and gets BAD_LENGTH).
            phy.tx.valid.eq(1),
            If(phy.tx.valid & phy.tx.ready,
                NextValue(byte_idx, byte_idx + 1),
                If((byte_idx == 3) & (word_idx != 4), NextValue(word_idx, word_idx + 1)),
            ),
            If(end_mine, NextValue(clocks, end.clocks), end.ready.eq(1), NextState("READ_END")),
        )
        # DMA reads: addresses to the reader, words to the transmitter.
        fsm.act("READ_DMA",
            drop_rx,
            rd_q.sink.valid.eq((rd_left != 0) & (rd_out < 4)),
            rd_q.sink.address.eq(rd_addr),
            If(rd_q.sink.valid & rd_q.sink.ready,
                NextValue(rd_addr, rd_addr + 1),
                NextValue(rd_left, rd_left - 1),
            ),
            # Past the answer (all words requested and consumed) the host reads zeros.
            phy.tx.valid.eq(have_word | ((rd_left == 0) & (rd_out == 0))),
            If(phy.tx.valid & phy.tx.ready,
                NextValue(byte_idx, byte_idx + 1),
                If(byte_idx == 3, NextValue(have_word, 0)),
            ),
            dma_r.source.ready.eq(~have_word | (phy.tx.valid & phy.tx.ready & (byte_idx == 3))),
            If(dma_r.source.valid & dma_r.source.ready,
                NextValue(cur_word, dma_r.source.data),
                NextValue(have_word, 1),
            ),
            # rd_out counts requests not yet consumed from the reader.
            NextValue(rd_out, rd_out + (rd_q.sink.valid & rd_q.sink.ready)
                      - (dma_r.source.valid & dma_r.source.ready)),
            If(end_mine, NextValue(clocks, end.clocks), end.ready.eq(1), NextState("READ_DMA_FLUSH")),
        )
        # The host stopped reading: drain what the reader still returns.
        fsm.act("READ_DMA_FLUSH",
            dma_r.source.ready.eq(1),
            NextValue(rd_out, rd_out - (dma_r.source.valid & dma_r.source.ready)),
            If((rd_out == 0) | ((rd_out == 1) & dma_r.source.valid), NextState("READ_END")),
        )
        # Clocks after the command byte: the dummy clocks, then the data.
        after_cmd = Signal(32)
        self.comb += after_cmd.eq(clocks - cmd_clocks)
        fsm.act("READ_END",
            If((after_cmd & byte_mask) != 0,
                *raise_error(ErrorCause.PARTIAL_BYTE),
            ).Elif(after_cmd != DUMMY_CLOCKS + (read_len << shift),
                *raise_error(ErrorCause.BAD_LENGTH),
            ),
            NextState("IDLE"),
        )

        # Writes: bytes to words to the DMA writer, inside the window only.
        # ``in_window`` is registered: the offset and the window's size are
        # set as the FSM enters WRITE (the first check, at the fourth byte,
        # is three clocks later at the soonest) and the offset moves on
        # with a word's fourth byte (the next check, at the next word's
        # fourth byte, is four clocks later at the soonest: four bytes, one
        # a clock), so the register always holds the value of the offset
        # checked.  Its add and compare, then the error
        # cause's priority chain, were the Colorlight i5 accelerator
        # build's deepest sys path in the logic once main RAM answered from
        # flip-flops (docs/fpga_history.md, "Main RAM answers from flip-flops").
        in_window = Signal()
        self.sync += in_window.eq(wr_offset + 4 <= wr_size)
        fsm.act("WRITE",
            If(rx_mine,
                rx.ready.eq(1),
                NextValue(acc, Cat(acc[8:], rx.data)),
                NextValue(nbytes, nbytes + 1),
                If(nbytes[:2] == 3,
                    If(chunked & (nbytes >= CHUNK_SIZE),
                        NextValue(too_long, 1),
                        *raise_error(ErrorCause.CHUNK_TOO_LONG),
                    ).Elif(~in_window,
                        NextValue(overflow, 1),
                        *raise_error(ErrorCause.WINDOW_OVERFLOW),
                    ).Else(
                        NextState("WRITE_WORD"),
                    ),
                    NextValue(wr_offset, wr_offset + 4),
                ),
            ).Elif(end_mine,
                NextValue(clocks, end.clocks),
                end.ready.eq(1),
                NextState("WRITE_END"),
            ),
        )
        # The transaction's first word goes in behind its address (one
        # clock more: the receiver's FIFO holds the bytes meanwhile).
        fsm.act("WRITE_WORD",
            wfifo.sink.valid.eq(1),
            If(addr_queued,
                wfifo.sink.data.eq(acc),
                If(wfifo.sink.ready, NextState("WRITE")),
            ).Else(
                wfifo.sink.is_addr.eq(1),
                wfifo.sink.data.eq(wr_base + ((wr_offset - 4) >> 2)),
                If(wfifo.sink.ready, NextValue(addr_queued, 1)),
            ),
        )
        chunk_wait = Signal()
        self.sync += If(chunk_wait & drained, chunk_wait.eq(0))
        self.comb += If(chunk_wait & drained, hw_clear_busy.eq(1 << Status.BUSY_WRITE))
        write_ok = Signal()
        final_chunk = Signal()
        self.comb += [
            write_ok.eq(~too_long & ~overflow & ((clocks & byte_mask) == 0) & (nbytes[:2] == 0)
                        & ((cmd != Cmd.WTENSOR) | (self._input_len.storage == 0) | (nbytes == self._input_len.storage))),
            final_chunk.eq(nbytes != CHUNK_SIZE),
        ]
        fsm.act("WRITE_END",
            If((clocks & byte_mask) != 0,
                *raise_error(ErrorCause.PARTIAL_BYTE),
            ).Elif(~write_ok & ~too_long & ~overflow,
                *raise_error(ErrorCause.BAD_LENGTH),
            ),
            If(~write_ok,
                NextValue(seq_active, 0), NextValue(seq_offset, 0),
                NextState("IDLE"),
            ).Elif(chunked & ~final_chunk,
                # Intermediate chunk: BUSY_WRITE until its words are in
                # memory (chunk_wait); the host waits for it to clear
                # before the next chunk, so the FIFO never holds two.
                hw_set_busy.eq(1 << Status.BUSY_WRITE),
                NextValue(chunk_wait, 1),
                NextValue(seq_active, 1), NextValue(seq_cmd, cmd),
                NextValue(seq_offset, seq_offset + CHUNK_SIZE),
                NextState("IDLE"),
            ).Else(
                hw_set_busy.eq(1 << Status.BUSY_WRITE),
                tensor_written.eq(cmd == Cmd.WTENSOR),
                post.eq(1),
                post_code.eq(Mux(cmd == Cmd.WMODEL, int(Msg.MODEL_DONE),
                                 Mux(cmd == Cmd.WSERVER, int(Msg.SERVER_DONE), int(Msg.TENSOR_DONE)))),
                post_len.eq(Mux(chunked, seq_offset + nbytes, nbytes)),
                NextValue(seq_active, 0), NextValue(seq_offset, 0),
                NextState("IDLE"),
            ),
        )

        # Commands without data.
        fsm.act("ACTION",
            drop_rx,
            If(end_mine, NextValue(clocks, end.clocks), end.ready.eq(1), NextState("ACTION_END")),
        )
        fsm.act("ACTION_END",
            If((clocks & byte_mask) != 0,
                *raise_error(ErrorCause.PARTIAL_BYTE),
            ).Elif(nbytes != 0,
                *raise_error(ErrorCause.BAD_LENGTH),
            ).Elif(cmd == Cmd.INFERENCE,
                hw_set_busy.eq(1 << Status.WAIT_INFERENCE),
                post.eq(1), post_code.eq(int(Msg.INFERENCE)), post_len.eq(0),
            ).Else(
                *([hw_set_busy.eq(1 << Status.WAIT_ACQUIRE), sensor.start.eq(1)] if sensor is not None else
                  # Acquire without a sensor port: the acquisition fails at once.
                  raise_error(ErrorCause.SENSOR)),
            ),
            NextState("IDLE"),
        )
        if sensor is not None:
            self.comb += sensor.length_in.eq(self._input_len.storage)


def host_port(*args, write_pipe=False, **kwargs):
    """A HostSPISlave (its arguments) with ``write_pipe`` set before its
    constructor runs (see HostSPISlave.write_pipe)."""
    port = HostSPISlave.__new__(HostSPISlave)
    port.write_pipe = write_pipe
    port.__init__(*args, **kwargs)
    return port
