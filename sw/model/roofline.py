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
    def lane_use(self):
        """Useful share of the lane-MACs executed."""
        return self.macs / self.padded_macs if self.padded_macs else None

    @classmethod
    def from_dict(cls, d):
        """The inverse of as_dict()."""
        return cls(macs=d["macs"], padded_macs=d["padded_macs"], min_ddr_bytes=d["min_ddr_bytes"],
                   ddr_bytes=d["ddr_bytes"], peak=d["peak_macs_per_clock"], bus_bytes=d["bus_bytes_per_clock"],
                   cycles=d["cycles"])

    def as_dict(self):
        return {"macs": self.macs, "padded_macs": self.padded_macs, "lane_use": self.lane_use,
                "min_ddr_bytes": self.min_ddr_bytes, "ddr_bytes": self.ddr_bytes,
                "peak_macs_per_clock": self.peak, "bus_bytes_per_clock": self.bus_bytes,
                "mac_bound_cycles": self.mac_cycles, "ddr_bound_cycles": self.ddr_cycles,
                "bound": self.bound, "bound_cycles": self.bound_cycles, "cycles": self.cycles,
                "of_bound": self.of_bound, "of_peak": self.of_peak}


def layer(op, config, cycles=None, program=None):
    """The roofline of compute op ``op`` under ``config``; ``cycles``: the
    measured time (None: bounds only); ``program``: its
    sw.model.accel.LayerProgram, for the padded MACs and the bytes it moves
    (None or a reason string: a software layer, not known)."""
    prog = None if program is None or isinstance(program, str) else program
    return Roofline(macs=useful_macs(op), padded_macs=getattr(prog, "padded_macs", None),
                    min_ddr_bytes=min_ddr_bytes(op), ddr_bytes=getattr(prog, "ddr_bytes", None),
                    peak=config.np * config.vw, bus_bytes=bus_bytes_per_clock(config), cycles=cycles)


def _n(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def header():
    return (f"{'useful MACs':>11} {'padded MACs':>11} {'lanes':>6} {'DDR bytes':>9} {'moved':>8} "
            f"{'MAC bound':>9} {'DDR bound':>9} {'bound':>5} {'cycles':>9} {'of bound':>8} {'of peak':>7}")


def row(r):
    """One table row of Roofline ``r`` (columns of header())."""
    return (f"{r.macs:>11} {_n(r.padded_macs):>11} {_n(r.lane_use and 100 * r.lane_use, '{:.1f}%'):>6} "
            f"{r.min_ddr_bytes:>9} {_n(r.ddr_bytes):>8} {r.mac_cycles:>9} {r.ddr_cycles:>9} {r.bound:>5} "
            f"{_n(r.cycles):>9} {_n(r.of_bound and 100 * r.of_bound, '{:.1f}%'):>8} "
            f"{_n(r.of_peak if r.macs else None, '{:.1%}'):>7}")


def legend(config):
    """One line: the definitions behind the table (``config``: np, vw, and
    the bus, from a SoCConfig or anything with those attributes)."""
    bb = bus_bytes_per_clock(config)
    return (f"roofline: MAC bound = useful MACs / {config.np * config.vw} (NP {config.np} x VW {config.vw} "
            f"MACs per clock); DDR bound = DDR bytes (operands read once + result written once) / {bb} "
            f"(bytes per clock of the TensorEngine's {8 * bb}-bit main-RAM port); bound = the larger; "
            "of bound = bound / cycles; lanes = useful / padded MACs; moved = bytes the program moves")
