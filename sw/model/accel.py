"""Accelerator programs of a model: each TENS_CONV, TENS_LIN and TENS_MAXPOOL
op as a PCORE kernel instance plus the TensorEngine instructions that feed
it, generated at model-compile time.

The TensorEngine programs are MCORE firmware: the tensor statements (``>``
lines, the MCORE programmer guide's syntax) of the C functions in
``sw/model/programs/`` -- ``convolution.c`` (conv and lin), ``maxpool.c``,
``layer.c`` (scratch-pad staging, the final CALLBACK).  Every address and size
of a model is known when it is compiled (the memory plan places every tensor,
the windows sit at fixed addresses of the configuration), so this module
compiles each function it calls with ``tensorsoc.sw.mcore.api.instructions`` (the MCORE
preprocessor with constant operands): the function's parameters are the
defines, NP/NT/VW come from the configuration, the PCORE symbols from the
kernel instance, the process space is that of the pass.  The firmware
(``sw/firmware/accel.c``) only streams the instruction words
(``docs/tensor_isa.md``) into the TensorEngine's queue and loads the kernel
code into the PCORE instruction memory.

What this module decides (``docs/models.md``, "Accelerated path"): the
kernel instance, the passes of up to NP x NT output pixels (one per thread:
thread ``tau`` of a pass takes pixel ``pass_base + tau``), the row segments of
a pass's windows, which constants are arranged at compile time (DataBlob) and
what goes through the scratch-pad, and the double-buffered schedule: passes
alternate between the two process spaces; while the kernel of pass ``i``
runs, the engine stores pass ``i-1`` and loads pass ``i+1`` (the engine
orders a transfer after the kernel of its own process space only).  PCOREs
of one process space (``SoCConfig.pcore_processes = 1``) run the passes one
after the other: loads, kernel, store.  How each
piece walks memory (im2col through bound checks and the overlapped group,
PAD -32768 for maxpool, the tanh store through stream program 0) is in the
program sources.

An op that does not fit (weights beyond the shared memory, a patch beyond the
private memory, a kernel beyond the instruction memory) gets no program and
runs on the firmware's software path; ``plan()`` says why.
"""

import dataclasses
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from tensorsoc.spec import tensor_isa as isa

from tensorsoc.sw.mcore import api, symbols as symbols_mod
from tensorsoc.spec.numbers import ELEMENT_BYTES
from tensorsoc.spec.pcore_isa import slots
from tensorsoc.sw.pcore import KERNEL_DIR
from tensorsoc.sw.pcore.asm import AsmError, assemble, relocate
from tensorsoc.sw.model.quant import tanh_shift
from tensorsoc.sw.model.roofline import bus_bytes_per_clock
from tensorsoc.sw.model import layout as L

KERNELS = KERNEL_DIR
PROGRAMS = Path(__file__).resolve().parent / "programs"
EB = ELEMENT_BYTES                       # bytes per DDR element (int16)

DDR = isa.space("DDR")
SCRATCH = isa.space("SCRATCH")


@dataclass
class LayerProgram:
    """What the firmware runs for one compute op."""
    op_index: int                 # index in the image's op table
    layer: int
    kind: str
    code: list                    # PCORE instruction words, loaded at instruction address ``origin``
    instrs: list                  # spec.tensor_isa instruction objects (last: CALLBACK)
    macs: int                     # useful multiply-accumulates (the op's own)
    passes: int                   # kernel calls (steps)
    kernel: str = ""              # kernel and its defines, for listings
    tiling: str = ""              # how the op is cut (Tiling.describe())
    padded_macs: int = 0          # lane MACs the kernels execute (idle lanes and threads included)
    notes: list = field(default_factory=list)
    origin: int = 0               # instruction address of code[0] (place_kernels)

    @property
    def words(self):
        w = []
        for i in self.instrs:
            w += isa.encode(i)
        return w

    @property
    def ddr_bytes(self):
        """Bytes the program moves between main RAM (DDR) and the engine:
        every element of a transfer that reads or writes DDR (weights each
        time they are sent, patches, results)."""
        n = 0
        for i in self.instrs:
            if isinstance(i, isa.Transfer):
                for side in (i.src, i.dst):      # a broadcast reads its source once
                    if side.space == DDR:
                        n += side.element_count() * isa.element_bytes(DDR, side.dtype)
        return n


class DataBlob:
    """Constants the compiler arranges for the PCOREs (a kernel's shared-memory
    image: weights in the kernel's coef order, then bias/scale/offset), stored
    in the accelerator section after its header so that each reaches the
    PCOREs as one contiguous transfer.  ``base``: bus address of the first
    byte.  Every piece starts on an ``ALIGN``-byte bus address.  A piece
    equal to one already added is stored once (the same weights used by
    several ops or inference sequences)."""
    ALIGN = 16

    def __init__(self, base):
        self.base = base
        self.data = bytearray(-base % self.ALIGN)
        self._seen = {}

    def add(self, values):
        """Append int16 ``values`` (unless already there); returns their bus address."""
        raw = np.asarray(values, dtype="<i2").tobytes()
        if raw in self._seen:
            return self._seen[raw]
        self.data += bytes(-len(self.data) % self.ALIGN)
        addr = self.base + len(self.data)
        self.data += raw
        self._seen[raw] = addr
        return addr

    def bytes(self):
        return bytes(self.data) + bytes(-len(self.data) % 4)


class NoProgram(Exception):
    """The op stays on the software path (the message says why)."""


