"""Accelerator programs of a model: each TENS_CONV, TENS_LIN and TENS_MAXPOOL
op as a PCORE kernel instance plus the TensorEngine instructions that feed
it, generated at model-compile time.

Every address and size of a model is known when it is compiled (the memory
plan places every tensor, the windows sit at fixed addresses of the
configuration), so the compiler emits the tensor instructions of
``docs/tensor_isa.md`` with constant operands, and the firmware
(``sw/firmware/accel.c``) only streams them into the TensorEngine's queue and
loads the kernel code into the PCORE instruction memory.

Mapping (``docs/models.md``, "Accelerated path"):

* **conv**: the ``convolution`` kernel with one output pixel per thread
  (NPIX = 1).  A *pass* covers up to NP x NT consecutive output pixels
  (row-major), thread ``p*NT + t`` taking pixel ``pass_base + p*NT + t``.
  The weights go to the shared memory of every PCORE (broadcast), the im2col
  patch of each pixel to its thread's private memory: one transfer per output
  row segment whose source walks the input with the kernel window's levels; the
  top/bottom padding is the bound check of the ``ky`` level (start ``oy*sh-pt``,
  bound H) and the left/right padding the overlapped group of the ``ox`` and
  ``kx`` levels (limit ``W*C`` elements).  Out-of-bound reads give 0.
* **maxpool**: the ``maxpool`` kernel with the same im2col, PAD -32768.
* **lin**: the ``convolution`` kernel with a 1x1 window, the input columns as
  pixels and the weight rows as output channels.
* Passes alternate between the two process spaces: while the kernel of pass
  ``i`` runs, the engine stores pass ``i-1`` and loads pass ``i+1`` (the
  engine orders a transfer after the kernel of its own process space only).
* tanh: the kernel shifts the result left (saturating) by ``tanh_shift``; the
  store goes through stream program 0, loaded from the model's tanh table.

An op that does not fit (weights beyond the shared memory, a patch beyond the
private memory, a kernel beyond the instruction memory) gets no program and
runs on the firmware's software path; ``plan()`` says why.
"""

from dataclasses import dataclass, field
from pathlib import Path

from sw.mcore import isa
from cores.pcore import isa as pisa
from sw.pcore.asm import AsmError, assemble
from verification.golden.cnn import tanh_shift

KERNELS = Path(__file__).resolve().parent.parent / "pcore" / "kernels"
EB = 2                                   # bytes per DDR element (int16)
PAD_MAXPOOL = 0x8000                     # -32768 as the PAD field
IMEM_WORDS = 1024                        # cores/pcore/soc.py add_pcore_array default

DDR = isa.space("DDR")
PRIVATE = isa.space("PCORE_PRIVATE")
SHARED = isa.space("PCORE_SHARED")
SPU = isa.space("SPU")
INT16 = isa.dtype("INT16")


def _lv(count, step, start=0, bound=0):
    return isa.Level(count=count, step=step, start=start, stride=1, bound=bound)


def _side(space, base, levels, **kw):
    """``levels`` innermost first."""
    return isa.Side(space=space, dtype=INT16, base=base & 0xFFFFFFFF, levels=list(levels), **kw)


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


class NoProgram(Exception):
    """The op stays on the software path (the message says why)."""


