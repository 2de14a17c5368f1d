"""Constrained-random tensor instructions for the TensorEngine tests.

Every memory space (DDR, SCRATCH, PCORE private/shared in both process
spaces, SPU loads), every data type, steps of 0, negative and back-and-forth
walks, checked / unchecked ('+') levels with in- and out-of-bound indices,
overlapped-dimension limits, PAD values, broadcast destination levels,
broadcast over the PCORE dimension (the engine's one-write broadcast),
PROC(n), element-count mismatches and physical-range errors.  Constraint: a
transfer's source and destination never share an address of one memory (the
engine streams: see docs/tensor_engine.md).
"""


import numpy as np

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.golden.tensor_exec import side_elements

SP = {n: v[0] for n, v in isa.SPACES.items()}
DT = {n: v[0] for n, v in isa.DTYPES.items()}


class Geometry:
    def __init__(self, config, ddr_bytes):
        self.config = config
        self.sizes = {SP["DDR"]: ddr_bytes, SP["SCRATCH"]: config.scratch_size,
                      SP["PCORE_PRIVATE"]: config.np * config.nt * config.pcore_private_words,
                      SP["PCORE_SHARED"]: config.np * config.pcore_shared_words,
                      SP["SPU"]: isa.SPU_PROGRAMS * isa.SPU_LOOKUP_SIZE}


def _split(rng, n, parts):
    """Counts whose product is n (n a product of small factors)."""
    counts = [1] * parts
    f = 2
    m = n
    factors = []
    while m > 1:
        while m % f == 0:
            factors.append(f)
            m //= f
        f += 1
    for x in factors:
        counts[rng.randrange(parts)] *= x
    rng.shuffle(counts)
    return counts


def pcore_stride(config, space):
    """Address step from one PCORE to the next in a PCORE space."""
    return config.pcore_shared_words if space == SP["PCORE_SHARED"] else config.nt * config.pcore_private_words


def _side(rng, geo, space, dtype, counts, bcast=(), bcast_step=None):
    esize = isa.element_bytes(space, dtype)
    size = geo.sizes[space]
    levels = []
    extent = esize
    for l, c in enumerate(counts):
        r = rng.random()
        if l in bcast and bcast_step is not None:
            step = bcast_step
        elif l == 0 and r < 0.6:
            step = esize
        elif r < 0.15:
            step = 0
        elif r < 0.3:
            step = -esize * rng.randrange(1, 4)
        elif r < 0.7:
            step = extent
        else:
            step = esize * rng.randrange(1, 9)
        extent = max(extent, abs(step) * c)
        stride = rng.choice([1, 1, 1, 2, -1, 0])
        start = rng.choice([0, 0, 0, rng.randrange(-3, 4)])
        span = max(1, c * max(1, abs(stride)))
        bound = rng.choice([span, span, span + 3, max(1, span - 2), rng.randrange(1, span + 4)])
        levels.append(isa.Level(count=c, step=step, start=start, stride=stride, bound=bound))
    n = len(levels)
    check = rng.getrandbits(n) if rng.random() < 0.7 else 0
    ovl = 0
    ovl_start = ovl_limit = 0
    if rng.random() < 0.25:
        ovl = rng.getrandbits(n) or 1
        ovl_start = rng.randrange(-4, 8)
        ovl_limit = rng.randrange(1, max(2, extent + 8))
        bits = geo.config.te_ovl_bits
        if bits < 32 and rng.random() < 0.5:
            # an engine whose overlap offsets have fewer bits (SoCConfig.te_ovl_bits)
            # keeps them modulo 2**bits: offsets that cross the wrap, a start beyond
            # the width, and limits the offsets cannot reach (the clamp)
            half = 1 << (bits - 1)
            ovl_start = rng.choice([half - rng.randrange(1, extent + 2), -half - rng.randrange(0, 4),
                                    ovl_start + rng.choice([1, -1]) * (1 << bits)])
            if rng.random() < 0.3:
                ovl_limit = rng.choice([half + rng.randrange(0, 4), (1 << bits) + rng.randrange(0, 4), 0xFFFFFFFF])
    lo = sum(min(0, (lv.count - 1) * lv.step) for lv in levels)
    hi = sum(max(0, (lv.count - 1) * lv.step) for lv in levels) + esize
    if rng.random() < 0.08 or hi - lo >= size:
        base = rng.randrange(0, size + 16)                 # may leave the memory: RANGE
    else:
        base = rng.randrange(-lo, size - hi + 1)
    bmask = 0
    for l in bcast:
        bmask |= 1 << l
    return isa.Side(space=space, dtype=dtype, base=base, check_mask=check, ovl_mask=ovl, bcast_mask=bmask,
                    ovl_start=ovl_start, ovl_limit=ovl_limit, levels=levels)


def _footprint(side):
    addr, _, _ = side_elements(side)
    a = addr.reshape(-1)
    if isa.element_bytes(side.space, side.dtype) == 2:
        a = np.concatenate([a, a + 1])
    return set(int(x) for x in a)