class Source:
    """An MCORE source of ``sw/model/programs``: C functions whose ``>`` lines
    are tensor statements.  ``compile(func, ...)`` compiles the statements of
    one function with sw.mcore.api.instructions, the function's parameters
    given as defines (all of them, no others)."""
    _FUNC = re.compile(r"^\s*(?:static\s+)?void\s+(\w+)\s*\(([^)]*)\)\s*$")

    def __init__(self, path):
        self.path = Path(path)
        self.lines = self.path.read_text().split("\n")
        self.funcs = {}                      # name -> (parameter names, indices of its '>' lines)
        func = None
        for i, line in enumerate(self.lines):
            m = self._FUNC.match(line)
            if m:
                params = [] if m.group(2).strip() in ("", "void") else \
                    [a.split()[-1].lstrip("*") for a in m.group(2).split(",")]
                func = (m.group(1), params, [])
                self.funcs[func[0]] = func[1:]
            elif line.startswith("}"):
                func = None
            elif line.lstrip().startswith(">"):
                if func is None:
                    raise ValueError(f"{self.path}:{i + 1}: tensor statement outside a function")
                func[2].append(i)

    def compile(self, func, symbols, process=0, tag=0, **defines):
        params, at = self.funcs[func]
        if set(defines) != set(params):
            raise ValueError(f"{self.path.name}: {func}({', '.join(params)}) given {sorted(defines)}")
        keep = set(at)
        text = "\n".join(line if i in keep else "" for i, line in enumerate(self.lines))
        instrs, errors = api.instructions(text, symbols, defines, process=process, file=str(self.path), tag=tag)
        if errors:
            names = [n for n, (b, _m) in isa.ERRORS.items() if errors >> b & 1]
            raise ValueError(f"{self.path.name}: {func}{defines}: error flag(s) {', '.join(names)}")
        return instrs


def _drop_unit_levels(side):
    """``side`` without its levels that iterate once and change nothing: a
    count of 1 adds 0 to the address; unchecked or with its one index in
    bound it skips nothing, and outside the overlap group it moves no
    overlap offset (a broadcast level of one copy writes each element once).
    The innermost level stays (it decides the data path).  The executor's
    semantics are unchanged, and the TensorEngine decodes 5 words fewer per
    level dropped."""
    keep = []
    for k, lv in enumerate(side.levels):
        bit = 1 << k
        unit = (k > 0 and lv.count == 1 and not side.ovl_mask & bit
                and (not side.check_mask & bit or 0 <= lv.start < lv.bound))
        if not unit:
            keep.append(k)
    if len(keep) == len(side.levels):
        return side

    def mask(m):
        return sum(1 << j for j, k in enumerate(keep) if m >> k & 1)
    return dataclasses.replace(side, levels=[side.levels[k] for k in keep], check_mask=mask(side.check_mask),
                               ovl_mask=mask(side.ovl_mask), bcast_mask=mask(side.bcast_mask))


def compact(instrs):
    """The transfers of ``instrs`` without the levels that iterate once
    (``_drop_unit_levels``; SCATTER transfers as they are): fewer words for
    the TensorEngine to decode, the same result."""
    out = []
    for i in instrs:
        if isinstance(i, isa.Transfer) and not i.scatter:
            i = dataclasses.replace(i, dst=_drop_unit_levels(i.dst), src=_drop_unit_levels(i.src))
        out.append(i)
    return out


@lru_cache(maxsize=None)
def source(name):
    """The program source ``sw/model/programs/<name>.c``."""
    return Source(PROGRAMS / f"{name}.c")


# -- tiling: decided here, once (docs/models.md, "Tiling") ---------------------

