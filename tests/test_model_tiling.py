"""Tiling (sw/model/accel.py, docs/models.md "Tiling"): ops of any size run
on the TensorEngine + PCOREs, cut into tiles that fit the PCORE memories,
bit-exact with the golden model (reference executor + PCORE ISS).  Each
case forces one kind of cut: output-channel tiles, K tiles (partial sums in
the accumulator), the batch-1 linear kernel, maxpool channel tiles; with
every epilogue (bias replicated / general, batch norm, ReLU, tanh) and with
the weights rearranged by the engine instead of the compiler."""

import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.model import accel
from tensorsoc.verification.golden.accel_check import reference_check
from tensorsoc.sw.model.frontend import parse_model


def _stream(name, dims, layout, src="rand_gauss(0, 0.1)"):
    return (f"      - {{tens_trans_type: TENS_STREAM, res_name: {name}, layout: {layout}, res_dim: {list(dims)}, "
            f"h2c_data_source: \"{src}\"}}\n")


def conv_model(H=6, W=5, C=16, CO=24, K=3, stride=1, pad=1, act="NLIN_F_RELU", bias="repl", bn=False,
               weights_in_inference=False):
    HO = (H + 2 * pad - K) // stride + 1
    WO = (W + 2 * pad - K) // stride + 1
    load = _stream("w", (K, K, C, CO), "row_first", "rand_gauss(0, 0.08)")
    extra = ""
    if bias == "repl":
        load += _stream("b", (CO, 1), "col_first")
        extra += ", bias_en: True, bias_name: b"
    elif bias == "general":
        load += _stream("b", (HO, WO, CO), "col_first")
        extra += ", bias_en: True, repl_bias: False, bias_name: b"
    if bn:
        load += _stream("bn", (CO, 2), "col_first", "rand_gauss(0.5, 0.2)")
        extra += ", batch_norm_en: True, batch_name: bn"
    x = _stream("x", (H, W, C), "col_first", "rand_gauss(0, 1)")
    if weights_in_inference:            # a weight the host sends at each inference: no arranged image
        x += load
        load = ""
    seqs = ""
    if load:
        seqs += "  - name: load\n    tens_trans:\n" + load
    seqs += ("  - name: infer\n" + ("    predecessor: [load]\n" if load else "") + "    tens_trans:\n" + x
             + f"      - {{tens_trans_type: TENS_CONV, nlin_f_type: {act}, src_a_name: w, src_b_name: x, "
               f"stride: [{stride}, {stride}], padding: [{pad}, {pad}], res_name: y{extra}}}\n"
             + "      - {tens_trans_type: TENS_STREAM, src_name: y}\n")
    return "seed: 3\ntens_trans_seq:\n" + seqs


def lin_model(NI=256, NO=16, NB=1, act="NLIN_F_IDENTITY", bias=True, bn=False):
    load = _stream("w", (NO, NI), "row_first", "rand_gauss(0, 0.06)")
    extra = ""
    if bias:
        load += _stream("b", (NO, 1), "col_first")
        extra += ", bias_en: True, bias_name: b"
    if bn:
        load += _stream("bn", (NO, 2), "col_first", "rand_gauss(0.5, 0.2)")
        extra += ", batch_norm_en: True, batch_name: bn"
    return ("seed: 5\ntens_trans_seq:\n  - name: load\n    tens_trans:\n" + load
            + "  - name: infer\n    predecessor: [load]\n    tens_trans:\n"
            + _stream("x", (NI, NB), "col_first", "rand_gauss(0, 1)")
            + f"      - {{tens_trans_type: TENS_LIN, nlin_f_type: {act}, src_a_name: w, src_b_name: x, "
              f"res_name: y{extra}}}\n"
            + "      - {tens_trans_type: TENS_STREAM, src_name: y}\n")


def maxpool_model(H=6, W=6, C=32, K=3, stride=2, pad=1):
    return ("seed: 1\ntens_trans_seq:\n  - name: infer\n    tens_trans:\n"
            + _stream("x", (H, W, C), "col_first", "rand_gauss(0, 1)")
            + f"      - {{tens_trans_type: TENS_MAXPOOL, src_name: x, kern_size: [{K}, {K}], stride: [{stride}, {stride}], "
              f"padding: [{pad}, {pad}], res_name: y}}\n"
            + "      - {tens_trans_type: TENS_STREAM, src_name: y}\n")


