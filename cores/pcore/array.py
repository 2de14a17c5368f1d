"""The PCORE array: NP PCOREs x NT threads x VW lanes, run in lockstep.

``PCOREArrayCore`` is the array with its TensorEngine-facing ports (plain
Migen).  ``PCOREArray`` (``cores/pcore/soc.py``) adds what the MCORE uses:
the control registers as LiteX CSRs and the instruction memory as a
Wishbone slave.  docs/pcore.md describes every port.
"""

from migen import *

from tensorsoc.cores.pcore.pcore import PCore, TEPort
from tensorsoc.cores.pcore.sequencer import PCORESequencer


class PCOREArrayCore(Module):
    """PCORE array with TensorEngine ports.

    TensorEngine data port (``te``): a read channel and a write channel,
    each one vector word per clock, independent of each other (a read and a
    write in the same clock: a PCORE-to-PCORE copy moves a word per clock).

    * ``te.rd_valid``/``te.rd_ready``, ``te.wr_valid``/``te.wr_ready``: a
      channel's command is taken when both are high.  A channel's ``ready``
      is low while a kernel runs on its ``process``: the other process space
      stays accessible.  With one process space
      (``SoCConfig.pcore_processes = 1``) ``ready`` is low while any kernel
      runs, and ``process`` is ignored (the engine's decoder refuses a
      process-1 instruction).
    * Per channel (``rd_``/``wr_``): ``process`` (0/1), ``shared`` (0 private
      / 1 shared), ``pcore``, ``thread`` (ignored for shared), ``addr``:
      vector-word address (element address / VW) in that space.
    * ``te.wdata``: VW lanes of 16 bits, lane 0 in bits 15..0;
      ``te.wmask``: per-lane write enable (write channel).
    * ``te.wr_bcast``: NP bits; when non-zero the write goes to every PCORE
      whose bit is set, in one clock (the same thread, address, lanes and
      mask in each; ``wr_pcore`` is ignored): the TensorEngine's broadcast
      over the PCORE dimension.  0 (unconnected): ``wr_pcore`` only.
    * ``te.rvalid``/``te.rdata``: read data, two clocks after the read
      command; no back-pressure.

    Kernel control: ``start_valid``/``start_ready``, ``start_func`` (function
    word, ``isa.function_word``), ``start_process``; ``busy[p]`` is high while
    a kernel runs on process space ``p``.  Instruction memory write port:
    ``imem_we``, ``imem_adr``, ``imem_dat_w``.
    """

    def __init__(self, config, imem_words=None):
        imem_words = imem_words or config.pcore_imem_words
        np, nt, vw = config.np, config.nt, config.vw
        self.config = config
        self.imem_words = imem_words
        addr_bits = max(config.pcore_private_words // vw, config.pcore_shared_words // vw).bit_length()
        self.te = te = TEPort(np, nt, vw, addr_bits)
        te.processes = config.pcore_processes
        self.start_valid = Signal()
        self.start_ready = Signal()
        self.start_func = Signal(32)
        self.start_process = Signal()
        self.busy = Signal(2)

        # # #

        self.submodules.seq = seq = PCORESequencer(np, nt, vw, imem_words, config.pcore_round_share)
        self.imem_we, self.imem_adr, self.imem_dat_w = seq.imem_we, seq.imem_adr, seq.imem_dat_w
        self.cycles, self.vops, self.macs = seq.cycles, seq.vops, seq.macs

        f_np = self.start_func[16:24]
        f_nt = self.start_func[24:32]
        self.comb += [
            seq.start_valid.eq(self.start_valid),
            self.start_ready.eq(seq.start_ready),
            seq.start_entry.eq(self.start_func[0:16]),
            seq.start_process.eq(self.start_process),
            If((f_np == 0) | (f_np > np), seq.start_np.eq(np)).Else(seq.start_np.eq(f_np)),
            If((f_nt == 0) | (f_nt > nt), seq.start_nt.eq(nt)).Else(seq.start_nt.eq(f_nt)),
            self.busy.eq(Mux(seq.running, Mux(seq.process, 0b10, 0b01), 0)),
        ]
        if config.pcore_processes > 1:
            self.comb += [
                te.rd_ready.eq(~Mux(te.rd_process, self.busy[1], self.busy[0])),
                te.wr_ready.eq(~Mux(te.wr_process, self.busy[1], self.busy[0])),
            ]
        else:       # one process space: the engine waits for any kernel
            self.comb += [te.rd_ready.eq(~seq.running), te.wr_ready.eq(~seq.running)]

        self.pcores = []
        for p in range(np):
            pc = PCore(p, seq, te, nt, vw, config.pcore_private_words, config.pcore_shared_words,
                       dsp_shift=bool(config.pcore_shift_dsp), round_share=config.pcore_round_share)
            setattr(self.submodules, f"pcore{p}", pc)
            self.pcores.append(pc)

        # Read response: the memory answers one clock after the command, the
        # PCORE mux below is registered: rdata two clocks after the command.
        rd_cmd = Signal()
        rd_pcore = Signal(len(te.rd_pcore))
        self.sync += [
            rd_cmd.eq(te.rd_valid & te.rd_ready),
            rd_pcore.eq(te.rd_pcore),
            te.rvalid.eq(rd_cmd),
            te.rdata.eq(Array(pc.te_rdata for pc in self.pcores)[rd_pcore]),
        ]
