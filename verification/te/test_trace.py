"""cocotb: the LOG_ON activity trace (cores/tensor_engine/trace.py) records
what the engine did.  A monitor samples log_on, the PCORE busy bits and
xfer_active every clock; the records drained from the buffer must be the same
events in the same order with the same clock distances, their transfer
attributes the reference executor's trace strings, and a full buffer must
drop records and flag the next one.  Run by tests/test_te_engine.py."""

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tensorsoc.sw import te_trace
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.te.test_engine import _setup, _randomise, _check, _side


def _xfer(dst, src, process=0, scatter=0):
    return isa.Transfer(dst=dst, src=src, process=process, scatter=scatter)


class Monitor:
    """The events the trace should hold, from the engine's pins."""

    def __init__(self, dut):
        self.dut = dut
        self.events = []          # (kind, cycle, busy, vector)

    async def run(self):
        d = self.dut
        n = 0
        prev = None
        while True:
            await RisingEdge(d.sys_clk)
            await ReadOnly()
            n += 1
            cur = (int(d.log_on.value), int(d.busy.value), int(d.xfer_active.value))
            if prev is not None:
                log, busy, xfer = cur
                if log != prev[0]:
                    self.events.append(("LOG_ON" if log else "LOG_OFF", n, busy))
                elif log and xfer != prev[2]:
                    self.events.append(("XFER_START" if xfer else "XFER_END", n, busy))
                if log and busy != prev[1]:
                    self.events.append(("BUSY", n, busy))
            prev = cur


def _compare(records, events, what):
    got = [(r.name, r.busy) for r in records]
    exp = [(k, b) for k, _, b in events]
    assert got == exp, f"{what}: records {got}\nexpected {exp}"
    for a, b, ea, eb in zip(records, records[1:], events, events[1:]):
        assert (b.ts - a.ts) & 0xFFFF_FFFF == eb[1] - ea[1], \
            f"{what}: {a.name}->{b.name} {b.ts - a.ts} clocks apart, the pins say {eb[1] - ea[1]}"


@cocotb.test()
async def trace_matches_the_engine(dut):
    config, bench, machine = await _setup(dut)
    _randomise(machine, random.Random(9))
    bench.load(machine)
    mon = Monitor(dut)
    cocotb.start_soon(mon.run())
    n = 4 * config.vw
    kernel = isa.build_kernel_func(15, 0, 0)     # the memory model's kernel: 16 + 15 clocks busy
    prog = [
        isa.Log(on=1),
        _xfer(_side("PCORE_PRIVATE", "INT16", 0, n), _side("DDR", "INT16", 0, n)),                 # vector
        isa.Exe(func=kernel, process=0),
        _xfer(_side("PCORE_PRIVATE", "UINT8", 0, n), _side("DDR", "UINT8", 256, n), process=1),    # overlaps it
        _xfer(_side("DDR", "INT16", 1024, n), _side("PCORE_PRIVATE", "INT16", 0, n)),             # waits for it
        _xfer(_side("SCRATCH", "INT8", 0, 6), _side("DDR", "INT8", 512, 6, step=3), scatter=1),   # element path
        isa.Callback(tag=1, parm=0),
        isa.Exe(func=kernel, process=1),
        _xfer(_side("PCORE_SHARED", "INT16", 8, n), _side("SCRATCH", "INT16", 64, n)),
        isa.Log(on=0),
        _xfer(_side("SCRATCH", "INT16", 256, n), _side("DDR", "INT16", 2048, n)),                # not logged
        isa.Log(on=1),
        _xfer(_side("DDR", "UINT8", 3072, 3), _side("PCORE_SHARED", "INT16", 1, 3), process=1),
        isa.Log(on=0),
    ]
    machine.run(prog)
    await bench.run([w for i in prog for w in isa.encode(i)])
    await _check(bench, machine, "trace program")
    words = await bench.trace_words()
    records = te_trace.decode(words)
    _compare(records, mon.events, "trace program")
    starts = [r for r in records if r.name == "XFER_START"]
    assert [te_trace.describe(r) for r in starts] == machine.trace, \
        f"attributes {[te_trace.describe(r) for r in starts]}, executor {machine.trace}"
    assert [r.vector for r in starts] == [1, 1, 1, 0, 1, 1], [r.vector for r in starts]
    assert starts[1].busy == 0b01, "the process 1 transfer should overlap the process 0 kernel"
    assert any(r.name == "BUSY" and r.busy == 0b01 for r in records)
    assert any(r.name == "BUSY" and r.busy == 0b10 for r in records)
    text = te_trace.text(records)
    dut._log.info("activity report:\n" + text)
    assert text.count(te_trace.HEADER[0]) == 2

    # A full buffer drops records; the first one stored after a drain says so.
    mon.events.clear()
    small = _xfer(_side("SCRATCH", "INT16", 0, 2), _side("DDR", "INT16", 0, 2))
    prog = [isa.Log(on=1)] + [small] * 140
    machine.run(prog)
    await bench.run([w for i in prog for w in isa.encode(i)])
    words = await bench.trace_words()
    kept = te_trace.decode(words)
    assert len(kept) < len(mon.events) and not any(r.lost for r in kept), (len(kept), len(mon.events))
    _compare(kept, mon.events[:len(kept)], "full buffer")
    mon.events.clear()
    prog = [small, isa.Log(on=0)]
    machine.run(prog)
    await bench.run([w for i in prog for w in isa.encode(i)])
    after = te_trace.decode(await bench.trace_words())
    assert [r.name for r in after] == ["XFER_START", "XFER_END", "LOG_OFF"] and after[0].lost and not after[1].lost
    machine.trace.clear()
    await _check(bench, machine, "full buffer")
