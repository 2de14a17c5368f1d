"""Bus-functional model of the PCORE array's ports, for cocotb.

Owns the pins of ``pcore_array_top`` (verification/pcore/build.py): the
TensorEngine data port, kernel start, instruction-memory write port, and
the MCORE's side: the array's CSR bank on a LiteX CSR bus and its
instruction memory's Wishbone slave.  Each method drives one transaction type at the rate
the hardware allows (one vector per clock on each channel of the TensorEngine
port).
"""

import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import cocotb

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.pcore import TEPort
from tensorsoc.verification.pcore.build import csr_map


def pack(lanes):
    v = 0
    for i, x in enumerate(lanes):
        v |= (int(x) & 0xFFFF) << (16 * i)
    return v


def unpack(value, vw):
    out = []
    for i in range(vw):
        x = (value >> (16 * i)) & 0xFFFF
        out.append(x - 0x10000 if x & 0x8000 else x)
    return out


class PcoreArrayBFM:
    def __init__(self, dut, config, imem_words=None):
        self.dut = dut
        self.config = config
        self.imem_words = imem_words or config.pcore_imem_words
        self.clk = dut.sys_clk
        self.csr = csr_map(config, self.imem_words)   # CSR name -> address on the CSR bus

    async def start(self):
        cocotb.start_soon(Clock(self.clk, 10, unit="ns").start())
        d = self.dut
        for s in [getattr(d, f"te_{n}") for n in TEPort.OUT] + [
                  d.te_start_valid, d.te_start_func, d.te_start_process,
                  d.te_imem_we, d.te_imem_adr, d.te_imem_dat_w, d.wb_cyc, d.wb_stb, d.wb_we,
                  d.wb_adr, d.wb_dat_w, d.wb_sel, d.csr_adr, d.csr_re, d.csr_we, d.csr_dat_w]:
            s.value = 0
        d.sys_rst.value = 1
        for _ in range(3):
            await RisingEdge(self.clk)
        d.sys_rst.value = 0
        await RisingEdge(self.clk)

    async def cycle(self):
        await RisingEdge(self.clk)

    # -- TensorEngine data port ------------------------------------------------------
    async def te_transfer(self, cmds):
        """Issue commands ``(we, process, shared, pcore, thread, addr, lanes, mask[, bcast])``
        (``bcast``: the write's ``te.wr_bcast`` PCORE mask, default 0):
        the reads back to back on the read channel and, in the same clocks, the
        writes back to back on the write channel; returns the read data (lists
        of lanes) in read order and the number of clocks taken."""
        d = self.dut
        vw = self.config.vw
        rd = [c for c in cmds if not c[0]]
        wr = [c for c in cmds if c[0]]
        reads = []
        i = j = clocks = 0
        while i < len(rd) or j < len(wr) or len(reads) < len(rd):
            self._te_command("rd", rd[i] if i < len(rd) else None)
            self._te_command("wr", wr[j] if j < len(wr) else None)
            await ReadOnly()
            if int(d.te_rvalid.value):
                reads.append(unpack(int(d.te_rdata.value), vw))
            rd_taken = i < len(rd) and int(d.te_rd_ready.value)
            wr_taken = j < len(wr) and int(d.te_wr_ready.value)
            await RisingEdge(self.clk)
            clocks += 1
            i += rd_taken
            j += wr_taken
            if clocks > 20 * len(cmds) + 1000:
                raise TimeoutError("TensorEngine port stalled")
        self._te_command("rd", None)
        self._te_command("wr", None)
        return reads, clocks

    def _te_command(self, channel, cmd):
        """Drive TensorEngine channel ``channel`` ("rd"/"wr") with ``cmd`` (None: idle)."""
        d = self.dut
        if cmd is None:
            getattr(d, f"te_{channel}_valid").value = 0
            return
        we, proc, shared, pcore, thread, addr, lanes, mask = cmd[:8]
        for n, v in (("valid", 1), ("process", proc), ("shared", int(shared)), ("pcore", pcore),
                     ("thread", thread), ("addr", addr)):
            getattr(d, f"te_{channel}_{n}").value = v
        if we:
            d.te_wdata.value = pack(lanes)
            d.te_wmask.value = mask
            d.te_wr_bcast.value = cmd[8] if len(cmd) > 8 else 0

    async def write_private(self, process, image):
        """image: (NP, NT, private_words) -> the whole private space of ``process``."""
        c = self.config
        vw = c.vw
        full = (1 << vw) - 1
        cmds = [(1, process, 0, p, t, a, image[p, t, a * vw:(a + 1) * vw], full)
                for p in range(c.np) for t in range(c.nt) for a in range(c.pcore_private_words // vw)]
        await self.te_transfer(cmds)

    async def write_shared(self, process, image):
        c = self.config
        vw = c.vw
        full = (1 << vw) - 1
        cmds = [(1, process, 1, p, 0, a, image[p, a * vw:(a + 1) * vw], full)
                for p in range(c.np) for a in range(c.pcore_shared_words // vw)]
        await self.te_transfer(cmds)

    async def read_private(self, process):
        c = self.config
        vw = c.vw
        pw = c.pcore_private_words // vw
        cmds = [(0, process, 0, p, t, a, None, 0)
                for p in range(c.np) for t in range(c.nt) for a in range(pw)]
        reads, _ = await self.te_transfer(cmds)
        return np.array(reads, np.int64).reshape(c.np, c.nt, pw * vw)

    async def read_shared(self, process):
        c = self.config
        vw = c.vw
        sw = c.pcore_shared_words // vw
        cmds = [(0, process, 1, p, 0, a, None, 0) for p in range(c.np) for a in range(sw)]
        reads, _ = await self.te_transfer(cmds)
        return np.array(reads, np.int64).reshape(c.np, sw * vw)

    # -- instruction memory and kernel start (TensorEngine side) ------------------------
    async def te_load_program(self, words, base=0):
        d = self.dut
        for i, w in enumerate(words):
            d.te_imem_we.value = 1
            d.te_imem_adr.value = base + i
            d.te_imem_dat_w.value = w
            await RisingEdge(self.clk)
        d.te_imem_we.value = 0

    async def te_start(self, func, process):
        d = self.dut
        d.te_start_valid.value = 1
        d.te_start_func.value = func
        d.te_start_process.value = process
        while True:
            await ReadOnly()
            ok = int(d.te_start_ready.value)
            await RisingEdge(self.clk)
            if ok:
                break
        d.te_start_valid.value = 0

    async def wait_idle(self, timeout=1_000_000):
        for n in range(timeout):
            await ReadOnly()
            if int(self.dut.busy.value) == 0:
                await RisingEdge(self.clk)
                return n
            await RisingEdge(self.clk)
        raise TimeoutError("kernel did not finish")

    # -- MCORE side: CSRs (LiteX CSR bus) and the instruction memory (Wishbone) --------
    async def csr_read(self, name):
        """Read CSR ``name`` (``info`` ... ``macs``): address and read strobe
        for one clock, the bank's registered data after it."""
        d = self.dut
        d.csr_adr.value = self.csr[name]
        d.csr_re.value = 1
        await RisingEdge(self.clk)
        d.csr_re.value = 0
        await ReadOnly()
        value = int(d.csr_dat_r.value)
        await RisingEdge(self.clk)
        return value

    async def csr_write(self, name, value):
        """Write CSR ``name``: address, data and write strobe for one clock."""
        d = self.dut
        d.csr_adr.value = self.csr[name]
        d.csr_dat_w.value = value
        d.csr_we.value = 1
        await RisingEdge(self.clk)
        d.csr_we.value = 0

    async def wb_access(self, word_adr, data=None):
        """One Wishbone access to the instruction memory (word address)."""
        d = self.dut
        d.wb_cyc.value = 1
        d.wb_stb.value = 1
        d.wb_we.value = int(data is not None)
        d.wb_adr.value = word_adr
        d.wb_dat_w.value = data or 0
        d.wb_sel.value = 0xF
        for _ in range(100):
            await ReadOnly()
            ack = int(d.wb_ack.value)
            value = int(d.wb_dat_r.value)
            await RisingEdge(self.clk)
            if ack:
                d.wb_cyc.value = 0
                d.wb_stb.value = 0
                d.wb_we.value = 0
                return value
        raise TimeoutError("no Wishbone ack")

    async def wb_load_program(self, words, base=0):
        for i, w in enumerate(words):
            await self.wb_access(base + i, w)

    async def counters(self):
        return {n: await self.csr_read(n) for n in ("cycles", "vops", "macs")}


def function_word(entry, np=0, nt=0):
    return isa.function_word(entry, np, nt)