def check(text, cfg, arranged=True, expect=()):
    model = parse_model(text, file="t.yaml", config=cfg)
    res = reference_check(model, cfg, arranged=arranged)
    assert res
    for layer, (prog, ok) in res.items():
        assert not isinstance(prog, str), f"layer {layer} stayed in software: {prog}"
        assert ok, f"layer {layer} ({prog.tiling}) differs from the golden model"
        for word in expect:
            assert word in prog.tiling, (word, prog.tiling)
    return res


SMALL = dict(pcore_private_words=256, pcore_shared_words=512)


def test_digits_linear_256_to_16_with_bias_is_accelerated():
    """The layer that used to fall back: weights + bias exceed a PCORE's shared memory."""
    res = check(lin_model(256, 16), SoCConfig(), expect=("K tiles",))
    prog = next(iter(res.values()))[0]
    assert prog.kernel.startswith("linear.pcore") and prog.macs == 256 * 16


@pytest.mark.parametrize("act", ["NLIN_F_IDENTITY", "NLIN_F_RELU", "NLIN_F_TANH"])
@pytest.mark.parametrize("bn", [False, True])
def test_batch1_linear_k_tiles(act, bn):
    check(lin_model(400, 24, act=act, bn=bn), SoCConfig(), expect=("K tiles",))


def test_batch1_linear_more_blocks_than_threads():
    cfg = SoCConfig().with_overrides(np=2, nt=4)
    check(lin_model(64, 96, act="NLIN_F_RELU"), cfg, expect=("K tiles", "2 pass(es)"))


def test_batch1_linear_falls_back_to_the_convolution_mapping():
    """32 private words cannot hold a block's weights, outputs and batch norm on the linear
    kernel: the batch-1 layer then runs on the convolution kernel's K tiles, still accelerated."""
    cfg = SoCConfig().with_overrides(pcore_private_words=32, pcore_shared_words=512)
    res = check(lin_model(64, 16, bn=True), cfg, expect=("K tiles",))
    assert next(iter(res.values()))[0].kernel.startswith("convolution.pcore")


def test_linear_columns_k_halves():
    check(lin_model(640, 16, NB=3, act="NLIN_F_RELU", bn=True), SoCConfig(), expect=("K in 2 halves",))


def test_linear_columns_k_tiled():
    check(lin_model(1200, 16, NB=3, act="NLIN_F_RELU", bn=True), SoCConfig(), expect=("K tiles",))


HALVES = dict(pcore_private_words=256, pcore_shared_words=2048)


@pytest.mark.parametrize("act", ["NLIN_F_RELU", "NLIN_F_TANH"])
@pytest.mark.parametrize("bias,bn", [("repl", True), ("general", False), ("general", True)])
def test_conv_k_halves_resident_in_the_two_spaces(act, bias, bn):
    """K = 432 does not fit a thread (256 words) but its halves do: half h stays in process
    space h's private memory while every group of VW outputs is computed (first on half 0,
    mid + finish on half 1), only the weights change between kernels."""
    cfg = SoCConfig().with_overrides(np=2, nt=4, **HALVES)
    res = check(conv_model(H=5, W=6, C=48, CO=24, act=act, bias=bias, bn=bn), cfg, expect=("K in 2 halves",))
    prog = next(iter(res.values()))[0]
    assert "4 pass(es)" in prog.tiling and "3 channel tiles of 8" in prog.tiling
    # The patches of a pass are sent once, not once per group: as many patch transfers as with
    # a single group of outputs.
    def patches(prog):
        return sum(1 for i in prog.instrs if isinstance(i, accel.isa.Transfer) and i.src.ovl_mask)

    one = next(iter(check(conv_model(H=5, W=6, C=48, CO=8, act=act, bias=bias, bn=bn), cfg).values()))[0]
    assert patches(prog) == patches(one) > 0


@pytest.mark.parametrize("act", ["NLIN_F_RELU", "NLIN_F_TANH"])
@pytest.mark.parametrize("bias,bn", [("repl", False), ("general", True), ("none", True)])
def test_conv_channel_tiles(act, bias, bn):
    cfg = SoCConfig().with_overrides(**SMALL)
    check(conv_model(C=8, CO=32, act=act, bias=bias, bn=bn), cfg, expect=("channel tiles",))


