"""Drive the MyHDL lane datapath in MyHDL's own simulator."""

import numpy as np
from myhdl import Simulation, StopSimulation, always, block, delay, instance

from tensorsoc.cores.pcore.lane import LATENCY, lane_signals, shift_controls, pcore_lane


def run_lane(stim, width, acc_width, dsp_shift=False):
    """Apply ``stim`` (dict of equal-length int arrays: op, a, b, acc, flag,
    sh and optionally fwd), one vector per clock; returns dict result, acc_out, flag_out, each
    output taken ``LATENCY`` clocks after its inputs.  ``dsp_shift``: the
    lane whose rounding right shift is a product (``SoCConfig.pcore_shift_dsp``)."""
    sig = lane_signals(width, acc_width)
    dut = pcore_lane(**sig, width=width, acc_width=acc_width, dsp_shift=dsp_shift)
    n = len(stim["op"])
    out = {k: np.zeros(n, np.int64) for k in ("result", "acc_out", "flag_out")}
    cols = [(sig[s], [int(v) for v in stim[k]]) for s, k in
            (("op", "op"), ("a", "a"), ("b", "b"), ("acc_in", "acc"), ("flag_in", "flag"), ("sh", "sh"),
             ("fwd", "fwd")) if k in stim]
    ctl = [shift_controls(int(o), int(h), int(v), width) for o, h, v in zip(stim["op"], stim["sh"], stim["b"])]
    cols += [(sig[name], [c[k] for c in ctl]) for k, name in enumerate(("mb", "rlo", "rhi", "rz"))]
    clk = sig["clk"]

    @block
    def bench():
        @always(delay(5))
        def clock():
            clk.next = not clk

        @instance
        def drive():
            for i in range(n + LATENCY - 1):
                if i < n:
                    for s, vals in cols:
                        s.next = vals[i]
                yield clk.posedge
                yield delay(1)
                j = i - (LATENCY - 1)
                if j >= 0:
                    out["result"][j] = int(sig["result"])
                    out["acc_out"][j] = int(sig["acc_out"])
                    out["flag_out"][j] = int(sig["flag_out"])
            raise StopSimulation

        return clock, drive

    Simulation(dut, bench()).run(quiet=1)
    return out
