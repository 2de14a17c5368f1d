"""Gateware model around the stand-alone TensorEngine: a memory model of the
PCORE array's TensorEngine port (docs/pcore.md).  DDR is LiteX's own Wishbone
SRAM (verification/te/top.py)."""

from migen import *

from tensorsoc.cores.pcore.pcore import TEPort
from tensorsoc.cores.tensor_engine.engine import PCOREMap


class PCOREMemoryModel(Module):
    """The PCORE array as the TensorEngine sees it: two process spaces of
    private and shared vector memories (memories ``te_pm_<kind><process>``,
    each with a read port for the read channel and a write port per PCORE
    for the write channel (``te.wr_bcast`` writes several PCOREs in one
    clock), all usable in the same clock), read data two clocks
    after the read command, and a kernel model that keeps ``busy[process]``
    high for ``16 + (entry & 15)`` clocks (``te.rd_ready``/``te.wr_ready``
    low on that process meanwhile)."""

    def __init__(self, config):
        pm = PCOREMap(config)
        vw = config.vw
        self.te = te = TEPort(config.np, config.nt, vw, pm.addr_bits)
        self.start_valid = Signal()
        self.start_ready = Signal()
        self.start_func = Signal(32)
        self.start_process = Signal()
        self.busy = Signal(2)

        # # #

        pbits = pm.lnp + pm.lnt + pm.lpw - pm.lvw
        sbits = pm.lnp + pm.lsw - pm.lvw
        self.mems = {}
        rdatas = []

        def adr(channel, shared, pcore=None):
            """Word address in a memory of the model from te channel
            ``channel`` (``pcore``: a constant PCORE instead of the channel's)."""
            a, t, p = (getattr(te, f"{channel}_{n}") for n in ("addr", "thread", "pcore"))
            if pcore is not None:
                pcore = C(pcore, pm.lnp) if pm.lnp else C(0, 0)
            else:
                pcore = p[:pm.lnp] if pm.lnp else C(0, 0)
            if shared:
                return Cat(a[:pm.lsw - pm.lvw], pcore)
            return Cat(a[:pm.lpw - pm.lvw], t[:pm.lnt] if pm.lnt else C(0, 0), pcore)
        for process in range(2):
            for kind, depth in (("priv", 1 << pbits), ("shr", 1 << sbits)):
                mem = Memory(16 * vw, depth, name=f"te_pm_{kind}{process}")
                rd = mem.get_port()
                self.specials += mem, rd
                self.mems[(kind, process)] = mem
                shared = kind == "shr"
                hit = Signal()
                self.comb += hit.eq(te.wr_valid & te.wr_ready & (te.wr_process == process) & (te.wr_shared == shared))
                self.comb += rd.adr.eq(adr("rd", shared))
                # One write port per PCORE: a broadcast write (te.wr_bcast)
                # reaches all its PCOREs in the same clock, as in the array.
                for p in range(config.np):
                    wr = mem.get_port(write_capable=True, we_granularity=16)
                    self.specials += wr
                    self.comb += [wr.adr.eq(adr("wr", shared, p)), wr.dat_w.eq(te.wdata),
                                  wr.we.eq(Mux(hit & te.wr_selects(p), te.wmask, 0))]
                rdatas.append(((process, shared), rd.dat_r))

        sel = Signal(2)
        rd1 = Signal()
        out = Signal(16 * vw)
        self.sync += [
            sel.eq(Cat(te.rd_shared, te.rd_process)),
            rd1.eq(te.rd_valid & te.rd_ready),
            te.rvalid.eq(rd1),
            te.rdata.eq(out),
        ]
        self.comb += Case(sel, {(p << 1) | int(s): out.eq(d) for (p, s), d in rdatas})

        running = Signal()
        proc = Signal()
        left = Signal(8)
        self.comb += [
            self.start_ready.eq(~running),
            self.busy.eq(Mux(running, Mux(proc, 0b10, 0b01), 0)),
            te.rd_ready.eq(~Mux(te.rd_process, self.busy[1], self.busy[0])),
            te.wr_ready.eq(~Mux(te.wr_process, self.busy[1], self.busy[0])),
        ]
        self.sync += [
            If(self.start_valid & self.start_ready,
                running.eq(1), proc.eq(self.start_process), left.eq(16 + self.start_func[:4]),
            ).Elif(running,
                left.eq(left - 1),
                If(left == 1, running.eq(0)),
            )
        ]
