"""Drive the MyHDL lane datapath in MyHDL's own simulator."""

import numpy as np
from myhdl import Signal, Simulation, StopSimulation, always, block, delay, instance, intbv

from tensorsoc.cores.pcore.lane import (LATENCY, lane_signals, pcore_lane, pcore_rounder, rounder_signals,
                                        shift_controls)
from tensorsoc.spec.pcore_isa import OP, ROUND_OPS


@block
def shared_round_pair(sig, rsig, width, acc_width):
    """A lane without a rounding shifter and a ``pcore_rounder`` on its
    ``rnd_p`` and ``rnd_acc`` registered (the PCORE's gathering registers),
    the controls two clocks later and the fine amount three, as the PCORE
    joins them (``SoCConfig.pcore_round_share``): the rounder's result two
    clocks after the lane's."""
    clk = sig["clk"]
    lane = pcore_lane(**sig, width=width, acc_width=acc_width)
    rnd = pcore_rounder(**rsig, width=width, acc_width=acc_width)
    op, rz, rhi, rlo = sig["op"], sig["rz"], sig["rhi"], sig["rlo"]
    rnd_p, rnd_acc, p, acc = sig["rnd_p"], sig["rnd_acc"], rsig["p"], rsig["acc"]
    from_acc, rz_d, rhi_d, rlo_d = rsig["from_acc"], rsig["rz"], rsig["rhi"], rsig["rlo"]
    rlo_1, rlo_2 = Signal(intbv(0)[len(rlo):]), Signal(intbv(0)[len(rlo):])
    from_acc_1, rz_1, rhi_1 = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    accr = OP["accr"]

    @always(clk.posedge)
    def controls():
        from_acc_1.next = op == accr
        rz_1.next = rz
        rhi_1.next = rhi
        from_acc.next = from_acc_1
        rz_d.next = rz_1
        rhi_d.next = rhi_1
        rlo_1.next = rlo
        rlo_2.next = rlo_1
        rlo_d.next = rlo_2

    @always(clk.posedge)
    def gather():
        p.next = rnd_p
        acc.next = rnd_acc

    return lane, rnd, controls, gather


def run_lane(stim, width, acc_width, dsp_shift=False, shared_round=False):
    """Apply ``stim`` (dict of equal-length int arrays: op, a, b, acc, flag,
    sh and optionally fwd), one vector per clock; returns dict result, acc_out, flag_out, each
    output taken ``LATENCY`` clocks after its inputs.  ``dsp_shift``: the
    lane whose rounding right shift is a product (``SoCConfig.pcore_shift_dsp``);
    ``shared_round``: the lane without one and a rounder (``shared_round_pair``),
    the result of the rounding ops (``ROUND_OPS``) the rounder's, two clocks later."""
    sig = lane_signals(width, acc_width, shared_round)
    if shared_round:
        rsig = rounder_signals(width, acc_width)
        rsig["clk"] = sig["clk"]
        dut = shared_round_pair(sig, rsig, width, acc_width)
    else:
        dut = pcore_lane(**sig, width=width, acc_width=acc_width, dsp_shift=dsp_shift)
    round_codes = {OP[n] for n in ROUND_OPS}
    n = len(stim["op"])
    out = {k: np.zeros(n, np.int64) for k in ("result", "acc_out", "flag_out")}
    cols = [(sig[s], [int(v) for v in stim[k]]) for s, k in
            (("op", "op"), ("a", "a"), ("b", "b"), ("acc_in", "acc"), ("flag_in", "flag"), ("sh", "sh"),
             ("fwd", "fwd")) if k in stim]
    ctl = [shift_controls(int(o), int(h), int(v), width, shared_round)
           for o, h, v in zip(stim["op"], stim["sh"], stim["b"])]
    cols += [(sig[name], [c[k] for c in ctl]) for k, name in enumerate(("mb", "rlo", "rhi", "rz"))]
    clk = sig["clk"]

    @block
    def bench():
        @always(delay(5))
        def clock():
            clk.next = not clk

        @instance
        def drive():
            for i in range(n + LATENCY + 1):
                if i < n:
                    for s, vals in cols:
                        s.next = vals[i]
                yield clk.posedge
                yield delay(1)
                j = i - (LATENCY - 1)
                if 0 <= j < n:
                    out["result"][j] = int(sig["result"])
                    out["acc_out"][j] = int(sig["acc_out"])
                    out["flag_out"][j] = int(sig["flag_out"])
                if shared_round and 2 <= j < n + 2 and int(stim["op"][j - 2]) in round_codes:
                    out["result"][j - 2] = int(rsig["result"])
            raise StopSimulation

        return clock, drive

    Simulation(dut, bench()).run(quiet=1)
    return out
