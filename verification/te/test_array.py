"""cocotb: the TensorEngine driving the real PCORE array
(cores.pcore.array.PCOREArrayCore, top built with array="real").

A MAC kernel (sw/pcore/kernels/stream.pcore, long enough to overlap) runs
on both process spaces: inputs DDR -> PCORE private (vector path) and shared
(broadcast to every PCORE: vector path, one te write per word for all
PCOREs), EXE_LOCKSTEP, results PCORE -> DDR,
with the transfers of one process space overlapping the kernel of the other.
Then PCORE-to-PCORE copies on the vector path (private of PCORE 0 to private
of PCORE 1, private to shared) and back to DDR: each copy a vector word per
clock through the array's separate read and write channels.  DDR must equal
the reference executor whose EXE runs the PCORE ISS, and the results the
numpy reference; the LOG trace shows the overlap.  Run by
tests/test_te_engine.py."""

import numpy as np

import cocotb

from tensorsoc.spec import pcore_isa as pcore_isa
from tensorsoc.sw import te_trace
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.pcore import workloads
from tensorsoc.verification.pcore.iss import PcoreISS
from tensorsoc.verification.te.bfm import TEBench, _bytes_to_words, _words_to_bytes, load_kernel
from tensorsoc.verification.te.test_engine import _config, _machine, DDR_BYTES

SP = {n: v[0] for n, v in isa.SPACES.items()}
INT16 = isa.dtype("INT16")


def _pcore_var(config, var):
    """PCORE(NP)[:].THREAD[:].var[0:size-1] as a destination/source side."""
    pw = config.pcore_private_words
    return isa.Side(space=SP["PCORE_PRIVATE"], dtype=INT16, base=var.addr, check_mask=0, levels=[
        isa.Level(count=var.size, step=1, bound=var.size),
        isa.Level(count=config.nt, step=pw, bound=config.nt),
        isa.Level(count=config.np, step=config.nt * pw, bound=config.np)])


def _shared_var(config, var):
    """PCORE(NP)[*].var[0:size-1]: the same values into every PCORE's shared memory."""
    return isa.Side(space=SP["PCORE_SHARED"], dtype=INT16, base=var.addr, check_mask=0, bcast_mask=0b10, levels=[
        isa.Level(count=var.size, step=1, bound=var.size),
        isa.Level(count=config.np, step=config.pcore_shared_words, bound=config.np)])


def _ddr(base, n):
    return isa.Side(space=SP["DDR"], dtype=INT16, base=base, check_mask=0,
                    levels=[isa.Level(count=n, step=2, bound=n)])


def _iss_kernel(config, words):
    def kernel(machine, exe):
        iss = PcoreISS(config, words)
        iss.private[exe.process] = machine.private[exe.process]
        iss.shared[exe.process] = machine.shared[exe.process]
        iss.run(exe.func, exe.process)
        machine.private[exe.process] = iss.private[exe.process].astype(np.int16)
    return kernel