class _Gen:
    def __init__(self, config, address, frac, tanh_table):
        self.c = config
        self.addr = address                  # Tensor -> bus byte address
        self.frac = frac                     # the model's fractional bits
        self.tanh_table = tanh_table         # bus address of the SPU tanh table (or None)
        self.T = config.np * config.nt
        self.PW = config.pcore_private_words
        self.SW = config.pcore_shared_words

    # -- pieces ---------------------------------------------------------------
    def kernel(self, source, cls, defines):
        try:
            prog = assemble([KERNELS / source], self.c, defines)
        except AsmError as e:          # e.g. the variables exceed the PCORE memories
            raise NoProgram(str(e).splitlines()[0].split(": ", 2)[-1]) from None
        if len(prog.words) > IMEM_WORDS:
            raise NoProgram(f"kernel of {len(prog.words)} words exceeds the {IMEM_WORDS}-word instruction memory")
        return prog

    def shared_vector(self, var_addr, src_addr, n, npu, process):
        """shared[var_addr .. +n) of PCOREs 0..npu-1 <= DDR src (n contiguous elements)."""
        dst = _side(SHARED, var_addr, [_lv(n, 1), _lv(npu, self.SW)], bcast_mask=0b10)
        src = _side(DDR, src_addr, [_lv(n, EB)])
        return isa.Transfer(dst=dst, src=src, process=process)

    def coef(self, var_addr, w_addr, K, G, k_step, l_step, g_step, npu, process):
        """shared coef[G][K][VW] of PCOREs 0..npu-1 <= DDR weights (element steps in bytes)."""
        vw = self.c.vw
        dst = _side(SHARED, var_addr, [_lv(vw, 1), _lv(K, vw), _lv(G, K * vw), _lv(npu, self.SW)],
                    bcast_mask=0b1000)
        src = _side(DDR, w_addr, [_lv(vw, l_step), _lv(K, k_step), _lv(G, g_step)])
        return isa.Transfer(dst=dst, src=src, process=process)

    def coef_rows(self, var_addr, w_addr, K, G, npu, process):
        """shared coef[G][K][VW] of PCOREs 0..npu-1 <= DDR row-major W[G*VW][K]
        (coef[g][k][l] = W[g*VW+l][k]), reading W in memory order so the
        source side stays contiguous."""
        vw = self.c.vw
        dst = _side(SHARED, var_addr, [_lv(K, vw), _lv(vw, 1), _lv(G, K * vw), _lv(npu, self.SW)],
                    bcast_mask=0b1000)
        src = _side(DDR, w_addr, [_lv(K * vw * G, EB)])
        return isa.Transfer(dst=dst, src=src, process=process)

    def im2col(self, var_addr, x_addr, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, qa, qb, process, pad=0):
        """private var[thread][K] <= the windows of output pixels qa..qb-1 (row-major over WO columns);
        thread = pixel - q0.  One transfer per output row segment."""
        out = []
        q = qa
        while q < qb:
            oy, oxa = divmod(q, WO)
            n = min(WO - oxa, qb - q)
            tau = q - q0
            K = KH * KW * C
            dst = _side(PRIVATE, tau * self.PW + var_addr, [_lv(K, 1), _lv(n, self.PW)])
            y0, x0 = oy * sh - pt, oxa * sw - pl
            src = _side(DDR, x_addr + (y0 * W + x0) * C * EB,
                        [_lv(C, EB), _lv(KW, C * EB), _lv(KH, W * C * EB, start=y0, bound=H), _lv(n, sw * C * EB)],
                        check_mask=0b0100, ovl_mask=0b1010, ovl_start=x0 * C * EB, ovl_limit=W * C * EB)
            out.append(isa.Transfer(dst=dst, src=src, process=process, pad=pad))
            q += n
        return out

    def columns(self, var_addr, x_addr, K, q0, n, process):
        """private var[thread][K] <= the K contiguous elements of columns q0..q0+n-1."""
        dst = _side(PRIVATE, var_addr, [_lv(K, 1), _lv(n, self.PW)])
        src = _side(DDR, x_addr + q0 * K * EB, [_lv(K, EB), _lv(n, K * EB)])
        return isa.Transfer(dst=dst, src=src, process=process)

    def per_pixel_in(self, var_addr, src_addr, CO, q0, n, process):
        """private var[thread][CO] <= DDR rows q0..q0+n-1 of a [P][CO] tensor."""
        dst = _side(PRIVATE, var_addr, [_lv(CO, 1), _lv(n, self.PW)])
        src = _side(DDR, src_addr + q0 * CO * EB, [_lv(n * CO, EB)])
        return isa.Transfer(dst=dst, src=src, process=process)

    def store(self, y_addr, var_addr, CO, q0, n, process, tanh=False):
        """DDR y[q0..q0+n-1][CO] <= private var[thread][CO] (through stream program 0 for tanh)."""
        dst = _side(DDR, y_addr + q0 * CO * EB, [_lv(n * CO, EB)])
        src = _side(PRIVATE, var_addr, [_lv(CO, 1), _lv(n, self.PW)])
        return isa.Transfer(dst=dst, src=src, process=process, proc_en=int(tanh), proc=0)

    def spu_load(self, table_addr):
        dst = _side(SPU, 0, [_lv(isa.SPU_LOOKUP_SIZE, 1)])
        src = _side(DDR, table_addr, [_lv(isa.SPU_LOOKUP_SIZE, EB)])
        return isa.Transfer(dst=dst, src=src)

    def exe(self, entry, n, process):
        np_ = min(self.c.np, -(-n // self.c.nt))
        nt = self.c.nt if np_ > 1 else n
        return isa.Exe(func=pisa.function_word(entry, np_, nt), process=process)

    # -- ops ------------------------------------------------------------------
    def passes(self, P, per_pass, body, setup, store):
        """Double-buffered pass schedule: setup per process space used, then
        for each pass its loads and EXE, then the store of the pass before."""
        n_pass = -(-P // per_pass)
        instrs = []
        for p in range(min(2, n_pass)):
            instrs += setup(p)
        for i in range(n_pass):
            q0, n = i * per_pass, min(per_pass, P - i * per_pass)
            instrs += body(q0, n, i % 2)
            if i:
                instrs += store((i - 1) * per_pass, per_pass, (i - 1) % 2)
        last = (n_pass - 1) * per_pass
        instrs += store(last, P - last, (n_pass - 1) % 2)
        return instrs, n_pass

    def matmul(self, op, *, P, K, CO, defines, patch_loads, w_coef):
        """conv/lin on the convolution kernel: P pixels of K inputs, CO outputs."""
        c = self.c
        bias = 0 if not op.bias_en else (1 if op.repl_bias else 2)
        tanh = op.act == "tanh"
        tsh = tanh_shift(self.frac) if tanh else 0
        defines = dict(defines, COUT=CO, NPIX=1, FRAC=self.frac, BIAS=bias, BN=int(op.bn_en),
                       RELU=int(op.act == "relu"), TSH=tsh)
        prog = self.kernel("convolution.pcore", "convolution", defines)
        v = lambda n: prog.variable("convolution", n).addr
        G = CO // c.vw
        shared = G * K * c.vw + (CO if bias == 1 else 0) + (2 * CO if op.bn_en else 0)
        private = K + CO + (CO if bias == 2 else 0)
        if shared > self.SW:
            raise NoProgram(f"weights and epilogue constants take {shared} shared words, a PCORE has {self.SW}")
        if private > self.PW:
            raise NoProgram(f"a pixel's patch takes {private} private words, a thread has {self.PW}")
        entry = prog.function("convolution", "exe")
        y = self.addr(op.res)
        # Shared constants go to the PCOREs the passes use only (each copy
        # costs engine cycles).
        npu = min(c.np, -(-min(P, self.T) // c.nt))

        def setup(p):
            s = [w_coef(v("coef"), npu, p)]
            if bias == 1:
                s.append(self.shared_vector(v("bias"), self.addr(op.bias), CO, npu, p))
            if op.bn_en:
                s.append(self.shared_vector(v("scale"), self.addr(op.batch), CO, npu, p))
                s.append(self.shared_vector(v("offset"), self.addr(op.batch) + CO * EB, CO, npu, p))
            return s

        def body(q0, n, p):
            b = patch_loads(v("patch"), q0, n, p)
            if bias == 2:
                b.append(self.per_pixel_in(v("bias"), self.addr(op.bias), CO, q0, n, p))
            return b + [self.exe(entry, n, p)]

        def store(q0, n, p):
            return [self.store(y, v("out"), CO, q0, n, p, tanh=tanh)]

        instrs, n_pass = self.passes(P, self.T, body, setup, store)
        if tanh:
            instrs.insert(0, self.spu_load(self.tanh_table))
        return prog, instrs, n_pass, P * K * CO, f"convolution.pcore {defines}"

    def conv(self, op):
        H, W, C = op.b.dims
        KH, KW, _, CO = op.a.dims
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        K = KH * KW * C
        x = self.addr(op.b)
        loads = lambda var, q0, n, p: self.im2col(var, x, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, q0, q0 + n, p)
        coef = lambda var, npu, p: self.coef(var, self.addr(op.a), K, CO // self.c.vw, CO * EB, EB, self.c.vw * EB,
                                             npu, p)
        return self.matmul(op, P=HO * WO, K=K, CO=CO, defines=dict(KH=KH, KW=KW, CIN=C),
                           patch_loads=loads, w_coef=coef)

    def lin(self, op):
        NO, NI = op.a.dims
        NB = op.res.dims[1]
        x = self.addr(op.b)
        loads = lambda var, q0, n, p: [self.columns(var, x, NI, q0, n, p)]
        coef = lambda var, npu, p: self.coef_rows(var, self.addr(op.a), NI, NO // self.c.vw, npu, p)
        return self.matmul(op, P=NB, K=NI, CO=NO, defines=dict(KH=1, KW=1, CIN=NI),
                           patch_loads=loads, w_coef=coef)

    def maxpool(self, op):
        H, W, C = op.a.dims
        KH, KW = op.kernel
        HO, WO = op.res.dims[0], op.res.dims[1]
        (sh, sw), (pt, _pb, pl, _pr) = op.stride, op.pad
        KK = KH * KW
        if KK * C + C > self.PW:
            raise NoProgram(f"a pixel's window takes {KK * C + C} private words, a thread has {self.PW}")
        prog = self.kernel("maxpool.pcore", "maxpool", dict(KK=KK, C=C, NPIX=1))
        v = lambda n: prog.variable("maxpool", n).addr
        entry = prog.function("maxpool", "exe")
        x, y = self.addr(op.a), self.addr(op.res)

        def body(q0, n, p):
            return self.im2col(v("win"), x, H, W, C, KH, KW, sh, sw, pt, pl, WO, q0, q0, q0 + n, p,
                               pad=PAD_MAXPOOL) + [self.exe(entry, n, p)]

        instrs, n_pass = self.passes(HO * WO, self.T, body, lambda p: [],
                                     lambda q0, n, p: [self.store(y, v("out"), C, q0, n, p)])
        return prog, instrs, n_pass, 0, f"maxpool.pcore KK={KK} C={C} NPIX=1"


def plan(model, config, address, tanh_table_addr=None):
    """{op-table index: LayerProgram or the reason (str) it stays in software}
    for the compute ops of ``model`` (indices of the compiler's op table,
    compiler.op_entries, where a duplex stream takes two entries).
    ``address``: Tensor -> bus byte address."""
    gen = _Gen(config, address, model.frac_bits, tanh_table_addr)
    out = {}
    index = 0
    for op in model.ops:
        if op.kind == "stream":
            index += (op.c2h is not None) + (op.h2c is not None)
            continue
        try:
            prog, instrs, n_pass, macs, desc = getattr(gen, op.kind)(op)
            instrs.append(isa.Callback(tag=op.layer, parm=0))
            out[index] = LayerProgram(op_index=index, layer=op.layer, kind=op.kind, code=list(prog.words),
                                      instrs=instrs, macs=macs, passes=n_pass, kernel=desc)
        except NoProgram as e:
            out[index] = str(e)
        index += 1
    return out


# -- reference execution (tests, ``tsoc model accel``) -------------------------

def reference_check(model, config, golden=None):
    """Run every layer program on the reference executor
    (verification/golden/tensor_exec.py) with the PCORE ISS for EXE_LOCKSTEP,
    each op on the golden model's values of its operands, and compare its
    result with the golden model.  Returns {layer: (program or reason, ok)}."""
    import numpy as np
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
    ddr_bytes = pos + 4096
    progs = plan(model, config, lambda t: offsets[t], tanh_table_addr=table_at)
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
        m.run(prog.instrs)
        got = m.ddr_read(offsets[op.res], op.res.elements)
        want = L.to_memory(vals[op.res], op.res.layout)
        ok = m.errors == 0 and np.array_equal(got, want) and m.callbacks == [(op.layer, 0)]
        results[op.layer] = (prog, ok)
    return results
