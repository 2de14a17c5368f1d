"""Accelerator programs of a model: each TENS_CONV, TENS_LIN and TENS_MAXPOOL
op as a PCORE kernel instance plus the TensorEngine instructions that feed
it, generated at model-compile time.

The TensorEngine programs are MCORE firmware: the tensor statements (``>``
lines, the MCORE programmer guide's syntax) of the C functions in
``sw/model/programs/`` -- ``convolution.c`` (conv and lin), ``maxpool.c``,
``layer.c`` (scratch-pad staging, the final CALLBACK).  Every address and size
of a model is known when it is compiled (the memory plan places every tensor,
the windows sit at fixed addresses of the configuration), so this module
compiles each function it calls with ``sw.mcore.api.instructions`` (the MCORE
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
orders a transfer after the kernel of its own process space only).  How each
piece walks memory (im2col through bound checks and the overlapped group,
PAD -32768 for maxpool, the tanh store through stream program 0) is in the
program sources.

An op that does not fit (weights beyond the shared memory, a patch beyond the
private memory, a kernel beyond the instruction memory) gets no program and
runs on the firmware's software path; ``plan()`` says why.
"""

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from sw.mcore import api, isa, symbols as symbols_mod
from sw.pcore.asm import AsmError, assemble
from verification.golden.cnn import tanh_shift

KERNELS = Path(__file__).resolve().parent.parent / "pcore" / "kernels"
PROGRAMS = Path(__file__).resolve().parent / "programs"
EB = 2                                   # bytes per DDR element (int16)
IMEM_WORDS = 1024                        # cores/pcore/soc.py add_pcore_array default

DDR = isa.space("DDR")
SCRATCH = isa.space("SCRATCH")


@dataclass
class LayerProgram:
    """What the firmware runs for one compute op."""
    op_index: int                 # index in the image's op table
    layer: int
    kind: str
    code: list                    # PCORE instruction words, loaded at address 0
    instrs: list                  # sw.mcore.isa instruction objects (last: CALLBACK)
    macs: int                     # useful multiply-accumulates
    passes: int
    kernel: str = ""              # kernel and its defines, for listings
    notes: list = field(default_factory=list)

    @property
    def words(self):
        w = []
        for i in self.instrs:
            w += isa.encode(i)
        return w


class DataBlob:
    """Constants the compiler arranges for the PCOREs (a kernel's shared-memory
    image: weights in the kernel's coef order, then bias/scale/offset), stored
    in the accelerator section after its header so that each reaches the
    PCOREs as one contiguous transfer.  ``base``: bus address of the first
    byte.  Every piece starts on an ``ALIGN``-byte bus address."""
    ALIGN = 16

    def __init__(self, base):
        self.base = base
        self.data = bytearray(-base % self.ALIGN)

    def add(self, values):
        """Append int16 ``values``; returns their bus address."""
        self.data += bytes(-len(self.data) % self.ALIGN)
        addr = self.base + len(self.data)
        self.data += np.asarray(values, dtype="<i2").tobytes()
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


