"""Reference executor semantics beyond the guide's tables: descriptors, types, errors."""

import numpy as np

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.golden.tensor_exec import Machine, side_elements, spu_eval

ERR = {n: 1 << b for n, (b, _m) in isa.ERRORS.items()}


def side(space="DDR", dtype="INT16", base=0, levels=(), **kw):
    return isa.Side(space=isa.space(space), dtype=isa.dtype(dtype), base=base,
                    levels=[isa.Level(count=c, step=s, start=st, stride=sd, bound=b) for c, s, st, sd, b in levels], **kw)


def addrs(levels):
    a, _, _ = side_elements(side(levels=[(c, s, 0, 1, 0) for c, s in levels]))
    return list(a[:, 0])


def test_descriptor_document_examples():
    # tensor_dim(8, 2): one vector every 2
    assert addrs([(8, 2)]) == [0, 2, 4, 6, 8, 10, 12, 14]
    # tensor_dim(2, 8), tensor_dim(4, 2): the same walk
    assert addrs([(4, 2), (2, 8)]) == addrs([(8, 2)])


def test_step_zero_repeats():
    assert addrs([(3, 1), (2, 0)]) == [0, 1, 2, 0, 1, 2]


def test_smaller_outer_step_walks_back_and_forth():
    assert addrs([(2, 8), (4, 2)]) == [0, 8, 2, 10, 4, 12, 6, 14]


def test_negative_step_walks_backwards():
    assert addrs([(4, -1)]) == [0, 2**32 - 1, 2**32 - 2, 2**32 - 3]


def test_bound_check_uses_start_and_stride():
    s = side(levels=[(5, 1, -2, 1, 2)], check_mask=1)
    _, oob, idx = side_elements(s)
    assert list(idx[0][:, 0]) == [-2, -1, 0, 1, 2] and list(oob[:, 0]) == [True, True, False, False, True]
    s.check_mask = 0
    assert not side_elements(s)[1].any()


def test_overlap_window():
    s = side(levels=[(4, 1, 0, 1, 4), (3, 4, 0, 1, 3)], check_mask=3, ovl_mask=3, ovl_limit=10)
    _, oob, _ = side_elements(s)
    assert list(oob[:, 0]) == [False] * 10 + [True] * 2


def ddr_to_scratch(n, src_dtype="INT16", dst_dtype="INT16", **kw):
    src = side("DDR", src_dtype, 0, [(n, isa.element_bytes(0, isa.dtype(src_dtype)), 0, 1, 0)])
    dst = side("SCRATCH", dst_dtype, 0, [(n, isa.element_bytes(1, isa.dtype(dst_dtype)), 0, 1, 0)])
    return isa.Transfer(dst=dst, src=src, **kw)


def test_count_mismatch_sets_the_flag_and_writes_nothing():
    m = Machine()
    m.ddr[:8] = 7
    t = ddr_to_scratch(4)
    t.src.levels[0].count = 3
    m.execute(t)
    assert m.errors == ERR["COUNT"] and not m.scratch.any()


def test_physical_range_error_is_treated_as_out_of_bound():
    m = Machine(ddr_bytes=16)
    m.ddr[:] = np.arange(16)
    t = ddr_to_scratch(10, pad=0x55)
    m.execute(t)
    assert m.errors == ERR["RANGE"]
    got = m.scratch[:20].view(np.int16)
    assert list(got[:8]) == [0x0100, 0x0302, 0x0504, 0x0706, 0x0908, 0x0B0A, 0x0D0C, 0x0F0E]
    assert list(got[8:]) == [0x55, 0x55]


def test_int8_to_int16_sign_extends_and_int16_to_uint8_truncates():
    m = Machine()
    m.ddr[:4] = [0x80, 0x7F, 0xFF, 0x01]
    m.execute(ddr_to_scratch(4, "INT8", "INT16"))
    assert list(m.scratch[:8].view(np.int16)) == [-128, 127, -1, 1]
    m.ddr[:4] = [0x80, 0x7F, 0xFF, 0x01]
    m.execute(ddr_to_scratch(4, "UINT8", "INT16"))
    assert list(m.scratch[:8].view(np.int16)) == [128, 127, 255, 1]
    m2 = Machine()
    m2.ddr[:4] = [0x34, 0x12, 0xFF, 0xFF]
    m2.execute(ddr_to_scratch(2, "INT16", "UINT8"))
    assert list(m2.scratch[:3]) == [0x34, 0xFF, 0]


def test_pcore_word_conversions():
    m = Machine()
    m.private[1, 0, 0, :3] = [0x1280, -1, 0x7F]
    src = side("PCORE_PRIVATE", "INT8", 0, [(3, 1, 0, 1, 0)])
    dst = side("PCORE_SHARED", "UINT8", 5, [(3, 1, 0, 1, 0)])
    m.execute(isa.Transfer(dst=dst, src=src, process=1))
    assert list(m.shared[1, 0, 5:8]) == [0x80, 0xFF, 0x7F] and not m.shared[0].any()


