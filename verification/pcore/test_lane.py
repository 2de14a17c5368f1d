"""cocotb test of the converted (Verilog) lane datapath against the golden
model: exhaustive when TSOC_LANE_MODE=exhaustive, else random vectors."""

import os

import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

import cocotb

from tensorsoc.spec import pcore_isa as isa
from tensorsoc.cores.pcore.lane import LATENCY, shift_controls
from tensorsoc.verification.pcore.lane_model import expected, stimulus


def _signed(v, bits):
    v = int(v)
    return v - (1 << bits) if v >> (bits - 1) else v


@cocotb.test()
async def test_lane(dut):
    width = int(os.environ.get("TSOC_LANE_WIDTH", "16"))
    acc_width = int(os.environ.get("TSOC_LANE_ACC_WIDTH", "32"))
    exhaustive = os.environ.get("TSOC_LANE_MODE") == "exhaustive"
    n = int(os.environ.get("TSOC_LANE_VECTORS", "3000"))
    rng = np.random.default_rng(int(os.environ.get("TSOC_LANE_SEED", "1")))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    errors = []
    for op in isa.OP:
        s = stimulus(op, width, acc_width, None if exhaustive else rng, n)
        count = len(s["op"])
        got = {k: np.zeros(count, np.int64) for k in ("result", "acc_out", "flag_out")}
        for i in range(count + LATENCY - 1):    # one vector per clock, pipelined
            if i < count:
                dut.op.value = int(s["op"][i])
                dut.a.value = int(s["a"][i]) & ((1 << width) - 1)
                dut.b.value = int(s["b"][i]) & ((1 << width) - 1)
                dut.acc_in.value = int(s["acc"][i]) & ((1 << acc_width) - 1)
                dut.flag_in.value = int(s["flag"][i])
                dut.sh.value = int(s["sh"][i])
                mb, dut.rlo.value, dut.rhi.value, dut.rz.value = shift_controls(
                    int(s["op"][i]), int(s["sh"][i]), int(s["b"][i]), width)
                dut.mb.value = mb & ((1 << (width + 1)) - 1)
                dut.fwd.value = 0
            await RisingEdge(dut.clk)      # the lane takes this vector
            await FallingEdge(dut.clk)     # outputs settled, inputs writable
            j = i - (LATENCY - 1)          # whose outputs are out now
            if j >= 0:
                got["result"][j] = _signed(dut.result.value, width)
                got["acc_out"][j] = _signed(dut.acc_out.value, acc_width)
                got["flag_out"][j] = int(dut.flag_out.value)
        res, acc, flag = expected(op, s["a"], s["b"], s["acc"], s["flag"], s["sh"], width, acc_width)
        for name, want in (("result", res), ("acc_out", acc), ("flag_out", flag)):
            if want is None:
                continue
            bad = np.nonzero(got[name] != want)[0]
            if len(bad):
                i = bad[0]
                errors.append(f"{op}: {len(bad)}/{count} wrong {name}; first a={s['a'][i]} b={s['b'][i]} "
                              f"acc={s['acc'][i]} flag={s['flag'][i]} sh={s['sh'][i]}: "
                              f"got {got[name][i]}, expected {want[i]}")
    assert not errors, "\n".join(errors)
