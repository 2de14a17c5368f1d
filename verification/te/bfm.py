"""cocotb driver of the stand-alone TensorEngine top (verification/te/top.py):
queue pushes, back-door access to every memory, and the mapping between the
top's memories and the reference executor's images."""

import numpy as np
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer


class TEBench:
    def __init__(self, dut, config, ddr_bytes):
        self.dut = dut
        self.config = config
        self.ddr_bytes = ddr_bytes
        self.starts = []          # (process, func) of every kernel start seen
        # transfers executed per data path; "broadcast": vector transfers
        # broadcast over PCOREs (one write per word to all of them)
        self.paths = {"vector": 0, "element": 0, "broadcast": 0}
        self.clk = dut.sys_clk
        from tensorsoc.cores.tensor_engine.ports import scratch_word_bytes
        self.scratch_word = scratch_word_bytes(config.vw, config.te_vector_path)   # bytes per scratch-pad word

    async def start(self):
        from cocotb.clock import Clock
        import cocotb
        Clock(self.clk, 10, unit="ns").start()
        d = self.dut
        d.q_we.value = 0
        d.q_data.value = 0
        d.errors_clear.value = 0
        d.cb_pop.value = 0
        d.trace_pop.value = 0
        d.sys_rst.value = 1
        await ClockCycles(self.clk, 3)
        d.sys_rst.value = 0
        await ClockCycles(self.clk, 2)
        cocotb.start_soon(self._watch_starts())
        cocotb.start_soon(self._watch_paths())

    async def _watch_starts(self):
        d = self.dut
        while True:
            await RisingEdge(d.start_valid)
            self.starts.append((int(d.start_process.value), int(d.start_func.value)))

    async def _watch_paths(self):
        d = self.dut
        while True:
            await RisingEdge(d.xfer_active)
            await RisingEdge(self.clk)
            self.paths["vector" if int(d.xfer_vector.value) else "element"] += 1
            self.paths["broadcast"] += int(d.xfer_vector.value) and int(d.xfer_bcast.value)

    # -- queue ------------------------------------------------------------
    async def push(self, words):
        d = self.dut
        credit = 0
        for w in words:
            while credit <= 2:
                d.q_we.value = 0
                await RisingEdge(self.clk)
                credit = int(d.q_space.value)
            d.q_data.value = w
            d.q_we.value = 1
            credit -= 1
            await RisingEdge(self.clk)
        d.q_we.value = 0

    async def wait_idle(self, timeout=2_000_000):
        """Wait until the engine is idle; fails after ``timeout`` clocks (an
        engine that hangs fails the test instead of stalling the run)."""
        from cocotb.utils import get_sim_time
        d = self.dut
        await ClockCycles(self.clk, 3)
        t0 = get_sim_time("ns")
        while not int(d.idle.value):
            left = timeout * 10 - (get_sim_time("ns") - t0)
            assert left > 0, f"the engine is not idle {timeout} clocks after the words were pushed"
            await First(RisingEdge(d.idle), Timer(left, unit="ns"))
            await ClockCycles(self.clk, 1)
        return 0

    async def run(self, words):
        """Push words and wait until the engine is idle; returns the clocks taken."""
        from cocotb.utils import get_sim_time
        t0 = get_sim_time("ns")
        await self.push(words)
        await self.wait_idle()
        return int((get_sim_time("ns") - t0) // 10)

    async def errors(self, clear=True):
        d = self.dut
        v = int(d.errors.value)
        if clear:
            d.errors_clear.value = 1
            await RisingEdge(self.clk)
            d.errors_clear.value = 0
            await RisingEdge(self.clk)
        return v

    async def callbacks(self):
        d = self.dut
        out = []
        await RisingEdge(self.clk)
        while int(d.cb_valid.value):
            out.append(int(d.cb_tag.value))
            d.cb_pop.value = 1
            await RisingEdge(self.clk)
            d.cb_pop.value = 0
            await RisingEdge(self.clk)
        return out

    async def trace_words(self):
        """Drain the activity trace buffer (as the MCORE does through TRACE_DATA)."""
        d = self.dut
        out = []
        await RisingEdge(self.clk)
        while True:
            w = int(d.trace_word.value)
            if not w and len(out) % 2 == 0:
                break
            out.append(w)
            d.trace_pop.value = 1
            await RisingEdge(self.clk)
            d.trace_pop.value = 0
            await RisingEdge(self.clk)
        return out

    # -- back door ------------------------------------------------------------
    def _mem(self, name):
        return getattr(self.dut, name)

    def write_words(self, name, words):
        m = self._mem(name)
        for i, w in enumerate(words):
            m[i].value = int(w)

    def read_words(self, name, n):
        m = self._mem(name)
        return [int(m[i].value) for i in range(n)]

    def load(self, machine):
        """Copy the executor's memory images into the top."""
        self.ddr_before = machine.ddr.copy()
        self.write_words("te_ddr", _bytes_to_words(machine.ddr))
        self.write_words("te_scratch", _bytes_to_words(machine.scratch, self.scratch_word))
        self.write_words("te_spu", [int(v) & 0xFFFF for v in machine.spu])
        for p in range(2):
            self.write_words(f"te_pm_priv{p}", _vectors(machine.private[p].reshape(-1), self.config.vw))
            self.write_words(f"te_pm_shr{p}", _vectors(machine.shared[p].reshape(-1), self.config.vw))

    def snapshot(self):
        """The top's memories as executor-shaped numpy images."""
        c = self.config
        out = {"ddr": _words_to_bytes(self.read_words("te_ddr", self.ddr_bytes // 4)),
               "scratch": _words_to_bytes(self.read_words("te_scratch", c.scratch_size // self.scratch_word),
                                          self.scratch_word),
               "spu": np.array(self.read_words("te_spu", 256), dtype=np.uint16).astype(np.int16)}
        for p in range(2):
            pw = c.np * c.nt * c.pcore_private_words // c.vw
            sw = c.np * c.pcore_shared_words // c.vw
            out[f"private{p}"] = _unvectors(self.read_words(f"te_pm_priv{p}", pw), c.vw)
            out[f"shared{p}"] = _unvectors(self.read_words(f"te_pm_shr{p}", sw), c.vw)
        return out


async def load_kernel(dut, words, origin=0):
    """Write PCORE instruction ``words`` from address ``origin`` through the
    top's instruction-memory port, one a clock."""
    for i, w in enumerate(words):
        dut.imem_we.value = 1
        dut.imem_adr.value = origin + i
        dut.imem_dat_w.value = w
        await RisingEdge(dut.sys_clk)
    dut.imem_we.value = 0


def expected_snapshot(machine):
    out = {"ddr": machine.ddr.copy(), "scratch": machine.scratch.copy(), "spu": machine.spu.copy()}
    for p in range(2):
        out[f"private{p}"] = machine.private[p].reshape(-1).copy()
        out[f"shared{p}"] = machine.shared[p].reshape(-1).copy()
    return out


def diff_snapshots(got, exp, limit=8):
    """Human-readable differences ('' when equal)."""
    lines = []
    for k in exp:
        g, e = np.asarray(got[k]), np.asarray(exp[k])
        bad = np.nonzero(g != e)[0]
        if bad.size:
            lines.append(f"{k}: {bad.size} mismatches, first at " +
                         ", ".join(f"[{i}] got {int(g[i])} expected {int(e[i])}" for i in bad[:limit]))
    return "\n".join(lines)


def _bytes_to_words(b, word_bytes=4):
    b = np.asarray(b, dtype=np.uint8).reshape(-1, word_bytes)
    return [int.from_bytes(row.tobytes(), "little") for row in b]


def _words_to_bytes(words, word_bytes=4):
    return np.frombuffer(b"".join(int(w).to_bytes(word_bytes, "little") for w in words), dtype=np.uint8).copy()


def _vectors(elements, vw):
    e = np.asarray(elements, dtype=np.int16).astype(np.uint16).astype(np.int64).reshape(-1, vw)
    out = []
    for row in e:
        v = 0
        for lane, x in enumerate(row):
            v |= int(x) << (16 * lane)
        out.append(v)
    return out


def _unvectors(words, vw):
    out = []
    for w in words:
        for lane in range(vw):
            out.append((w >> (16 * lane)) & 0xFFFF)
    return np.array(out, dtype=np.uint16).astype(np.int16)