def test_later_writes_win_and_reads_precede_writes():
    m = Machine()
    m.ddr[:4] = [1, 2, 3, 4]
    src = side("DDR", "UINT8", 0, [(4, 1, 0, 1, 0)])
    dst = side("DDR", "UINT8", 1, [(2, 0, 0, 1, 0), (2, 1, 0, 1, 0)])    # writes 1,1,2,2 <- 1,2,3,4
    m.execute(isa.Transfer(dst=dst, src=src))
    assert list(m.ddr[:4]) == [1, 2, 4, 4]


def test_broadcast_levels_copy_each_element():
    m = Machine(np=4)
    m.ddr[:4] = [10, 0, 20, 0]
    src = side("DDR", "INT16", 0, [(2, 2, 0, 1, 0)])
    dst = side("PCORE_SHARED", "INT16", 3, [(4, 2048, 0, 1, 4), (2, 1, 0, 1, 0)], bcast_mask=1, check_mask=1)
    m.execute(isa.Transfer(dst=dst, src=src))
    assert m.errors == 0
    assert [list(m.shared[0, p, 3:5]) for p in range(4)] == [[10, 20]] * 4


def test_spu_source_is_a_decode_error():
    m = Machine()
    m.execute(isa.Transfer(dst=side("DDR", levels=[(1, 2, 0, 1, 0)]), src=side("SPU", levels=[(1, 1, 0, 1, 0)])))
    assert m.errors == ERR["DECODE"]


def test_overlapped_destination_is_a_decode_error_without_te_dst_overlap():
    """te_dst_overlap=0 (SoCConfig): a destination with an overlap group sets
    DECODE and writes nothing; the same transfer runs with the default, and
    an overlapped source runs either way."""
    src = side("DDR", "INT8", 0, [(8, 1, 0, 1, 0)])
    dst = side("SCRATCH", "INT8", 0, [(4, 1, 0, 1, 4), (2, 4, 0, 1, 2)], ovl_mask=3, ovl_limit=6)
    for overlap, errors in ((0, ERR["DECODE"]), (1, 0)):
        m = Machine(te_dst_overlap=overlap)
        m.ddr[:8] = np.arange(1, 9)
        m.execute(isa.Transfer(dst=dst, src=src))
        assert m.errors == errors
        assert list(m.scratch[:8]) == ([0] * 8 if errors else [1, 2, 3, 4, 5, 6, 0, 0])
    m = Machine(te_dst_overlap=0)
    m.execute(isa.Transfer(dst=side("SCRATCH", "INT8", 0, [(8, 1, 0, 1, 0)]),
                           src=side("DDR", "INT8", 0, [(4, 1, 0, 1, 4), (2, 4, 0, 1, 2)], ovl_mask=3, ovl_limit=6)))
    assert m.errors == 0


def test_overlap_offsets_wrap_at_te_ovl_bits():
    """te_ovl_bits (SoCConfig): the overlap offset is kept modulo
    2**te_ovl_bits as a signed value (isa.wrap_offset), as the engine keeps
    it: at 16 bits an offset past 2**15 - 1 wraps negative (PAD), a start
    beyond the width is taken modulo it, and a limit of 2**15 or more lets
    every non-negative offset through; at the default 48 nothing wraps."""
    assert [isa.wrap_offset(v, 16) for v in (32767, 32768, -32769, 65536 + 5)] == [32767, -32768, 32767, 5]
    dst = side("SCRATCH", "INT8", 0, [(4, 1, 0, 1, 0)])

    def run(bits, start, limit):
        m = Machine(te_ovl_bits=bits)
        m.ddr[:4] = np.arange(1, 5)
        m.execute(isa.Transfer(dst=dst, pad=9, src=side("DDR", "INT8", 0, [(4, 1, 0, 1, 0)], ovl_mask=1,
                                                          ovl_start=start, ovl_limit=limit)))
        assert m.errors == 0
        return list(m.scratch[:4])
    assert run(16, 32766, 0xFFFFFFFF) == [1, 2, 9, 9]
    assert run(48, 32766, 0xFFFFFFFF) == [1, 2, 3, 4]
    assert run(16, 65536 - 2, 1) == [9, 9, 3, 9]
    assert run(16, 0, (1 << 16) + 1) == [1, 2, 3, 4]


def test_malformed_word_stream_sets_decode():
    m = Machine()
    m.run_words([0x0000FF01])
    assert m.errors == ERR["DECODE"]


def test_spu_interpolation_exact_values():
    table = np.arange(64) * 100            # y_k = 100 k
    v = np.array([-32768, -32768 + 512, -32768 + 1023, -32768 + 1024, 0, 31744, 32767])
    assert list(spu_eval(table, v)) == [0, 50, 99, 100, 3200, 6300, 6300]
    down = -np.arange(64) * 3               # floor on negative slopes
    assert list(spu_eval(down, np.array([-32768 + 1]))) == [-1]


def test_callbacks_exe_and_log_records():
    calls = []
    m = Machine(kernel=lambda mach, e: calls.append(e.addr))
    m.run([isa.Callback(tag=3, parm=9), isa.Exe(func=isa.build_kernel_func(5, 2, 1), process=1),
           isa.Log(on=1), ddr_to_scratch(8, scatter=1), isa.Log(on=0), ddr_to_scratch(8)])
    assert m.callbacks == [(3, 9)] and calls == [5] and m.exe_calls == [(1, 5, 2, 1)]
    assert m.trace == ["SCRATCH V8 X2  <= DDR V8 X2 SCATTER"]