_SPACES = [SP["DDR"], SP["SCRATCH"], SP["PCORE_PRIVATE"], SP["PCORE_SHARED"]]


def _vector_shape(rng, side):
    """Mostly make ``side`` qualify for the engine's vector path (contiguous,
    in-bound innermost level; even INT16 rows in byte spaces), sometimes miss
    one condition on purpose."""
    esize = isa.element_bytes(side.space, side.dtype)
    lv = side.levels[0]
    lv.step = esize
    r = rng.random()
    if r < 0.5:
        side.check_mask &= ~1
    elif r < 0.85:
        lv.stride, lv.start = 1, rng.randrange(0, 3)
        lv.bound = lv.start + lv.count + rng.choice([0, 0, 2, -1])    # -1: the row leaves its bound
    else:
        lv.stride = 0
    if rng.random() < 0.9:
        side.ovl_mask &= ~1
    if esize == 2 and side.space in (SP["DDR"], SP["SCRATCH"]) and rng.random() < 0.9:
        side.base &= ~1
        for l in side.levels[1:]:
            l.step &= ~1


def random_transfer(rng, geo, spu_loaded=False):
    for _ in range(100):
        vector = rng.random() < 0.35
        n = rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64] + ([96, 128, 192, 256] if vector else []))
        s_space, d_space = rng.choice(_SPACES), rng.choice(_SPACES)
        s_dt, d_dt = rng.choice(list(DT.values())), rng.choice(list(DT.values()))
        src = _side(rng, geo, s_space, s_dt, _split(rng, n, rng.randrange(1, 4)))
        d_counts = _split(rng, n, rng.randrange(1, 4))
        bcast = []
        bstep = None
        if rng.random() < 0.15:
            pos = rng.randrange(len(d_counts) + 1)
            bcast = [pos]
            if d_space in (SP["PCORE_PRIVATE"], SP["PCORE_SHARED"]) and rng.random() < 0.6:
                # over the PCORE dimension (the engine's one-write broadcast
                # when the rest is vector-shaped), at times beyond the last PCORE
                bstep = pcore_stride(geo.config, d_space)
                d_counts.insert(pos, rng.randrange(1, geo.config.np + 1 + (rng.random() < 0.1)))
            else:
                d_counts.insert(pos, rng.randrange(1, 4))
        if len(d_counts) > geo.config.dst_levels and rng.random() < 0.9:
            continue            # (SoCConfig.te_dst_levels: one in ten kept, for DECODE)
        dst = _side(rng, geo, d_space, d_dt, d_counts, bcast, bstep)
        if dst.ovl_mask and not geo.config.te_dst_overlap and rng.random() < 0.9:
            # (SoCConfig.te_dst_overlap=0: one in ten kept, for DECODE)
            dst.ovl_mask = dst.ovl_start = dst.ovl_limit = 0
        if vector:
            _vector_shape(rng, src)
            _vector_shape(rng, dst)
        if rng.random() < 0.04:                            # COUNT error
            dst.levels[0].count += 1
        if s_space == d_space and _footprint(src) & _footprint(dst):
            continue
        t = isa.Transfer(dst=dst, src=src, process=rng.randrange(2), pad=rng.choice([0, 0, 0xFF, 0x8001, rng.getrandbits(16)]),
                         scatter=int(rng.random() < 0.2))
        if spu_loaded and rng.random() < (0.1 if vector else 0.3):
            t.proc_en, t.proc = 1, rng.randrange(isa.SPU_PROGRAMS)
        return t
    raise RuntimeError("no transfer without overlap found")


def spu_load(rng, geo, program, ddr_addr):
    """SPU <= DDR(ddr_addr)[0:63] for ``program`` (the table is already in DDR)."""
    dst = isa.Side(space=SP["SPU"], dtype=DT["INT16"], base=program * isa.SPU_LOOKUP_SIZE,
                   levels=[isa.Level(count=isa.SPU_LOOKUP_SIZE, step=1, bound=isa.SPU_LOOKUP_SIZE)])
    src = isa.Side(space=SP["DDR"], dtype=DT["INT16"], base=ddr_addr,
                   levels=[isa.Level(count=isa.SPU_LOOKUP_SIZE, step=2, bound=isa.SPU_LOOKUP_SIZE)])
    return isa.Transfer(dst=dst, src=src, process=rng.randrange(2))


def random_batch(rng, geo, n, spu_loaded, cb_tag):
    """``n`` random instructions (mostly transfers) and the next callback tag."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.06:
            out.append(isa.Exe(func=isa.build_kernel_func(rng.randrange(64), rng.randrange(3), rng.randrange(3)),
                               process=rng.randrange(2)))
        elif r < 0.1:
            out.append(isa.Callback(tag=cb_tag, parm=rng.getrandbits(16)))
            cb_tag += 1
        elif r < 0.12:
            out.append(isa.Log(on=rng.randrange(2)))
        else:
            out.append(random_transfer(rng, geo, spu_loaded))
    return out, cb_tag