class _TwoKernels:
    """The bench with the MAC kernel loaded, and the reference executor +
    ISS: two workloads' inputs in DDR (``inputs[(k, "x" / "w")]``), their
    results' places (``results[k]``) and the kernel's function word."""

    @classmethod
    async def start(cls, dut, seed_workloads, seed_ddr):
        t = cls()
        t.config = config = _config()
        t.bench = TEBench(dut, config, DDR_BYTES)
        dut.imem_we.value = 0
        await t.bench.start()
        t.wls = [workloads.mac_stream(config, np.random.default_rng(seed_workloads + k), N=300) for k in range(2)]
        prog = t.wls[0].assemble()
        await load_kernel(dut, prog.words)
        t.x, t.w, t.out = x, w, _out = tuple(prog.variable("stream", v) for v in ("x", "w", "out"))
        t.total = total = config.np * config.nt * config.vw
        t.machine = machine = _machine(config)
        machine.kernel = _iss_kernel(config, prog.words)
        machine.ddr[:] = np.random.default_rng(seed_ddr).integers(0, 256, machine.ddr.size)
        t.inputs = {}
        for k, wl in enumerate(t.wls):
            t.inputs[(k, "x")], t.inputs[(k, "w")] = 2 * k * 2 * total, (2 * k + 1) * 2 * total
            machine.ddr_write(t.inputs[(k, "x")], wl.private[:, :, x.addr:x.addr + x.size].reshape(-1))
            machine.ddr_write(t.inputs[(k, "w")], wl.shared[0, w.addr:w.addr + w.size])
        t.results = {k: (4 + k) * 2 * total for k in range(2)}
        t.bench.write_words("te_ddr", _bytes_to_words(machine.ddr))
        t.func = isa.build_kernel_func(t.wls[0].entry, 0, 0)
        return t

    async def run_and_check(self, dut, program):
        """Run ``program`` on the executor and the bench: DDR equal, each
        workload's results the numpy reference, the kernel starts the
        executor's.  Returns the DDR bytes the bench ended with."""
        self.machine.run(program)
        await self.bench.run([w for i in program for w in isa.encode(i)])
        got = _words_to_bytes(self.bench.read_words("te_ddr", DDR_BYTES // 4))
        bad = np.nonzero(got != self.machine.ddr)[0]
        assert not bad.size, f"DDR differs from the executor + ISS at {bad.size} bytes, first {bad[:8]}"
        c = self.config
        for k, wl in enumerate(self.wls):
            res = got[self.results[k]:self.results[k] + 2 * self.total].view("<i2").reshape(c.np, c.nt, c.vw)
            assert np.array_equal(res, wl.expected["out"]), f"workload {k}: results differ from the numpy reference"
        exe = [(p, isa.build_kernel_func(ad, np_, nt)) for p, ad, np_, nt in self.machine.exe_calls]
        assert self.bench.starts == exe, f"kernel starts {self.bench.starts}, executor {exe}"
        return got


@cocotb.test()
async def kernels_on_both_process_spaces(dut):
    t = await _TwoKernels.start(dut, seed_workloads=10, seed_ddr=3)
    config, bench, wls, total = t.config, t.bench, t.wls, t.total
    x, w, out, inputs, results, func = t.x, t.w, t.out, t.inputs, t.results, t.func
    assert func == pcore_isa.function_word(wls[0].entry)

    def load(p):
        return [isa.Transfer(dst=_pcore_var(config, x), src=_ddr(inputs[(p, "x")], total), process=p),
                isa.Transfer(dst=_shared_var(config, w), src=_ddr(inputs[(p, "w")], w.size), process=p)]

    def unload(p):
        return [isa.Transfer(dst=_ddr(results[p], total), src=_pcore_var(config, out), process=p)]

    # PCORE to PCORE on process 1, after its results left: n elements from DDR
    # into PCORE 0, copied to PCORE 1, from there into PCORE 0's shared memory,
    # and back to DDR.
    per_pcore = config.nt * config.pcore_private_words
    n = min(per_pcore, config.pcore_shared_words, 256)
    copied = 6 * 2 * total
    assert config.np > 1 and copied + 2 * n <= DDR_BYTES

    def contiguous(space, base):
        return isa.Side(space=SP[space], dtype=INT16, base=base, check_mask=0,
                        levels=[isa.Level(count=n, step=1 if space != "DDR" else 2, bound=n)])
    copies = [isa.Transfer(dst=contiguous("PCORE_PRIVATE", 0), src=contiguous("DDR", 0), process=1),
              isa.Transfer(dst=contiguous("PCORE_PRIVATE", per_pcore), src=contiguous("PCORE_PRIVATE", 0), process=1),
              isa.Transfer(dst=contiguous("PCORE_SHARED", 0), src=contiguous("PCORE_PRIVATE", per_pcore), process=1),
              isa.Transfer(dst=contiguous("DDR", copied), src=contiguous("PCORE_SHARED", 0), process=1)]

    program = ([isa.Log(on=1)] + load(0) + [isa.Exe(func=func, process=0)]
               + load(1)                                  # overlaps the kernel on process 0
               + [isa.Exe(func=func, process=1)]          # starts when the array is free
               + unload(0)                                # overlaps the kernel on process 1
               + unload(1) + copies + [isa.Log(on=0)])
    await t.run_and_check(dut, program)
    assert await bench.errors() == 0

    records = te_trace.decode(await bench.trace_words())
    starts = [r for r in records if r.name == "XFER_START"]
    assert [te_trace.describe(r) for r in starts] == t.machine.trace
    overlap = [(r.process, r.busy) for r in starts if r.busy & (1 << (1 - r.process))]
    assert (1, 0b01) in overlap and (0, 0b10) in overlap, \
        f"no transfer overlapped the other process space's kernel: {[(r.process, r.busy) for r in starts]}"
    # The PCORE-to-PCORE copies: vector path, a word per clock (one port
    # command per clock would take two clocks per word); 12 clocks of fill.
    xfers = [r for r in records if r.name in ("XFER_START", "XFER_END")]
    # The shared inputs PCORE(NP)[*].w <= DDR (transfers 1 and 3): vector
    # path, each word to every PCORE in one te write (te.wr_bcast), so at the
    # DDR rate of one copy (N/2 beats, 2 clocks per 32-beat burst) plus fill.
    for k in (1, 3):
        start, end = xfers[2 * k], xfers[2 * k + 1]
        assert start.vector, "broadcast to every PCORE: not on the vector path"
        limit = w.size // 2 * 34 // 32 + 12
        dut._log.info(f"PCORE(NP)[*] <= DDR: {w.size} elements x {config.np} PCOREs in {end.ts - start.ts} clocks")
        assert end.ts - start.ts <= limit, f"broadcast of {w.size} elements took {end.ts - start.ts} clocks"
    words = n // config.vw
    for k, what in enumerate(("private <= private", "shared <= private")):
        start, end = xfers[-6 + 2 * k], xfers[-5 + 2 * k]
        assert start.vector, f"PCORE {what}: not on the vector path"
        dut._log.info(f"PCORE {what}: {words} words in {end.ts - start.ts} clocks")
        assert end.ts - start.ts <= words + 12, f"PCORE {what}: {words} words took {end.ts - start.ts} clocks"
    dut._log.info("activity report:\n" + te_trace.text(records))


@cocotb.test()
async def kernels_on_one_process_space(dut):
    """PCOREs of one process space (``SoCConfig.pcore_processes = 1``, run by
    tests/test_te_engine.py with that configuration): two kernels on process
    0, each loaded right after the previous one's EXE and unloaded right
    after its own, as the model compiler's one-space schedule queues them.
    The loads of the second must wait for the first kernel (they overwrite
    its inputs) and each unload for its kernel, which only the array's ready
    orders: DDR equals the executor + ISS, the results the numpy reference.
    A transfer and an EXE of process 1 set DECODE and are skipped."""
    t = await _TwoKernels.start(dut, seed_workloads=20, seed_ddr=4)
    assert t.config.pcore_processes == 1
    config, x, w, out, at, results, func, total = t.config, t.x, t.w, t.out, t.inputs, t.results, t.func, t.total
    refused = 6 * 2 * total

    def step(k):
        return [isa.Transfer(dst=_pcore_var(config, x), src=_ddr(at[(k, "x")], total), process=0),
                isa.Transfer(dst=_shared_var(config, w), src=_ddr(at[(k, "w")], w.size), process=0),
                isa.Exe(func=func, process=0),
                isa.Transfer(dst=_ddr(results[k], total), src=_pcore_var(config, out), process=0)]

    program = (step(0) + step(1)
               + [isa.Transfer(dst=_ddr(refused, total), src=_pcore_var(config, out), process=1),
                  isa.Exe(func=func, process=1)])
    await t.run_and_check(dut, program)
    assert t.machine.errors == 1 << isa.ERRORS["DECODE"][0]
    assert t.bench.starts == [(0, func), (0, func)], t.bench.starts
    assert await t.bench.errors() == 1 << isa.ERRORS["DECODE"][0]