@pytest.mark.parametrize("bias,bn", [("repl", True), ("general", False)])
def test_conv_k_tiles(bias, bn):
    cfg = SoCConfig().with_overrides(**SMALL)
    check(conv_model(C=48, CO=16, bias=bias, bn=bn), cfg, expect=("K tiles",))


def test_conv_k_tiles_cut_kernel_rows():
    cfg = SoCConfig().with_overrides(pcore_private_words=24, pcore_shared_words=512)   # 25 taps > 16 words
    res = check(conv_model(H=7, W=7, C=8, CO=16, K=5, pad=2), cfg, expect=("K tiles",))
    assert "(1 kernel row(s)" in next(iter(res.values()))[0].tiling


def test_conv_stride_and_many_passes():
    cfg = SoCConfig().with_overrides(np=2, nt=4, **SMALL)
    check(conv_model(H=9, W=11, C=40, CO=16, stride=2, pad=1), cfg, expect=("K tiles",))


@pytest.mark.parametrize("model", ["conv_k", "conv_c", "lin_cols"])   # K tiles, channel tiles, K tiles
def test_tiles_with_weights_rearranged_by_the_engine(model):
    cfg = SoCConfig().with_overrides(**SMALL)
    text = {"conv_k": conv_model(C=48, CO=16, bn=True), "conv_c": conv_model(C=8, CO=32),
            "lin_cols": lin_model(640, 16, NB=2)}[model]
    check(text, cfg, arranged=False, expect=("tiles",))


def test_k_halves_with_weights_rearranged_by_the_engine():
    cfg = SoCConfig().with_overrides(**HALVES)
    check(conv_model(C=48, CO=16, bn=True), cfg, arranged=False, expect=("K in 2 halves",))


def test_weights_from_the_host_at_each_inference():
    cfg = SoCConfig().with_overrides(**SMALL)
    check(conv_model(C=48, CO=16, weights_in_inference=True), cfg, expect=("K tiles",))


def test_maxpool_channel_tiles():
    cfg = SoCConfig().with_overrides(pcore_private_words=128)
    check(maxpool_model(C=32, K=3), cfg, expect=("channel tiles",))
    with pytest.raises(accel.NoProgram, match="window row"):
        accel.tile_maxpool(SoCConfig().with_overrides(pcore_private_words=64), 3, 9, 8, 4)


@pytest.mark.parametrize("K,stride,pad", [(8, 8, 0), (6, 2, 2)])
def test_maxpool_window_row_tiles(K, stride, pad):
    """A window of VW channels beyond the private memory (an 8x8 global pool takes 520 words of
    512): tiles of kernel rows, the running maximum in a register."""
    res = check(maxpool_model(H=8, W=8, C=16, K=K, stride=stride, pad=pad),
                SoCConfig().with_overrides(pcore_private_words=512 if K == 8 else 128), expect=("K tiles",))
    assert next(iter(res.values()))[0].kernel.startswith("maxpool.pcore KK=")


def test_tiling_rule_when_nothing_fits():
    """A stated hardware rule, not a silent fallback: one kernel row of 9
    taps cannot fit 8 private words."""
    cfg = SoCConfig().with_overrides(pcore_private_words=16, pcore_shared_words=64)
    with pytest.raises(accel.NoProgram, match="kernel row"):
        accel.tile_matmul(cfg, 9, 9, 8, 8, 4, 1, False)


def test_tiling_is_the_largest_that_fits():
    cfg = SoCConfig()
    t = accel.tile_matmul(cfg, 3, 3, 64, 64, 256, 1, False)       # K = 576 > 512 private words
    assert t.k_tiled and t.c_tile == cfg.vw and t.k_tile == (3, 32)
    t = accel.tile_matmul(cfg, 3, 3, 8, 64, 256, 1, False)        # K = 72: 4096 // (72*8) = 7 -> 4 groups
    assert not t.k_tiled and t.c_tile == 32
    t = accel.tile_linear(cfg, 400, 120, True, False)              # a batch-1 lin: the cost model's K tile
    kt = t.k_tile[1]
    # full tiles of kt, then the rest: every input once, in order
    assert [k for tile in t.k_tiles for k in range(tile[2], tile[3] + 1)] == list(range(400))
    assert all(k1 - k0 + 1 == kt for _, _, k0, k1 in t.k_tiles[:-1]) and 1 <= t.k_tiles[-1][3] - t.k_tiles[-1][2] + 1 <= kt
    assert accel.linear_steps_clocks(cfg, 400, 120, kt, True, False) == min(
        accel.linear_steps_clocks(cfg, 400, 120, d, True, False) for d in range(1, 63))


