"""Reference executor of tensor instructions: the golden model of the TensorEngine.

It runs decoded instructions (:mod:`tensorsoc.spec.tensor_isa`) on numpy memory images:

* ``ddr`` and ``scratch``: byte arrays.  An INT16 element takes 2 bytes,
  little-endian; UINT8/INT8 take 1 byte.  Addresses are byte addresses.
* ``private[process][pcore][thread][word]`` and ``shared[process][pcore][word]``:
  16-bit words, addressed by a linear word address (see :func:`side_elements`).
* ``spu``: the 4 stream programs of ``SPU_LOOKUP_SIZE`` words each.

The rules (docs/tensor_semantics.md has the full text):

1. **Address generation.** A side with levels ``0..n-1`` (0 innermost) iterates
   like nested loops, level 0 fastest.  At iteration ``(i_0..i_{n-1})`` the
   element address is ``base + sum(i_l * step_l)`` modulo 2**32: a step of 0
   repeats, a smaller outer step walks back and forth (tensor_descriptor.md).
2. **Bound check.** The dimension index of a checked level is
   ``start_l + i_l * stride_l``; the element is out of bound (OOB) when some
   checked index is ``< 0`` or ``>= bound_l``.  Unchecked levels (``+`` dims) never
   make an element OOB.
3. **Overlapped dimension.** When ``ovl_mask`` is non-zero the element is also OOB
   unless ``0 <= ovl_start + sum_{l in ovl_mask}(i_l * step_l) < ovl_limit``, the
   offset taken modulo ``2**te_ovl_bits`` as a signed value (``isa.wrap_offset``;
   48 bits by default, SoCConfig.te_ovl_bits).
4. **Physical range.** An element that passes 1-3 but addresses memory outside
   the space sets the RANGE error flag and is then treated as OOB.
5. **Reads** of OOB source elements yield the PAD value; **writes** of OOB
   destination elements are skipped.
6. **Broadcast levels** (``bcast_mask``, destination only) do not consume
   elements: each element is written to every index of those levels.
7. **Element counts** (broadcast levels excluded) must be equal on both sides
   and below ``isa.ELEMENT_COUNT_LIMIT`` (2**32), otherwise the COUNT error
   flag is set and nothing is written.
8. **Values.** The raw source bits (1 or 2 bytes in DDR/SCRATCH, one 16-bit word
   in PCORE, or the PAD field) are truncated to the source type's width and
   extended (sign for INT8/INT16, zero for UINT8).  With PROC(n) the value goes
   through stream program n.  Then it is truncated to the destination type's
   width: 1 or 2 bytes are stored in DDR/SCRATCH; in PCORE/SPU the truncated
   value is extended by the destination type to a 16-bit word.
9. **Order.** All source elements are read before any destination element is
   written; among writes to the same byte/word, the later element wins.
"""

from dataclasses import dataclass, field
from typing import Callable, List, Optional

import numpy as np

from tensorsoc.spec import tensor_isa as isa

MAX_ELEMENTS = 1 << 24
_ERR = {name: 1 << bit for name, (bit, _m) in isa.ERRORS.items()}
_BYTE_SPACES = (isa.space("DDR"), isa.space("SCRATCH"))


def vector_attribute(side, vw):
    """log2 of the Vn attribute a transfer record carries for a side
    (docs/tensor_engine.md, trace; tensor_semantics.md): 8/4/2 when level 0
    is contiguous and its count a multiple of n <= VW, else 1.  The
    TensorEngine computes it in gateware (cores/tensor_engine/engine.py,
    from level 0 as written); this is the reference executor's value."""
    lv = side.levels[0]
    if lv.step == isa.element_bytes(side.space, side.dtype):
        for cand in (8, 4, 2):
            if cand <= vw and lv.count % cand == 0:
                return cand.bit_length() - 1
    return 0


