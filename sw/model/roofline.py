"""The roofline of a layer: its cycles against the two lower bounds of the
accelerator (docs/models.md, "Roofline").  One definition, used by `tsoc sim`
(verification/soc/model_job.py), `tsoc bench layers` (verification/te/) and
`tsoc model check/compile` (the bounds alone).

* **MAC bound**: ``ceil(useful MACs / peak)`` cycles, ``peak = NP x VW``
  multiply-accumulates per clock (every lane of every PCORE busy).  Useful
  MACs are the op's own (conv ``HO*WO*CO*KH*KW*CIN``, linear ``NO*NI*NB``,
  maxpool 0); the lane-MACs the kernels execute, padding included (idle
  threads of a last pass, lanes past the data), are counted apart as
  *padded* MACs: they cost cycles but are not work the layer has to do.
* **DDR bound**: ``ceil(bytes / BUS_BYTES_PER_CLOCK)`` cycles, where bytes is
  what the layer must move between main RAM ("DDR") and the array at least:
  each operand (weights, input, bias, batch-norm constants) read once and the
  result written once, in their memory layout (int16, padded lanes
  included).  The TensorEngine reaches main RAM through one 32-bit Wishbone
  master (cores/tensor_engine/engine.py, vector.py: ``data_width=32``), at
  best one word a clock: 4 bytes per clock.  What a program really moves
  (``LayerProgram.ddr_bytes``: weights sent once per PCORE and process space,
  overlapping windows read again, ...) is reported beside it.

The bound that applies is the larger of the two (the layer cannot finish
before either); *of bound* is that bound over the measured cycles: 100% is
a layer that runs at its roofline.
"""

from dataclasses import dataclass

BUS_BYTES_PER_CLOCK = 4       # the TensorEngine's main-RAM port: 32-bit Wishbone (cores/tensor_engine/engine.py)


def bus_bytes_per_clock(config):
    """Bytes per clock between main RAM and the TensorEngine for ``config``
    (a configuration field ``te_bus_bytes`` overrides the 32-bit bus)."""
    return int(getattr(config, "te_bus_bytes", 0) or BUS_BYTES_PER_CLOCK)


def useful_macs(op):
    """Multiply-accumulates a compute op needs (0 for maxpool)."""
    if op.kind == "conv":
        ho, wo, co = op.res.dims
        kh, kw, ci, _ = op.a.dims
        return ho * wo * co * kh * kw * ci
    if op.kind == "lin":
        n_out, n_in = op.a.dims
        return n_out * n_in * op.res.dims[1]
    return 0


def nonzero_macs(op):
    """The MACs of a compute op whose factors are not known zeros: a
    constant weight that is not 0 (in the model's fixed-point format), on an
    input lane that is not stream padding.  Padding added to reach the vector
    width (zero weights of padded channels and outputs, the lanes a
    stream-padded input does not send: `tsoc model import`, a 1-channel
    image) is left out: what is left is the network's own work.  None when
    the weights are not constants (0 for maxpool)."""
    import numpy as np
    if op.kind == "maxpool":
        return 0
    if op.a.raw is None:
        return None
    nz = np.asarray(op.a.raw) != 0
    b, pad = op.b, (op.b.stream_padding if op.b.kind == "input" else 0)
    if op.kind == "conv":
        if pad:
            nz[:, :, b.dims[2] - pad:, :] = False
        return int(nz.sum()) * op.res.dims[0] * op.res.dims[1]
    if pad:
        c = b.dims[b.aligned]
        lane = np.arange(nz.shape[1]) % c
        nz[:, lane >= c - pad] = False
    return int(nz.sum()) * op.res.dims[1]


def operands(op):
    """The tensors a compute op reads (each once), then its result."""
    reads = [op.a] if op.kind == "maxpool" else [op.a, op.b]
    if op.kind != "maxpool":
        reads += [op.bias] if op.bias_en else []
        reads += [op.batch] if op.bn_en else []
    seen, out = set(), []
    for t in reads:
        if t is not None and id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out, op.res


def min_ddr_bytes(op):
    """Bytes the op must move between main RAM and the array at least:
    every operand read once, the result written once."""
    reads, res = operands(op)
    return sum(t.nbytes for t in reads) + res.nbytes