def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass
class Tiling:
    """How one op is cut into kernel calls (steps).

    ``kernel``: ``convolution`` (conv, and lin with more than one column:
    a thread per output pixel / column), ``linear`` (lin with one column:
    a thread per block of VW outputs) or ``maxpool``.  ``units``: output
    pixels / columns / blocks, taken ``per_pass`` (NP x NT) at a time;
    ``c_tile``: output channels per tile (maxpool: channels); ``k_tiles``:
    the K tiles as (ky0, ky1, c0, c1), inclusive (one tile: K is not cut;
    for lin c is the input index)."""
    kernel: str
    units: int
    per_pass: int
    channels: int
    c_tile: int
    k_tiles: list
    resident: bool = False        # two K halves, one per process space, kept across the output groups

    @property
    def n_passes(self):
        return -(-self.units // self.per_pass)

    @property
    def n_c_tiles(self):
        return self.channels // self.c_tile

    @property
    def k_tiled(self):
        return len(self.k_tiles) > 1

    @property
    def k_tile(self):
        ky0, ky1, c0, c1 = self.k_tiles[0]
        return ky1 - ky0 + 1, c1 - c0 + 1

    def describe(self):
        parts = [f"{self.n_passes} pass(es) of <= {self.per_pass}"]
        if self.n_c_tiles > 1:
            parts.append(f"{self.n_c_tiles} channel tiles of {self.c_tile}")
        if self.resident:
            r, c = self.k_tile
            parts.append(f"K in 2 halves ({c} channel(s) each), one per process space, resident")
        elif self.k_tiled:
            r, c = self.k_tile
            last = self.k_tiles[-1][3] - self.k_tiles[-1][2] + 1
            parts.append(f"{len(self.k_tiles)} K tiles of {c} inputs" + (f" (the last {last})" if last != c else "")
                         if self.kernel == "linear" else
                         f"{len(self.k_tiles)} K tiles ({r} kernel row(s) x {c} channel(s))")
        return ", ".join(parts)


def tile_matmul(config, KH, KW, C, CO, P, bias, bn):
    """The convolution kernel's tiling of a conv (lin: KH = KW = 1, C = n_in)
    with P output pixels.  Private words per thread: the patch (K tile) +
    COUT outputs (+ COUT biases when ``bias`` == 2); shared words per PCORE:
    coef[GT][KT][VW] + the epilogue vectors.  Cost model (docs/models.md):
    each output-channel tile re-sends every patch, each K tile costs a
    kernel call and the weights of its group once per pass, so the largest
    tiles that fit are the cheapest: the most output channels with K whole,
    else K cut along input channels (then kernel rows) with one group of VW
    outputs per kernel, its partial sum in the accumulator."""
    vw, PW, SW = config.vw, config.pcore_private_words, config.pcore_shared_words
    T = config.np * config.nt

    def fits(kt, gt):
        ct = gt * vw
        private = kt + ct + (ct if bias == 2 else 0)
        shared = gt * kt * vw + (ct if bias == 1 else 0) + (2 * ct if bn else 0)
        return private <= PW and shared <= SW

    K = KH * KW * C
    gts = [g for g in _divisors(CO // vw) if fits(K, g)]
    if gts:
        return Tiling("convolution", P, T, CO, max(gts) * vw, [(0, KH - 1, 0, C - 1)])
    if C % 2 == 0 and fits(K // 2, 1) and config.pcore_processes == 2:
        h = C // 2
        return Tiling("convolution", P, T, CO, vw, [(0, KH - 1, 0, h - 1), (0, KH - 1, h, C - 1)], resident=True)
    best = max(((rt * KW * ct, rt, ct) for rt in _divisors(KH) for ct in _divisors(C) if fits(rt * KW * ct, 1)),
               default=None)
    if best is None:
        raise NoProgram(f"one kernel row ({KW} taps of one input channel) and {vw} outputs take more than a "
                        f"thread's {PW} private or a PCORE's {SW} shared words")
    _, rt, ct = best
    tiles = [(ky, ky + rt - 1, c, c + ct - 1) for ky in range(0, KH, rt) for c in range(0, C, ct)]
    return Tiling("convolution", P, T, CO, vw, tiles)


# The cost model of the linear kernel's K tiles (tile_linear), in clocks
# (docs/models.md, "Cost model"): a transfer costs its bus words, 2 more
# per burst of BURST_BEATS (the first access's latency and the clock the
# master leaves the bus; cores/tensor_engine/vector.py), and TRANSFER_CLOCKS
# (the path's fill and drain, the executor's hand-over, the EXE between
# steps); a step's column transfer, shorter than the decode of the next
# step's weights, leaves DECODE_CLOCKS less its own clocks exposed (the
# engine decodes one instruction ahead, a word per clock: a short transfer
# cannot hide the next one's decode).  A kernel call costs one slot per
# input of its tile, a slot being the clocks of one mac of the loop
# (isa.slots: max(active threads of a PCORE, MIN_SLOTS), CHAIN_SLOTS with 1
# or 2 threads; docs/pcore.md), and KERNEL_CLOCKS (its address set-up, halt,
# the pipeline drain, the EXE); LAYER_CLOCKS is the rest (the first
# transfer's decode, the last kernel's epilogue, the CALLBACK).  Checked
# against `tsoc bench layers` (docs/models.md, "Tiling": it ranks the K
# tiles as measured; it overestimates the small layers by about 8%).
BURST_BEATS = 64
TRANSFER_CLOCKS = 12
DECODE_CLOCKS = 24
KERNEL_CLOCKS = 20
LAYER_CLOCKS = 52


def _transfer_clocks(words):
    return words + 2 * -(-words // BURST_BEATS) + TRANSFER_CLOCKS


def linear_k_tiles(NI, KT):
    """The K tiles of a batch-1 lin cut at KT inputs: full tiles of KT and a
    last one of the remaining 1..KT inputs, as (first input, inputs)."""
    full = -(-NI // KT) - 1
    return [(k * KT, KT) for k in range(full)] + [(full * KT, NI - full * KT)]


def linear_steps_clocks(config, NI, NO, KT, bias, bn):
    """Estimated clocks of a batch-1 lin cut into K tiles of KT inputs, the
    last one shorter where KT does not divide NI (linear_k_tiles;
    schedule(): step i+1's loads overlap kernel i where the PCOREs have two
    process spaces, and follow it where they have one; the kernels, sharing
    the accumulator, run one after the other; the epilogue vectors travel
    with the last tile's weights)."""
    vw, bus = config.vw, bus_bytes_per_clock(config)
    T = config.np * config.nt
    units = NO // vw
    epi = vw * (int(bias) + 2 * int(bn))
    sizes = [k for _, k in linear_k_tiles(NI, KT)]
    total = LAYER_CLOCKS
    for b in range(-(-units // T)):
        n = min(T, units - b * T)
        slot = slots(min(n, config.nt), "mac")     # the mac loop: chained with 1 or 2 threads

        def load(k, extra=0):
            column = _transfer_clocks(-(-k * 2 // bus))
            return _transfer_clocks(-(-n * (k * vw + extra) * 2 // bus)) + column + max(0, DECODE_CLOCKS - column)

        def kernel(k):
            return slot * k + KERNEL_CLOCKS
        loads = [load(k) for k in sizes[:-1]] + [load(sizes[-1], vw + epi if epi else 0)]
        total += loads[0]
        for i in range(1, len(sizes)):
            if config.pcore_processes == 2:
                total += max(loads[i], kernel(sizes[i - 1]))
            else:
                total += loads[i] + kernel(sizes[i - 1])
        total += kernel(sizes[-1]) + _transfer_clocks(-(-n * vw * 2 // bus))
    return total


def tile_linear(config, NI, NO, bias, bn):
    """The linear kernel's tiling of a batch-1 lin: a thread per block of VW
    outputs holding KT x VW weights + VW outputs + its epilogue vectors;
    the input tile (KT words) in the shared memory.  KT: the tile that
    fits with the fewest estimated clocks (linear_steps_clocks; ties to the
    larger KT, fewer kernel calls); the last tile takes the remaining
    inputs (linear_k_tiles).  The last kernel is the one nothing overlaps:
    with few blocks the best cut leaves it short (88 inputs: 41 + 41 + 6);
    many blocks keep the largest KT."""
    vw, PW, SW = config.vw, config.pcore_private_words, config.pcore_shared_words
    epi = vw * (int(bias) + 2 * int(bn))
    kt_max = min((PW - vw - epi) // vw, SW)
    if kt_max < 1:
        raise NoProgram(f"{vw} weights, the outputs and the epilogue of one block take more than a "
                        f"thread's {PW} private words")
    kt = min(range(1, min(kt_max, NI) + 1), key=lambda d: (linear_steps_clocks(config, NI, NO, d, bias, bn), -d))
    return Tiling("linear", NO // vw, config.np * config.nt, NO, NO,
                  [(0, 0, k0, k0 + k - 1) for k0, k in linear_k_tiles(NI, kt)])


def tile_maxpool(config, KH, KW, C, P):
    """Maxpool: a thread per output pixel holds its window (KH x KW x CT)
    and CT outputs; CT the most channels (a multiple of VW dividing C) that
    fit.  When even VW channels do not fit: CT = VW and tiles of the most
    kernel rows (a divisor of KH) that fit, the running maximum in a
    register."""
    vw, PW = config.vw, config.pcore_private_words
    T = config.np * config.nt
    cts = [g * vw for g in _divisors(C // vw) if KH * KW * g * vw + g * vw <= PW]
    if cts:
        return Tiling("maxpool", P, T, C, max(cts), [(0, KH - 1, 0, C - 1)])
    rts = [r for r in _divisors(KH) if r * KW * vw + vw <= PW]
    if not rts:
        raise NoProgram(f"one window row of {KW} taps x {vw} channels takes {KW * vw + vw} private words, "
                        f"a thread has {PW}")
    rt = max(rts)
    return Tiling("maxpool", P, T, C, vw, [(ky, ky + rt - 1, 0, vw - 1) for ky in range(0, KH, rt)])


@dataclass
class Step:
    """One kernel call of a program: its shared constants (``shared``: a key
    and a function of the process space giving their transfers, or None),
    its loads, its kernel function(s) and, if it completes outputs, their
    store."""
    n: int
    loads: object
    exes: list
    shared: tuple = None
    store: object = None
    k: int = 0                    # the linear kernel: the step's K tile (inputs)


def schedule(steps, prologue, exe, processes=2):
    """Double-buffered: step i on process space i % 2.  Its shared constants
    when that space does not hold them yet, its loads, its kernels, then the
    store of the step before: while kernel i runs, the engine stores step
    i-1 and loads step i+1 (a transfer waits only for a kernel of its own
    process space).  The accumulator is common to both spaces, so the
    K tiles of a dot product can alternate.  With one process space
    (``processes`` = 1, ``SoCConfig.pcore_processes``) every step is on
    space 0 and its store follows its kernels at once: the store waits for
    them, and the next step's loads, behind the store in the queue, for the
    store."""
    instrs = list(prologue)
    held = [None] * processes
    pending = []
    for i, st in enumerate(steps):
        p = i % processes
        if st.shared is not None and held[p] != st.shared[0]:
            instrs += st.shared[1](p)
            held[p] = st.shared[0]
        instrs += st.loads(p)
        for f in st.exes:
            instrs += exe(f, p, st.n)
        store = st.store(p) if st.store else []
        if processes == 1:
            instrs += store
        else:
            instrs += pending
            pending = store
    return instrs + pending


class _Gen:
    def __init__(self, config, address, frac, tanh_table, data=None):
        self.c = config
        self.addr = address                  # Tensor -> bus byte address
        self.frac = frac                     # the model's fractional bits
        self.tanh_table = tanh_table         # bus address of the SPU tanh table (or None)
        self.data = data                     # DataBlob for arranged constants (or None)
        self.T = config.np * config.nt
        self.PW = config.pcore_private_words
        self.SW = config.pcore_shared_words

    # -- pieces ---------------------------------------------------------------
    def kernel(self, source_name, cls, defines):
        try:
            prog = assemble([KERNELS / source_name], self.c, defines)
        except AsmError as e:          # e.g. the variables exceed the PCORE memories
            raise NoProgram(str(e).splitlines()[0].split(": ", 2)[-1]) from None
        if len(prog.words) > self.c.pcore_imem_words:
            raise NoProgram(f"kernel of {len(prog.words)} words exceeds the {self.c.pcore_imem_words}-word "
                            f"instruction memory (pcore_imem_words)")
        return prog

    @staticmethod
    def statements(prog, name):
        """f(func, process=0, **defines): the instructions of function ``func``
        of program source ``name``, with the symbols of the kernel ``prog``.
        The preprocessor may give a statement all the format's levels: the
        transfers are checked against ``te_levels``, ``te_dst_levels`` and
        ``te_dst_overlap`` once their unit levels are dropped (``compact``,
        ``_check_levels``)."""
        d = prog.symbols()
        d["config"]["te_levels"] = d["config"]["te_dst_levels"] = isa.MAX_LEVELS
        d["config"]["te_dst_overlap"] = 1
        syms = symbols_mod.from_dict(d)
        return lambda func, process=0, **defines: compact(source(name).compile(func, syms, process, **defines))

    def lanes_run(self, n):
        """Threads an EXE_LOCKSTEP of n threads runs (whole PCOREs of NT, or n of PCORE 0)."""
        return -(-n // self.c.nt) * min(n, self.c.nt)

    def windows(self, run, func, q0, n, process, WO, sh, pt, **defines):
        """The window loads of output pixels q0..q0+n-1 (row-major over WO
        columns; thread = pixel - q0): one ``func`` call per output row segment."""
        out = []
        q, qb = q0, q0 + n
        while q < qb:
            oy, oxa = divmod(q, WO)
            m = min(WO - oxa, qb - q)
            out += run(func, process, WO=WO, Y0=oy * sh - pt, OXA=oxa, N=m, TAU=q - q0, **defines)
            q += m
        return out

    def stage_input(self, run, x_addr, nbytes, scratch_used):
        """(space, address) to read an op's input from: the scratch-pad after
        ``scratch_used`` bytes when it fits (one contiguous DDR read, then
        every window reads the scratch-pad at a vector word per clock), else
        DDR.  Returns also the staging transfers."""
        at = -(-scratch_used // 16) * 16
        if at + nbytes > self.c.scratch_size:
            return DDR, x_addr, []
        return SCRATCH, at, run("stage", AT=at, SRC=x_addr, N=nbytes // EB)

    @staticmethod
    def constant(t):
        """The int16 values of a constant tensor in memory order, or None
        (e.g. a tensor the host streams in at each inference)."""
        if t is None or t.region != "CONST" or t.raw is None:
            return None
        return L.to_memory(t.raw, t.layout)

    def tanh_prologue(self, op, syms_prog):
        if op.act != "tanh":
            return []
        return self.statements(syms_prog, "convolution")("tanh_table", TANH=self.tanh_table)

    # -- conv / lin on the convolution kernel ------------------------------------
    def matmul(self, op, *, P, KH, KW, C, CO, patch_loads, coef_values, w_coef, x_bytes=0):
        """conv/lin on the convolution kernel: P pixels of a KH x KW x C
        window, CO outputs, tiled by tile_matmul.  ``patch_loads(run, q0, n,
        p, space, x, tile)``: the loads of K tile ``tile`` of pixels
        q0..q0+n-1; ``coef_values()``: the weights as [G][KH][KW][C][VW]
        when they are constants (else None: ``w_coef(run, p, g0, gt, tile,
        npu)`` rearranges them with the engine); ``x_bytes``: the input's
        size when staging it in the scratch-pad pays (0: read DDR)."""
        c, vw = self.c, self.c.vw
        bias = 0 if not op.bias_en else (1 if op.repl_bias else 2)
        tanh = op.act == "tanh"
        tl = tile_matmul(c, KH, KW, C, CO, P, bias, op.bn_en)
        CT = tl.c_tile
        GT = CT // vw
        rt, ct = tl.k_tile if tl.k_tiled else (KH, C)
        KT = rt * KW * ct
        defines = dict(KH=rt, KW=KW, CIN=ct, COUT=CT, NPIX=1, FRAC=self.frac, BIAS=bias, BN=int(op.bn_en),
                       RELU=int(op.act == "relu"), TSH=tanh_shift(self.frac) if tanh else 0)
        prog = self.kernel("convolution.pcore", "convolution", defines)
        run, layer = self.statements(prog, "convolution"), self.statements(prog, "layer")
        var = lambda n: prog.variable("convolution", n)
        y = self.addr(op.res)
        # Shared constants go to the PCOREs the passes use only (each copy
        # costs engine cycles).  A broadcast covers a power of 2 of PCOREs
        # (PCORE dimensions are powers of 2, guide 3.4).
        npu = min(c.np, -(-min(P, self.T) // c.nt))
        npu_bcast = 1 << (npu - 1).bit_length()

        # The shared-memory image of each (channel tile, K tile): coef, then
        # bias / scale / offset where the kernel has them (the epilogue
        # vectors with the last K tile only), arranged at compile time when
        # every part is a constant: one contiguous transfer per PCORE.
        w = coef_values()
        bvals = self.constant(op.bias) if bias == 1 else None
        bn = self.constant(op.batch) if op.bn_en else None
        arranged = (self.data is not None and w is not None and (bias != 1 or bvals is not None)
                    and (not op.bn_en or bn is not None))
        lo = var("coef").addr
        images = {}                                     # (tile index, k index) -> (address, words)
        if arranged:
            for t in range(tl.n_c_tiles):
                for ki, (ky0, ky1, c0, c1) in enumerate(tl.k_tiles):
                    parts = {"coef": w[t * GT:(t + 1) * GT, ky0:ky1 + 1, :, c0:c1 + 1].reshape(-1)}
                    last = ki == len(tl.k_tiles) - 1
                    sl = slice(t * CT, (t + 1) * CT)
                    if last and bias == 1:
                        parts["bias"] = bvals[sl]
                    if last and op.bn_en:
                        parts["scale"], parts["offset"] = bn[:CO][sl], bn[CO:2 * CO][sl]
                    end = max(var(n).addr + var(n).size for n in parts)
                    image = np.zeros(end - lo, dtype=np.int64)
                    for n, val in parts.items():
                        image[var(n).addr - lo:var(n).addr - lo + var(n).size] = np.asarray(val).reshape(-1)
                    images[t, ki] = (self.data.add(image), image.size)
        # Scratch-pad staging, by DDR reads saved per byte: the input is read
        # about KH x KW times (its windows overlap), each image ``uses``
        # times (once per PCORE and pass when K is cut, once per PCORE and
        # process space otherwise).  What does not fit is read from DDR.
        prologue = self.tanh_prologue(op, prog)
        x_space, x_at = DDR, self.addr(op.b)
        uses = npu * (tl.n_passes if tl.k_tiled else min(c.pcore_processes, tl.n_passes))
        wanted = [(KH * KW - 1, "input", x_bytes)] if x_bytes else []
        if uses > 1:
            wanted += [(uses - 1, key, n * EB) for key, (_at, n) in sorted(images.items())]
        used, img_space = 0, {}
        for _gain, key, nbytes in sorted(wanted, key=lambda w: -w[0]):
            if used + nbytes > c.scratch_size:
                continue
            if key == "input":
                x_space, x_at, st = self.stage_input(layer, x_at, nbytes, used)
            else:
                img_space[key] = used
                st = layer("stage", AT=used, SRC=images[key][0], N=images[key][1])
            prologue += st
            used = -(-(used + nbytes) // 16) * 16

        def shared(t, ki):
            def load(p):
                if arranged:
                    at, n = images[t, ki]
                    sp = img_space.get((t, ki))
                    func, src = ("image_scratch", sp) if sp is not None else ("image_ddr", at)
                    return run(func, p, IMG=src, IMAGE=n, NPU=npu_bcast)
                s = w_coef(run, p, t * GT, GT, tl.k_tiles[ki], npu_bcast)
                if ki == len(tl.k_tiles) - 1:
                    if bias == 1:
                        s += run("bias", p, B=self.addr(op.bias), CO0=t * CT, CT=CT, NPU=npu_bcast)
                    if op.bn_en:
                        s += run("batchnorm", p, BN=self.addr(op.batch), CO=CO, CO0=t * CT, CT=CT, NPU=npu_bcast)
                return s
            return ((t, ki), load)

        def loads_bias(t, q0, n):
            return lambda p: run("bias_pixels", p, B=self.addr(op.bias), P=P, CO=CO, CO0=t * CT, CT=CT, Q0=q0, N=n)

        def loads(t, ki, q0, n):
            def f(p):
                b = patch_loads(run, q0, n, p, x_space, x_at, tl.k_tiles[ki])
                if bias == 2 and ki == len(tl.k_tiles) - 1:
                    b += loads_bias(t, q0, n)(p)
                return b
            return f

        def store(t, q0, n):
            if CT == CO:
                return lambda p: run("store_tanh" if tanh else "store", p, Y=y, CO=CO, Q0=q0, N=n)
            return lambda p: run("store_tile_tanh" if tanh else "store_tile", p, Y=y, P=P, CO=CO, CO0=t * CT,
                                 CT=CT, Q0=q0, N=n)

        steps = []
        nk = len(tl.k_tiles)
        passes = [(b * self.T, min(self.T, P - b * self.T)) for b in range(tl.n_passes)]
        if nk == 1:              # K whole: channel tiles outer, each tile's weights loaded once per space
            for t in range(tl.n_c_tiles):
                for q0, n in passes:
                    steps.append(Step(n, loads(t, 0, q0, n), ["exe"], shared(t, 0), store(t, q0, n)))
        elif tl.resident:        # K halves: half h stays in process space h for all the groups of a pass
            for q0, n in passes:
                for t in range(tl.n_c_tiles):
                    for h in (0, 1):
                        load = loads(t, h, q0, n) if t == 0 else (
                            loads_bias(t, q0, n) if h == 1 and bias == 2 else (lambda p: []))
                        steps.append(Step(n, load, ["first"] if h == 0 else ["mid", "finish"], shared(t, h),
                                          store(t, q0, n) if h == 1 else None))
        else:                    # K tiled: the K tiles of a pass and group in a row (the accumulator)
            for q0, n in passes:
                for t in range(tl.n_c_tiles):
                    for ki in range(nk):
                        last = ki == nk - 1
                        steps.append(Step(n, loads(t, ki, q0, n), ["first" if ki == 0 else "mid"]
                                          + (["finish"] if last else []), shared(t, ki),
                                          store(t, q0, n) if last else None))
        instrs = schedule(steps, prologue, lambda f, p, n: run(f, p, N=n), c.pcore_processes)
        padded = sum(self.lanes_run(st.n) * (GT * KT if "exe" in st.exes else KT) * vw for st in steps)
        return (prog, instrs, len(steps), P * KH * KW * C * CO, padded, f"convolution.pcore {defines}", tl)

    def conv(self, op):
        H, W, C = op.b.dims
        KH, KW, _, CO = op.a.dims
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        vw = self.c.vw

        def loads(run, q0, n, p, space, x, tile):
            ky0, ky1, c0, c1 = tile
            func = "patch_scratch" if space == SCRATCH else "patch_ddr"
            return self.windows(run, func, q0, n, p, WO, sh, pt, X=x, H=H, W=W, C=C, KW=KW, SW=sw, PL=pl,
                                KY0=ky0, KY1=ky1, C0=c0, C1=c1)

        def coef_values():
            w = self.constant(op.a)         # [KH][KW][C][CO] -> [G][KH][KW][C][VW]
            return None if w is None else w.reshape(KH, KW, C, CO // vw, vw).transpose(3, 0, 1, 2, 4)

        def w_coef(run, p, g0, gt, tile, npu):
            ky0, ky1, c0, c1 = tile
            if gt * vw == CO and (ky0, ky1, c0, c1) == (0, KH - 1, 0, C - 1):
                return run("coef_conv", p, W=self.addr(op.a), K=KH * KW * C, G=gt, NPU=npu)
            return run("coef_conv_tile", p, W=self.addr(op.a), KH=KH, KW=KW, C=C, CO=CO, KY0=ky0, KY1=ky1,
                       C0=c0, C1=c1, G0=g0, GT=gt, NPU=npu)

        return self.matmul(op, P=HO * WO, KH=KH, KW=KW, C=C, CO=CO, patch_loads=loads,
                           coef_values=coef_values, w_coef=w_coef,
                           x_bytes=H * W * C * EB if KH * KW > 1 else 0)

    def lin(self, op):
        NO, NI = op.a.dims
        NB = op.res.dims[1]
        x = self.addr(op.b)
        vw = self.c.vw
        if NB == 1 and self.data is not None and self.constant(op.a) is not None and \
                (not op.bias_en or self.constant(op.bias) is not None) and \
                (not op.bn_en or self.constant(op.batch) is not None):
            try:
                return self.lin_rows(op)
            except NoProgram:        # a block's rows do not fit a thread: the convolution mapping may
                pass

        def loads(run, q0, n, p, space, at, tile):
            _, _, k0, k1 = tile
            return run("columns", p, X=x, NB=NB, K=NI, K0=k0, K1=k1, Q0=q0, N=n)

        def coef_values():
            w = self.constant(op.a)         # W[NO][NI] -> [G][1][1][NI][VW]
            return None if w is None else w.reshape(NO // vw, vw, 1, 1, NI).transpose(0, 2, 3, 4, 1)

        def w_coef(run, p, g0, gt, tile, npu):
            _, _, k0, k1 = tile
            if gt * vw == NO and (k0, k1) == (0, NI - 1):
                return run("coef_lin", p, W=self.addr(op.a), K=NI, G=gt, NPU=npu)
            return run("coef_lin_tile", p, W=self.addr(op.a), NO=NO, NI=NI, K0=k0, K1=k1, G0=g0, GT=gt, NPU=npu)

        return self.matmul(op, P=NB, KH=1, KW=1, C=NI, CO=NO, patch_loads=loads, coef_values=coef_values,
                           w_coef=w_coef)

    def lin_rows(self, op):
        """Batch-1 lin on the linear kernel: each weight read once."""
        c, vw = self.c, self.c.vw
        NO, NI = op.a.dims
        tl = tile_linear(c, NI, NO, op.bias_en, op.bn_en)
        KT = tl.k_tiles[0][3] + 1
        nk = len(tl.k_tiles)
        tanh = op.act == "tanh"
        # NLAST: the last tile's inputs, which the kernel's ``last`` runs
        # before the epilogue; one tile: ``first`` takes them all.
        nlast = tl.k_tiles[-1][3] - tl.k_tiles[-1][2] + 1 if nk > 1 else 0
        defines = dict(NIN=KT, NLAST=nlast, OB=1, NB=1, FRAC=self.frac, BIAS=int(op.bias_en), BN=int(op.bn_en),
                       RELU=int(op.act == "relu"), TSH=tanh_shift(self.frac) if tanh else 0)
        prog = self.kernel("linear.pcore", "linear", defines)
        run = self.statements(prog, "linear")
        x, y = self.addr(op.b), self.addr(op.res)
        w = self.constant(op.a).reshape(NO // vw, vw, NI)          # [block][lane][input]
        epi = []
        if op.bias_en:
            epi.append(self.constant(op.bias)[:NO].reshape(-1, vw))
        if op.bn_en:
            bn = self.constant(op.batch)
            epi += [bn[:NO].reshape(-1, vw), bn[NO:2 * NO].reshape(-1, vw)]
        # The epilogue vectors travel with the last K tile's weights, in one
        # transfer: y, the epilogue and w follow one another in the private
        # memory, so the transfer is contiguous whatever the last tile's size.
        var = lambda name: prog.variable("linear", name)
        joined = bool(epi)
        assert not epi or (var("bias" if op.bias_en else "scale").addr == var("y").addr + vw and
                           var("w").addr == var("y").addr + vw * (1 + len(epi))), "linear.pcore layout"
        steps = []
        for b in range(tl.n_passes):
            blk0, n = b * self.T, min(self.T, tl.units - b * self.T)
            npu = -(-n // c.nt)
            e_vals = np.stack(epi, axis=1)[blk0:blk0 + n].reshape(n, -1) if epi else None
            for ki, (_, _, k0, k1) in enumerate(tl.k_tiles):
                # Weights of this step's threads: [thread][k][lane], one block
                # (the last tile: VW zeros over y, the epilogue, [thread][k][lane]).
                last = ki == nk - 1
                kt = k1 - k0 + 1
                wt = w[blk0:blk0 + n, :, k0:k1 + 1].transpose(0, 2, 1).reshape(n, -1)
                if last and joined:
                    wt = np.concatenate([np.zeros((n, vw), dtype=wt.dtype), e_vals, wt], axis=1)
                w_at = self.data.add(wt.reshape(-1))

                def loads(p, w_at=w_at, k0=k0, kt=kt, n=n, npu=npu, last=last):
                    if last and joined:
                        s = run("weights_epilogue", p, WA=w_at, KT=kt, E=vw * len(epi), N=n)
                    else:
                        s = run("weights", p, WA=w_at, KT=kt, N=n)
                    return s + run("column", p, X=x, K0=k0, KT=kt, NPU=npu)

                store = (lambda p, blk0=blk0, n=n: run("store_tanh" if tanh else "store", p, Y=y, O0=blk0 * vw,
                                                       N=n)) if last else None
                exes = ["first", "last"] if nk == 1 else ["first"] if ki == 0 else ["last"] if last else ["mid"]
                steps.append(Step(n, loads, exes, None, store, kt))
        instrs = schedule(steps, self.tanh_prologue(op, prog), lambda f, p, n: run(f, p, N=n), c.pcore_processes)
        padded = sum(self.lanes_run(st.n) * st.k * vw for st in steps)
        return prog, instrs, len(steps), NO * NI, padded, f"linear.pcore {defines}", tl

    def maxpool(self, op):
        H, W, C = op.a.dims
        KH, KW = op.kernel
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        P = HO * WO
        tl = tile_maxpool(self.c, KH, KW, C, P)
        CT = tl.c_tile
        rt = tl.k_tile[0]
        prog = self.kernel("maxpool.pcore", "maxpool", dict(KK=rt * KW, C=CT, NPIX=1))
        run, layer = self.statements(prog, "maxpool"), self.statements(prog, "layer")
        x, y = self.addr(op.a), self.addr(op.res)
        # Overlapping windows read each input element more than once: stage the input.
        x_space, x_at, staging = (self.stage_input(layer, x, H * W * C * EB, 0) if KH > sh or KW > sw
                                  else (DDR, x, []))
        func = "window_scratch" if x_space == SCRATCH else "window_ddr"

        def loads(q0, n, t, ky0, ky1):
            return lambda p: self.windows(run, func, q0, n, p, WO, sh, pt, X=x_at, H=H, W=W, C=C, KW=KW, SW=sw,
                                          PL=pl, KY0=ky0, KY1=ky1, C0=t * CT, C1=t * CT + CT - 1)

        def store(q0, n, t):
            if CT == C:
                return lambda p: run("store", p, Y=y, C=C, Q0=q0, N=n)
            return lambda p: run("store_tile", p, Y=y, P=P, C=C, C0=t * CT, C1=t * CT + CT - 1, Q0=q0, N=n)

        steps = []
        nk = len(tl.k_tiles)
        for b in range(tl.n_passes):
            q0, n = b * self.T, min(self.T, P - b * self.T)
            for t in range(tl.n_c_tiles):
                for ki, (ky0, ky1, _c0, _c1) in enumerate(tl.k_tiles):
                    last = ki == nk - 1
                    exes = ["exe"] if nk == 1 else ["first" if ki == 0 else "mid"] + (["finish"] if last else [])
                    steps.append(Step(n, loads(q0, n, t, ky0, ky1), exes, None, store(q0, n, t) if last else None))
        instrs = schedule(steps, staging, lambda f, p, n: run(f, p, N=n), self.c.pcore_processes)
        return prog, instrs, len(steps), 0, 0, f"maxpool.pcore KK={rt * KW} C={CT} NPIX=1", tl

    def done(self, prog, layer):
        """The program's final CALLBACK, its tag the layer number."""
        return source("layer").compile("done", symbols_mod.from_dict(prog.symbols()), tag=layer)


def _check_levels(instrs, config):
    """NoProgram when a transfer has a side of more loop levels than the
    TensorEngine has (``SoCConfig.te_levels``, ``te_dst_levels``), or a
    destination with an overlap group where the engine has none
    (``te_dst_overlap=0``): it would set DECODE and be skipped; or when a
    side's overlap offsets do not fit in ``te_ovl_bits`` (the engine would
    wrap them): the layer stays in software, saying why."""
    for i in instrs:
        if isinstance(i, isa.Transfer):
            n = i.src.nlevels
            if n > config.te_levels:
                raise NoProgram(f"a transfer needs {n} loop levels and this TensorEngine has "
                                f"te_levels={config.te_levels} (an engine with --set te_levels={n} runs it)")
            n = i.dst.nlevels
            if n > config.dst_levels:
                field = "te_dst_levels" if config.te_dst_levels else "te_levels"
                raise NoProgram(f"a transfer's destination needs {n} loop levels and this TensorEngine has "
                                f"{field}={config.dst_levels} (an engine with --set {field}={n} runs it)")
            if i.dst.ovl_mask and not config.te_dst_overlap:
                raise NoProgram("a transfer's destination has an overlap group and this TensorEngine has "
                                "te_dst_overlap=0 (an engine with --set te_dst_overlap=1 runs it)")
            for role, side in (("source", i.src), ("destination", i.dst)):
                need = isa.offset_bits(side)
                if need > config.te_ovl_bits:
                    raise NoProgram(f"a transfer's {role} has overlap offsets that need {need} bits and this "
                                    f"TensorEngine keeps them in te_ovl_bits={config.te_ovl_bits} (an engine with "
                                    f"--set te_ovl_bits={need} runs it)")


def plan(model, config, address, tanh_table_addr=None, data=None, resident=True):
    """{op-table index: LayerProgram or the reason (str) it stays in software}
    for the compute ops of ``model`` (indices of the compiler's op table,
    compiler.op_entries, where a duplex stream takes two entries).
    ``address``: Tensor -> bus byte address.  ``data``: a DataBlob the
    programs may place arranged constants in (its bytes must then be at its
    base address when they run); without one the weights are rearranged by
    the TensorEngine on the way (element by element: slower).
    ``resident``: give the kernels their own places in the instruction
    memory (place_kernels); else every kernel is at address 0."""
    gen = _Gen(config, address, model.frac_bits, tanh_table_addr, data)
    out = {}
    index = 0
    for op in model.ops:
        if op.kind == "stream":
            index += (op.c2h is not None) + (op.h2c is not None)
            continue
        try:
            prog, instrs, n_steps, macs, padded, desc, tl = getattr(gen, op.kind)(op)
            instrs += gen.done(prog, op.layer)
            _check_levels(instrs, config)
            out[index] = LayerProgram(op_index=index, layer=op.layer, kind=op.kind, code=list(prog.words),
                                      instrs=instrs, macs=macs, passes=n_steps, kernel=desc,
                                      tiling=tl.describe(), padded_macs=padded)
        except NoProgram as e:
            out[index] = str(e)
        index += 1
    if resident:
        place_kernels([p for p in out.values() if not isinstance(p, str)], config.pcore_imem_words)
    return out


def place_kernels(progs, imem_words):
    """Gives each distinct kernel of ``progs`` its own place in the PCORE
    instruction memory, one after the other in op order, when they all fit
    (relocating the code and the EXE_LOCKSTEP entry points): the firmware
    then loads them once per model and queues consecutive layers back to
    back, without a kernel load between them (docs/models.md, "Firmware").
    When they do not fit, every kernel stays at address 0 and is loaded
    before its layer.  Returns whether they were placed."""
    origins, end = {}, 0
    for p in progs:
        key = tuple(p.code)
        if key and key not in origins:
            origins[key] = end
            end += len(key)
    if end > imem_words:
        return False
    for p in progs:
        o = origins.get(tuple(p.code), 0)
        if o:
            p.code = relocate(p.code, o)
            p.instrs = [dataclasses.replace(i, func=i.func + o) if isinstance(i, isa.Exe) else i
                        for i in p.instrs]
            p.origin = o
    return True


def kernels_resident(progs, imem_words):
    """Whether the codes of ``progs`` all fit the instruction memory at
    their origins at once: no two different codes overlap (the image's
    ``kernels_resident`` flag)."""
    spans = sorted({(p.origin, tuple(p.code)) for p in progs if p.code})
    for (o, code), (o2, code2) in zip(spans, spans[1:]):
        if o + len(code) > o2:
            return False
    return all(o + len(code) <= imem_words for o, code in spans)