def side_elements(side, ovl_bits=isa.OVL_BITS):
    """Addresses, OOB flags and level indices of a side, in transfer order
    (``ovl_bits``: the overlap offset's width, rule 3).

    Returns ``(addr, oob, idx)``: ``addr`` and ``oob`` have shape ``(N, B)`` where
    N is the number of elements and B the number of broadcast copies (1 when
    the side has no broadcast level); ``idx[l]`` is the index of level ``l`` with
    the same shape.  OOB here covers rules 2 and 3 (not the physical range).
    """
    n = side.nlevels
    bc = [(side.bcast_mask >> l) & 1 for l in range(n)]
    order = [l for l in reversed(range(n)) if not bc[l]] + [l for l in reversed(range(n)) if bc[l]]
    shape = [side.levels[l].count for l in order]
    total = 1
    for c in shape:
        total *= c
    if total > MAX_ELEMENTS:
        raise ValueError(f"transfer of {total} elements exceeds the executor's limit {MAX_ELEMENTS}")
    it = {}
    for axis, l in enumerate(order):
        s = [1] * len(order)
        s[axis] = shape[axis]
        it[l] = np.broadcast_to(np.arange(shape[axis], dtype=np.int64).reshape(s), shape).reshape(-1)
    addr = np.full(total, side.base, dtype=np.int64)
    oob = np.zeros(total, dtype=bool)
    idx = {}
    goff = np.full(total, side.ovl_start, dtype=np.int64)
    for l in range(n):
        lv = side.levels[l]
        addr += it[l] * lv.step
        idx[l] = lv.start + it[l] * lv.stride
        if (side.check_mask >> l) & 1:
            oob |= (idx[l] < 0) | (idx[l] >= lv.bound)
        if (side.ovl_mask >> l) & 1:
            goff += it[l] * lv.step
    if side.ovl_mask:
        goff = isa.wrap_offset(goff, ovl_bits)
        oob |= (goff < 0) | (goff >= side.ovl_limit)
    addr &= 0xFFFFFFFF
    b = 1
    for l in range(n):
        if bc[l]:
            b *= side.levels[l].count
    return addr.reshape(-1, b), oob.reshape(-1, b), [idx[l].reshape(-1, b) for l in range(n)]


def convert(raw, dtype_code):
    """Truncate raw bits to the type's width and extend them (rule 8)."""
    bits = isa.dtype_bits(dtype_code)
    v = np.asarray(raw, dtype=np.int64) & ((1 << bits) - 1)
    if isa.dtype_signed(dtype_code):
        v = np.where(v >> (bits - 1), v - (1 << bits), v)
    return v


def spu_eval(table, v):
    """Stream program: uniform piecewise-linear interpolation of an int16 input.

    ``table`` holds SPU_LOOKUP_SIZE outputs ``y_k`` at inputs
    ``x_k = -32768 + k * 1024``.  With ``u = v + 32768``, ``k = u >> 10`` and
    ``f = u & 1023``: ``out = y_k + (((y_{k+1} - y_k) * f) >> 10)`` (arithmetic
    shift, i.e. floor), where ``y_64`` is taken as ``y_63`` (the last segment is
    flat).  The result always lies between ``y_k`` and ``y_{k+1}``.
    """
    t = np.asarray(table, dtype=np.int64)
    u = (np.asarray(v, dtype=np.int64) & 0xFFFF) ^ 0x8000       # v + 32768 for int16 v
    k = u >> isa.SPU_SEGMENT_SHIFT
    f = u & ((1 << isa.SPU_SEGMENT_SHIFT) - 1)
    y0 = t[k]
    y1 = t[np.minimum(k + 1, isa.SPU_LOOKUP_SIZE - 1)]
    return y0 + (((y1 - y0) * f) >> isa.SPU_SEGMENT_SHIFT)