def _sequences_model(nseq):
    s = ("seed: 1\ntens_trans_seq:\n  - name: load\n    tens_trans:\n"
         + _stream("w", (3, 3, 16, 32), "row_first", "rand_gauss(0, 0.05)")
         + _stream("lw", (64, 512), "row_first", "rand_gauss(0, 0.05)"))
    for i in range(nseq):
        s += (f"  - name: inf{i}\n    predecessor: [load]\n    tens_trans:\n"
              + _stream(f"x{i}", (8, 8, 16), "col_first", "rand_gauss(0, 1)")
              + f"      - {{tens_trans_type: TENS_CONV, src_a_name: w, src_b_name: x{i}, padding: [1, 1], "
                f"res_name: y{i}, dealloc: [x{i}]}}\n"
              + f"      - {{tens_trans_type: TENS_STREAM, src_name: y{i}, dealloc: [y{i}]}}\n"
              + _stream(f"v{i}", (512, 1), "col_first", "rand_gauss(0, 1)")
              + f"      - {{tens_trans_type: TENS_LIN, src_a_name: lw, src_b_name: v{i}, res_name: z{i}, dealloc: [v{i}]}}\n"
              + f"      - {{tens_trans_type: TENS_STREAM, src_name: z{i}, dealloc: [z{i}]}}\n")
    return s


def test_arranged_weights_once_whatever_the_number_of_sequences():
    """Four inference sequences reading the same weights: the accelerator section's arranged
    constants are those of one (a repeated piece is stored once); the image grows only by the
    programs of the extra ops."""
    from tensorsoc.spec import model_image as mi
    from tensorsoc.sw.model.compiler import compile_model
    cfg = SoCConfig()
    data = []
    for n in (1, 4):
        model = parse_model(_sequences_model(n), file="s.yaml", config=cfg)
        data.append(mi.decode_image(compile_model(model))["accel"]["data"])
    assert len(data[0]) == len(data[1]) and len(data[0]) >= 2 * (3 * 3 * 16 * 32 + 64 * 512)


def test_linear_k_tile_follows_the_cost_model():
    """tile_linear takes the K tile with the fewest estimated clocks: with a few output blocks (2 threads:
    accumulator chains, 2 clocks a mac) the last kernel, which nothing overlaps, is cut short -- the last
    tile takes the few inputs left over -- while each earlier kernel still hides behind the next tile's
    loads; with a thread for every block of a pass the largest tile that fits (fewest kernel calls)."""
    cfg = SoCConfig()
    kt_max = (cfg.pcore_private_words - 2 * cfg.vw) // cfg.vw
    few = accel.tile_linear(cfg, 88, 16, True, False)
    est = {d: accel.linear_steps_clocks(cfg, 88, 16, d, True, False) for d in range(1, kt_max + 1)}
    assert est[few.k_tile[1]] == min(est.values())
    assert len(few.k_tiles) == 3 and few.k_tiles[-1][3] - few.k_tiles[-1][2] + 1 < few.k_tile[1] // 4
    assert "3 K tiles of" in few.describe() and "(the last" in few.describe()
    # an unequal cut beats every equal one (the divisors of 88, what the tiling took before)
    assert est[few.k_tile[1]] < min(est[d] for d in (8, 11, 22, 44))
    assert accel.linear_k_tiles(88, 40) == [(0, 40), (40, 40), (80, 8)]
    assert accel.linear_k_tiles(64, 64) == [(0, 64)] and accel.linear_k_tiles(64, 32) == [(0, 32), (32, 32)]
    many = accel.tile_linear(cfg, 4096, 256, True, False)          # 32 blocks: every thread of the pass busy
    assert many.k_tile[1] == 62 and many.k_tiles[-1] == (0, 0, 4092, 4095)