@lru_cache(maxsize=None)
def source(name):
    """The program source ``sw/model/programs/<name>.c``."""
    return Source(PROGRAMS / f"{name}.c")


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
        if len(prog.words) > IMEM_WORDS:
            raise NoProgram(f"kernel of {len(prog.words)} words exceeds the {IMEM_WORDS}-word instruction memory")
        return prog

    @staticmethod
    def statements(prog, name):
        """f(func, process=0, **defines): the instructions of function ``func``
        of program source ``name``, with the symbols of the kernel ``prog``."""
        syms = symbols_mod.from_dict(prog.symbols())
        return lambda func, process=0, **defines: source(name).compile(func, syms, process, **defines)

    def windows(self, run, func, x_at, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, n, process):
        """The window loads of output pixels q0..q0+n-1 (row-major over WO
        columns; thread = pixel - q0): one ``func`` call per output row segment."""
        out = []
        q, qb = q0, q0 + n
        while q < qb:
            oy, oxa = divmod(q, WO)
            m = min(WO - oxa, qb - q)
            out += run(func, process, X=x_at, H=H, W=W, C=C, KH=KH, KW=KW, SW=sw, PL=pl, WO=WO,
                       Y0=oy * sh - pt, OXA=oxa, N=m, TAU=q - q0)
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
        from sw.model import layout as L
        if t is None or t.region != "CONST" or t.raw is None:
            return None
        return L.to_memory(t.raw, t.layout)

    # -- ops ------------------------------------------------------------------
    def passes(self, P, per_pass, body, prologue, setup, store):
        """Double-buffered pass schedule: the prologue and the setup of process
        space 0, then for each pass its loads and EXE (the setup of process
        space 1 right after the first EXE, so it overlaps that kernel), then
        the store of the pass before."""
        n_pass = -(-P // per_pass)
        instrs = prologue() + setup(0)
        for i in range(n_pass):
            q0, n = i * per_pass, min(per_pass, P - i * per_pass)
            instrs += body(q0, n, i % 2)
            if i == 0 and n_pass > 1:
                instrs += setup(1)
            if i:
                instrs += store((i - 1) * per_pass, per_pass, (i - 1) % 2)
        last = (n_pass - 1) * per_pass
        instrs += store(last, P - last, (n_pass - 1) % 2)
        return instrs, n_pass

    def matmul(self, op, *, P, K, CO, defines, patch_loads, w_coef, coef_values, x_bytes=0):
        """conv/lin on the convolution kernel: P pixels of K inputs, CO outputs.
        ``patch_loads(run, layer, q0, n, p, space, x)``: the loads of a pass
        reading the input from ``space`` at ``x`` (``run``: convolution.c's
        functions, ``layer``: layer.c's); ``w_coef``: the convolution.c
        function that rearranges the weights in DDR (coef_conv, coef_lin);
        ``coef_values()``: the coef image [G][K][VW] when the weights are
        constants, else None; ``x_bytes``: the input's size when staging it in
        the scratch-pad pays (0: read DDR)."""
        c = self.c
        bias = 0 if not op.bias_en else (1 if op.repl_bias else 2)
        tanh = op.act == "tanh"
        tsh = tanh_shift(self.frac) if tanh else 0
        defines = dict(defines, COUT=CO, NPIX=1, FRAC=self.frac, BIAS=bias, BN=int(op.bn_en),
                       RELU=int(op.act == "relu"), TSH=tsh)
        prog = self.kernel("convolution.pcore", "convolution", defines)
        run, layer = self.statements(prog, "convolution"), self.statements(prog, "layer")
        var = lambda n: prog.variable("convolution", n)
        v = lambda n: var(n).addr
        G = CO // c.vw
        shared = G * K * c.vw + (CO if bias == 1 else 0) + (2 * CO if op.bn_en else 0)
        private = K + CO + (CO if bias == 2 else 0)
        if shared > self.SW:
            raise NoProgram(f"weights and epilogue constants take {shared} shared words, a PCORE has {self.SW}")
        if private > self.PW:
            raise NoProgram(f"a pixel's patch takes {private} private words, a thread has {self.PW}")
        y = self.addr(op.res)
        n_pass = -(-P // self.T)
        # Shared constants go to the PCOREs the passes use only (each copy
        # costs engine cycles).  A broadcast covers a power of 2 of PCOREs
        # (PCORE dimensions are powers of 2, guide 3.4).
        npu = min(c.np, -(-min(P, self.T) // c.nt))
        npu_bcast = 1 << (npu - 1).bit_length()
        copies = npu * min(2, n_pass)

        # The shared-memory image (coef, then bias / scale / offset where the
        # kernel has them), arranged at compile time when every part is a
        # constant: one contiguous transfer per PCORE and process space.
        parts = [("coef", coef_values())]
        if bias == 1:
            parts.append(("bias", self.constant(op.bias)))
        if op.bn_en:
            bn = self.constant(op.batch)
            parts += [("scale", None if bn is None else bn[:CO]), ("offset", None if bn is None else bn[CO:2 * CO])]
        image_at = image_n = None
        if self.data is not None and all(val is not None for _, val in parts):
            lo = min(v(n) for n, _ in parts)
            assert lo == v("coef"), "the shared image starts at coef (convolution.c image_*)"
            image = np.zeros(max(v(n) + var(n).size for n, _ in parts) - lo, dtype=np.int64)
            for n, val in parts:
                image[v(n) - lo:v(n) - lo + var(n).size] = np.asarray(val).reshape(-1)
            image_at, image_n = self.data.add(image), image.size
        # Scratch-pad staging: the input (its windows overlap), then the
        # shared image when it goes to more than one PCORE / process space.
        scratch = []
        x_space, x_at = DDR, self.addr(op.b)
        if x_bytes:
            x_space, x_at, st = self.stage_input(layer, x_at, x_bytes, 0)
            scratch += st
        used = x_bytes if x_space == SCRATCH else 0
        img_space, img_at = DDR, image_at
        if image_at is not None and copies > 1:
            at = -(-used // 16) * 16
            if at + image_n * EB <= c.scratch_size:
                scratch += layer("stage", AT=at, SRC=image_at, N=image_n)
                img_space, img_at = SCRATCH, at

        def prologue():
            return (run("tanh_table", TANH=self.tanh_table) if tanh else []) + scratch

        def setup(p):
            if image_at is not None:
                func = "image_scratch" if img_space == SCRATCH else "image_ddr"
                return [i for u in range(npu) for i in run(func, p, U=u, IMG=img_at, IMAGE=image_n)]
            s = run(w_coef, p, W=self.addr(op.a), K=K, G=G, NPU=npu_bcast)
            if bias == 1:
                s += run("bias", p, B=self.addr(op.bias), CO=CO, NPU=npu_bcast)
            if op.bn_en:
                s += run("batchnorm", p, BN=self.addr(op.batch), CO=CO, NPU=npu_bcast)
            return s

        def body(q0, n, p):
            b = patch_loads(run, q0, n, p, x_space, x_at)
            if bias == 2:
                b += run("bias_pixels", p, B=self.addr(op.bias), CO=CO, Q0=q0, N=n)
            return b + run("exe", p, N=n)

        def store(q0, n, p):
            return run("store_tanh" if tanh else "store", p, Y=y, CO=CO, Q0=q0, N=n)

        instrs, n_pass = self.passes(P, self.T, body, prologue, setup, store)
        return prog, instrs, n_pass, P * K * CO, f"convolution.pcore {defines}"

    def conv(self, op):
        H, W, C = op.b.dims
        KH, KW, _, CO = op.a.dims
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        K = KH * KW * C
        G = CO // self.c.vw

        def loads(run, q0, n, p, space, x):
            func = "patch_scratch" if space == SCRATCH else "patch_ddr"
            return self.windows(run, func, x, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, n, p)

        def coef_values():
            w = self.constant(op.a)         # [KH][KW][C][CO] = [K][G][VW]
            return None if w is None else w.reshape(K, G, self.c.vw).transpose(1, 0, 2)

        return self.matmul(op, P=HO * WO, K=K, CO=CO, defines=dict(KH=KH, KW=KW, CIN=C),
                           patch_loads=loads, w_coef="coef_conv", coef_values=coef_values,
                           x_bytes=H * W * C * EB if KH * KW > 1 else 0)

    def lin(self, op):
        NO, NI = op.a.dims
        NB = op.res.dims[1]
        x = self.addr(op.b)
        G = NO // self.c.vw

        def loads(run, q0, n, p, space, at):
            return run("columns", p, X=x, NB=NB, K=NI, Q0=q0, N=n)

        def coef_values():
            w = self.constant(op.a)         # W[NO][NI] = [G][VW][NI]
            return None if w is None else w.reshape(G, self.c.vw, NI).transpose(0, 2, 1)

        return self.matmul(op, P=NB, K=NI, CO=NO, defines=dict(KH=1, KW=1, CIN=NI),
                           patch_loads=loads, w_coef="coef_lin", coef_values=coef_values)

    def maxpool(self, op):
        H, W, C = op.a.dims
        KH, KW = op.kernel
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        KK = KH * KW
        if KK * C + C > self.PW:
            raise NoProgram(f"a pixel's window takes {KK * C + C} private words, a thread has {self.PW}")
        prog = self.kernel("maxpool.pcore", "maxpool", dict(KK=KK, C=C, NPIX=1))
        run, layer = self.statements(prog, "maxpool"), self.statements(prog, "layer")
        x, y = self.addr(op.a), self.addr(op.res)
        # Overlapping windows read each input element more than once: stage the input.
        x_space, x_at, staging = (self.stage_input(layer, x, H * W * C * EB, 0) if KH > sh or KW > sw
                                  else (DDR, x, []))
        func = "window_scratch" if x_space == SCRATCH else "window_ddr"

        def body(q0, n, p):
            return (self.windows(run, func, x_at, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, n, p)
                    + run("exe", p, N=n))

        instrs, n_pass = self.passes(HO * WO, self.T, body, lambda: staging, lambda p: [],
                                     lambda q0, n, p: run("store", p, Y=y, C=C, Q0=q0, N=n))
        return prog, instrs, n_pass, 0, f"maxpool.pcore KK={KK} C={C} NPIX=1"

    def done(self, prog, layer):
        """The program's final CALLBACK, its tag the layer number."""
        return source("layer").compile("done", symbols_mod.from_dict(prog.symbols()), tag=layer)


def plan(model, config, address, tanh_table_addr=None, data=None):
    """{op-table index: LayerProgram or the reason (str) it stays in software}
    for the compute ops of ``model`` (indices of the compiler's op table,
    compiler.op_entries, where a duplex stream takes two entries).
    ``address``: Tensor -> bus byte address.  ``data``: a DataBlob the
    programs may place arranged constants in (its bytes must then be at its
    base address when they run); without one the weights are rearranged by
    the TensorEngine on the way (element by element: slower)."""
    gen = _Gen(config, address, model.frac_bits, tanh_table_addr, data)
    out = {}
    index = 0
    for op in model.ops:
        if op.kind == "stream":
            index += (op.c2h is not None) + (op.h2c is not None)
            continue
        try:
            prog, instrs, n_pass, macs, desc = getattr(gen, op.kind)(op)
            instrs += gen.done(prog, op.layer)
            out[index] = LayerProgram(op_index=index, layer=op.layer, kind=op.kind, code=list(prog.words),
                                      instrs=instrs, macs=macs, passes=n_pass, kernel=desc)
        except NoProgram as e:
            out[index] = str(e)
        index += 1
    return out


# -- reference execution (tests, ``tsoc model accel``) -------------------------

def reference_check(model, config, golden=None, arranged=True):
    """Run every layer program on the reference executor
    (verification/golden/tensor_exec.py) with the PCORE ISS for EXE_LOCKSTEP,
    each op on the golden model's values of its operands, and compare its
    result with the golden model.  Returns {layer: (program or reason, ok)}.
    ``arranged``: the programs get a DataBlob (as compiled images do); else
    they rearrange the weights from the tensors themselves."""
    from sw.model import layout as L
    from sw.pcore.iss import PcoreISS
    from verification.golden import cnn
    from verification.golden.tensor_exec import Machine

    golden = golden or cnn.run(model)
    vals = dict(golden.fixed)
    for t in model.tensors:
        if t.raw is not None and t not in vals:
            vals[t] = t.raw
    # A private DDR: every tensor at its own offset, the tanh table after them.
    offsets, pos = {}, 64
    for t in model.tensors:
        offsets[t] = pos
        pos += -(-t.nbytes // 64) * 64
    table_at = pos
    data = DataBlob(table_at + 2 * isa.SPU_LOOKUP_SIZE)
    progs = plan(model, config, lambda t: offsets[t], tanh_table_addr=table_at, data=data if arranged else None)
    ddr_bytes = data.base + len(data.bytes()) + 64
    results = {}
    compute = [op for op in model.ops if op.kind != "stream"]
    for (index, prog), op in zip(sorted(progs.items()), compute):
        if isinstance(prog, str):
            results[op.layer] = (prog, None)
            continue
        m = Machine(np=config.np, nt=config.nt, vw=config.vw, private_words=config.pcore_private_words,
                    shared_words=config.pcore_shared_words, ddr_bytes=ddr_bytes, scratch_bytes=config.scratch_size)
        iss = PcoreISS(config, prog.code)

        def kernel(mach, exe, iss=iss):
            iss.private[:] = mach.private
            iss.shared[:] = mach.shared
            iss.run(exe.func, process=exe.process)
            mach.private[:] = iss.private.astype(np.int16)
            mach.shared[:] = iss.shared.astype(np.int16)

        m.kernel = kernel
        for t in (op.a, op.b, op.bias if op.bias_en else None, op.batch if op.bn_en else None):
            if t is not None:
                m.ddr_write(offsets[t], L.to_memory(vals[t], t.layout))
        m.ddr_write(table_at, cnn.tanh_table(model.frac_bits))
        m.ddr[data.base:data.base + len(data.bytes())] = np.frombuffer(data.bytes(), dtype=np.uint8)
        m.run(prog.instrs)
        got = m.ddr_read(offsets[op.res], op.res.elements)
        want = L.to_memory(vals[op.res], op.res.layout)
        ok = m.errors == 0 and np.array_equal(got, want) and m.callbacks == [(op.layer, 0)]
        results[op.layer] = (prog, ok)
    return results