@dataclass
class Machine:
    """Memory images plus the engine's observable state (error flags, callbacks, trace)."""
    np: int = 4
    nt: int = 8
    vw: int = 8
    private_words: int = 512
    shared_words: int = 2048
    ddr_bytes: int = 1 << 20
    scratch_bytes: int = 32 * 1024
    te_levels: int = isa.MAX_LEVELS             # the engine's loop levels per side (SoCConfig.te_levels)
    te_dst_levels: int = 0                      # ... of a destination (SoCConfig.te_dst_levels; 0: te_levels)
    te_dst_overlap: int = 1                     # a destination may have an overlap group (SoCConfig.te_dst_overlap)
    te_ovl_bits: int = isa.OVL_BITS             # the overlap offset's width (SoCConfig.te_ovl_bits, rule 3)
    pcore_processes: int = 2                    # 1: an instruction of process 1 sets DECODE (SoCConfig.pcore_processes)
    kernel: Optional[Callable] = None          # kernel(machine, exe) for EXE_LOCKSTEP
    errors: int = 0
    callbacks: List[tuple] = field(default_factory=list)
    exe_calls: List[tuple] = field(default_factory=list)
    trace: List[str] = field(default_factory=list)
    log_on: bool = False

    def __post_init__(self):
        self.ddr = np.zeros(self.ddr_bytes, dtype=np.uint8)
        self.scratch = np.zeros(self.scratch_bytes, dtype=np.uint8)
        self.private = np.zeros((2, self.np, self.nt, self.private_words), dtype=np.int16)
        self.shared = np.zeros((2, self.np, self.shared_words), dtype=np.int16)
        self.spu = np.zeros(isa.SPU_PROGRAMS * isa.SPU_LOOKUP_SIZE, dtype=np.int16)

    @classmethod
    def for_soc(cls, config, **kw):
        """A machine sized by a ``SoCConfig``: its geometry, PCORE memories,
        scratch-pad and the engine's loop levels (``kw``: ddr_bytes, kernel)."""
        return cls(np=config.np, nt=config.nt, vw=config.vw, private_words=config.pcore_private_words,
                   shared_words=config.pcore_shared_words, scratch_bytes=config.scratch_size,
                   te_levels=config.te_levels, te_dst_levels=config.dst_levels,
                   te_dst_overlap=config.te_dst_overlap, te_ovl_bits=config.te_ovl_bits,
                   pcore_processes=config.pcore_processes, **kw)

    @classmethod
    def from_config(cls, config, **kw):
        """A machine sized by a symbol-table config dict (np, nt, vw, private_words, shared_words)."""
        return cls(np=config["np"], nt=config["nt"], vw=config["vw"], private_words=config["private_words"],
                   shared_words=config["shared_words"], te_levels=config.get("te_levels", isa.MAX_LEVELS),
                   te_dst_levels=config.get("te_dst_levels", 0), te_dst_overlap=config.get("te_dst_overlap", 1),
                   te_ovl_bits=config.get("te_ovl_bits", isa.OVL_BITS),
                   **kw)

    # -- running ----------------------------------------------------------
    def run_words(self, words):
        """Decode and execute a word stream; a malformed instruction sets DECODE and stops."""
        pos = 0
        while pos < len(words):
            try:
                instr, pos = isa.decode_one(words, pos)
            except isa.DecodeError:
                self.errors |= _ERR["DECODE"]
                return
            if instr is not None:
                self.execute(instr)

    def run(self, instrs):
        for i in instrs:
            self.execute(i)

    def execute(self, instr):
        if self.pcore_processes == 1 and getattr(instr, "process", 0):
            self.errors |= _ERR["DECODE"]         # skipped, as the engine's decoder does
            return
        if isinstance(instr, isa.Transfer):
            self._transfer(instr)
        elif isinstance(instr, isa.Exe):
            self.exe_calls.append((instr.process, instr.addr, instr.np, instr.nt))
            if self.kernel is not None:
                self.kernel(self, instr)
        elif isinstance(instr, isa.Callback):
            self.callbacks.append((instr.tag, instr.parm))
        elif isinstance(instr, isa.Log):
            self.log_on = bool(instr.on)
        else:
            raise TypeError(f"not an instruction: {instr!r}")

    # -- memories ---------------------------------------------------------
    def _flat(self, space, process):
        if space == isa.space("DDR"):
            return self.ddr
        if space == isa.space("SCRATCH"):
            return self.scratch
        if space == isa.space("PCORE_PRIVATE"):
            return self.private[process].reshape(-1)
        if space == isa.space("PCORE_SHARED"):
            return self.shared[process].reshape(-1)
        if space == isa.space("SPU"):
            return self.spu
        raise ValueError(space)

    def _read(self, side, process, addr, ok, pad):
        mem = self._flat(side.space, process)
        esize = isa.element_bytes(side.space, side.dtype)
        a = np.where(ok, addr, 0)
        if side.space in _BYTE_SPACES:
            raw = mem[a].astype(np.int64)
            if esize == 2:
                raw |= mem[a + 1].astype(np.int64) << 8
        else:
            raw = mem[a].astype(np.int64) & 0xFFFF
        raw = np.where(ok, raw, pad)
        return convert(raw, side.dtype)

    def _in_range(self, side, process, addr):
        mem = self._flat(side.space, process)
        return addr + isa.element_bytes(side.space, side.dtype) <= mem.shape[0]

    def _transfer(self, t):
        if (t.src.space == isa.space("SPU") or t.src.nlevels > self.te_levels
                or t.dst.nlevels > (self.te_dst_levels or self.te_levels)
                or (t.dst.ovl_mask and not self.te_dst_overlap)):
            self.errors |= _ERR["DECODE"]
            return
        if t.count_error():
            self.errors |= _ERR["COUNT"]
            return
        s_addr, s_oob, _ = side_elements(t.src, self.te_ovl_bits)
        d_addr, d_oob, _ = side_elements(t.dst, self.te_ovl_bits)
        s_addr, s_oob = s_addr[:, 0], s_oob[:, 0]
        s_phys = self._in_range(t.src, t.process, s_addr)
        if np.any(~s_oob & ~s_phys):
            self.errors |= _ERR["RANGE"]
        values = self._read(t.src, t.process, s_addr, ~s_oob & s_phys, t.pad)
        if t.proc_en:
            p = t.proc * isa.SPU_LOOKUP_SIZE
            values = spu_eval(self.spu[p:p + isa.SPU_LOOKUP_SIZE], values)
        values = np.repeat(values[:, None], d_addr.shape[1], axis=1).reshape(-1)
        d_addr, d_oob = d_addr.reshape(-1), d_oob.reshape(-1)
        d_phys = self._in_range(t.dst, t.process, d_addr)
        if np.any(~d_oob & ~d_phys):
            self.errors |= _ERR["RANGE"]
        ok = ~d_oob & d_phys
        self._write(t.dst, t.process, d_addr[ok], values[ok])
        if self.log_on:
            self.trace.append(self._describe(t))

    def _write(self, side, process, addr, values):
        mem = self._flat(side.space, process)
        bits = isa.dtype_bits(side.dtype)
        v = values & ((1 << bits) - 1)
        if side.space in _BYTE_SPACES:
            if bits == 16:
                addr = np.stack([addr, addr + 1], axis=1).reshape(-1)
                v = np.stack([v & 0xFF, v >> 8], axis=1).reshape(-1)
            data = v.astype(np.uint8)
        else:
            data = convert(v, side.dtype).astype(np.int16)
        if addr.size == 0:
            return
        # later writes win: keep the last occurrence of every address
        rev = addr[::-1]
        _, first = np.unique(rev, return_index=True)
        keep = addr.size - 1 - first
        mem[addr[keep]] = data[keep]

    # -- activity trace (LOG_ON) ----------------------------------------
    _SHORT = {"DDR": "DDR", "SCRATCH": "SCRATCH", "PCORE_PRIVATE": "PCORE", "PCORE_SHARED": "PCORE", "SPU": "SPU"}

    def _attrs(self, side):
        v = 1 << vector_attribute(side, self.vw)
        x = 2 if isa.dtype_bits(side.dtype) == 16 else 1
        return f"{self._SHORT[isa.SPACE_NAMES[side.space]]} V{v} X{x}"

    def _describe(self, t):
        s = f"{self._attrs(t.dst)}  <= {self._attrs(t.src)}"
        return s + (" SCATTER" if t.scatter else "")

    # -- convenience for tests -------------------------------------------
    def ddr_write(self, addr, values, dtype="INT16"):
        code = isa.dtype(dtype)
        v = np.asarray(values, dtype=np.int64)
        if isa.dtype_bits(code) == 16:
            b = np.stack([v & 0xFF, (v >> 8) & 0xFF], axis=1).reshape(-1)
        else:
            b = v & 0xFF
        self.ddr[addr:addr + b.size] = b.astype(np.uint8)

    def ddr_read(self, addr, n, dtype="INT16"):
        code = isa.dtype(dtype)
        if isa.dtype_bits(code) == 16:
            raw = self.ddr[addr:addr + 2 * n].astype(np.int64)
            raw = raw[0::2] | (raw[1::2] << 8)
        else:
            raw = self.ddr[addr:addr + n].astype(np.int64)
        return convert(raw, code)