@dataclass
class Roofline:
    macs: int                       # useful multiply-accumulates
    padded_macs: int | None         # lane-MACs the kernels execute (None: not known)
    min_ddr_bytes: int              # bytes the layer must move at least
    ddr_bytes: int | None           # bytes its program moves (None: not known)
    peak: int                       # MACs per clock, NP x VW
    bus_bytes: int                  # main-RAM bytes per clock
    cycles: int | None = None       # measured
    nonzero_macs: int | None = None # MACs without the padding to VW (nonzero_macs()); None: not known

    @property
    def mac_cycles(self):
        return -(-self.macs // self.peak)

    @property
    def ddr_cycles(self):
        return -(-self.min_ddr_bytes // self.bus_bytes)

    @property
    def bound(self):
        """"MAC" or "DDR": the larger lower bound (MAC on a tie)."""
        return "MAC" if self.mac_cycles >= self.ddr_cycles else "DDR"

    @property
    def bound_cycles(self):
        return max(self.mac_cycles, self.ddr_cycles)

    @property
    def of_bound(self):
        """Fraction of the bound reached: bound cycles / measured cycles."""
        return self.bound_cycles / self.cycles if self.cycles else None

    @property
    def of_peak(self):
        return self.macs / self.cycles / self.peak if self.cycles else None

    @property
    def nonzero_of_peak(self):
        """of_peak counting only the nonzero MACs (the network's own work)."""
        return self.nonzero_macs / self.cycles / self.peak if self.cycles and self.nonzero_macs is not None else None

    @property
    def lane_use(self):
        """Useful share of the lane-MACs executed."""
        return self.macs / self.padded_macs if self.padded_macs else None

    @classmethod
    def from_dict(cls, d):
        """The inverse of as_dict()."""
        return cls(macs=d["macs"], padded_macs=d["padded_macs"], min_ddr_bytes=d["min_ddr_bytes"],
                   ddr_bytes=d["ddr_bytes"], peak=d["peak_macs_per_clock"], bus_bytes=d["bus_bytes_per_clock"],
                   cycles=d["cycles"], nonzero_macs=d.get("nonzero_macs"))

    def as_dict(self):
        return {"macs": self.macs, "padded_macs": self.padded_macs, "lane_use": self.lane_use,
                "min_ddr_bytes": self.min_ddr_bytes, "ddr_bytes": self.ddr_bytes,
                "peak_macs_per_clock": self.peak, "bus_bytes_per_clock": self.bus_bytes,
                "mac_bound_cycles": self.mac_cycles, "ddr_bound_cycles": self.ddr_cycles,
                "bound": self.bound, "bound_cycles": self.bound_cycles, "cycles": self.cycles,
                "of_bound": self.of_bound, "of_peak": self.of_peak,
                "nonzero_macs": self.nonzero_macs, "nonzero_of_peak": self.nonzero_of_peak}


def layer(op, config, cycles=None, program=None):
    """The roofline of compute op ``op`` under ``config``; ``cycles``: the
    measured time (None: bounds only); ``program``: its
    sw.model.accel.LayerProgram, for the padded MACs and the bytes it moves
    (None or a reason string: a software layer, not known)."""
    prog = None if program is None or isinstance(program, str) else program
    return Roofline(macs=useful_macs(op), padded_macs=getattr(prog, "padded_macs", None),
                    min_ddr_bytes=min_ddr_bytes(op), ddr_bytes=getattr(prog, "ddr_bytes", None),
                    peak=config.np * config.vw, bus_bytes=bus_bytes_per_clock(config), cycles=cycles,
                    nonzero_macs=nonzero_macs(op))


def _n(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def header():
    return (f"{'useful MACs':>11} {'padded MACs':>11} {'lanes':>6} {'DDR bytes':>9} {'moved':>8} "
            f"{'MAC bound':>9} {'DDR bound':>9} {'bound':>5} {'cycles':>9} {'of bound':>8} {'of peak':>7} "
            f"{'nonzero MACs':>12} {'nz of peak':>10}")


def row(r):
    """One table row of Roofline ``r`` (columns of header())."""
    return (f"{r.macs:>11} {_n(r.padded_macs):>11} {_n(r.lane_use and 100 * r.lane_use, '{:.1f}%'):>6} "
            f"{r.min_ddr_bytes:>9} {_n(r.ddr_bytes):>8} {r.mac_cycles:>9} {r.ddr_cycles:>9} {r.bound:>5} "
            f"{_n(r.cycles):>9} {_n(r.of_bound and 100 * r.of_bound, '{:.1f}%'):>8} "
            f"{_n(r.of_peak if r.macs else None, '{:.1%}'):>7} {_n(r.nonzero_macs):>12} "
            f"{_n(r.nonzero_of_peak if r.macs else None, '{:.1%}'):>10}")


def legend(config):
    """One line: the definitions behind the table (``config``: np, vw, and
    the bus, from a SoCConfig or anything with those attributes)."""
    bb = bus_bytes_per_clock(config)
    return (f"roofline: MAC bound = useful MACs / {config.np * config.vw} (NP {config.np} x VW {config.vw} "
            f"MACs per clock); DDR bound = DDR bytes (operands read once + result written once) / {bb} "
            f"(bytes per clock of the TensorEngine's {8 * bb}-bit main-RAM port); bound = the larger; "
            "of bound = bound / cycles; lanes = useful / padded MACs; moved = bytes the program moves; "
            "of peak = useful MACs / cycles / peak; nonzero MACs = useful MACs less the padding to VW (zero weights, "
            "stream-padded input lanes), nz of peak = nonzero MACs / cycles / peak")
