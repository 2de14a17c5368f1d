"""The tensor-instruction format: encode/decode round trips and the generated artefacts."""

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorsoc.cli import main as tsoc
from tensorsoc.spec import tensor_isa as isa

ROOT = pathlib.Path(__file__).resolve().parents[1]

u32 = st.integers(0, 2**32 - 1)
s32 = st.integers(-2**31, 2**31 - 1)
levels = st.builds(isa.Level, count=u32, step=s32, start=s32, stride=s32, bound=u32)


@st.composite
def sides(draw):
    n = draw(st.integers(1, isa.MAX_LEVELS))
    m = (1 << n) - 1
    return isa.Side(space=draw(st.sampled_from(sorted(isa.SPACE_NAMES))), dtype=draw(st.sampled_from(sorted(isa.DTYPE_NAMES))),
                    base=draw(u32), check_mask=draw(st.integers(0, m)), ovl_mask=draw(st.integers(0, m)),
                    bcast_mask=draw(st.integers(0, m)), ovl_start=draw(s32), ovl_limit=draw(u32),
                    levels=draw(st.lists(levels, min_size=n, max_size=n)))


instructions = st.one_of(
    st.builds(isa.Transfer, dst=sides(), src=sides(), process=st.integers(0, 1), scatter=st.integers(0, 1),
              scatter_n=st.integers(0, 7), proc_en=st.integers(0, 1), proc=st.integers(0, 3), pad=st.integers(0, 0xFFFF)),
    st.builds(isa.Exe, func=u32, process=st.integers(0, 1)),
    st.builds(isa.Callback, tag=u32, parm=u32, process=st.integers(0, 1)),
    st.builds(isa.Log, on=st.integers(0, 1), process=st.integers(0, 1)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(instructions, max_size=5))
def test_encode_decode_round_trip(instrs):
    words = [w for i in instrs for w in isa.encode(i)]
    assert all(0 <= w < 2**32 for w in words)
    got = isa.decode(words)
    assert got == [isa.normalize(i) for i in instrs]
    assert [w for i in got for w in isa.encode(i)] == words          # the normal form encodes the same
    assert [isa.normalize(i) for i in got] == got


def test_transfer_length_and_layout():
    """A checked level that can leave its bound keeps its 5 words; the side's
    overlap words are there only with an overlap group."""
    side = isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0x1234, check_mask=1,
                    levels=[isa.Level(count=3, step=-2, start=5, stride=-1, bound=4)])
    t = isa.Transfer(dst=side, src=side, process=1, pad=0xBEEF)
    w = isa.encode(t)
    assert len(w) == 2 + 2 * (3 + 5) == 18
    assert w[0] == (1 << 0) | (1 << 4) | (18 << 8)
    assert w[1] == 0xBEEF
    assert w[2] == isa.space("SCRATCH") | (isa.dtype("INT8") << 3) | (1 << 8)
    assert w[3] == 1 and w[4] == 0x1234 and w[5:10] == [3, 2**32 - 2, 5, 2**32 - 1, 4]
    ovl = isa.Side(space=isa.space("DDR"), base=8, ovl_mask=1, ovl_start=-3, ovl_limit=40,
                   levels=[isa.Level(count=2, step=4, start=0, stride=1, bound=0)])
    w = isa.encode(isa.Transfer(dst=side, src=ovl))
    assert len(w) == 2 + (3 + 5) + (5 + 5)
    assert w[10 + 3:10 + 5] == [2**32 - 3, 40]


def test_transfer_compact_forms():
    """A level neither checked nor overlapped is count and step only; a check
    whose indices stay inside the bound is dropped (it cannot fail)."""
    lv = isa.Level(count=4, step=2, start=1, stride=1, bound=5)           # indices 1..4 < 5
    side = isa.Side(space=isa.space("SCRATCH"), base=0, check_mask=1, levels=[lv, isa.Level(count=3, step=8)])
    w = isa.encode(isa.Transfer(dst=side, src=side))
    assert len(w) == 2 + 2 * (3 + 2 + 2)
    got, = isa.decode(w)
    assert got.dst.check_mask == 0 and got.dst.levels[0] == isa.Level(count=4, step=2)
    out = isa.Level(count=5, step=2, start=1, stride=1, bound=5)          # index 5 leaves the bound
    side = isa.Side(space=isa.space("SCRATCH"), base=0, check_mask=1, levels=[out])
    got, = isa.decode(isa.encode(isa.Transfer(dst=side, src=side)))
    assert got.dst.check_mask == 1 and got.dst.levels[0] == out


def test_kernel_function_word():
    f = isa.build_kernel_func(12, 4, 8)
    assert f == 12 | (4 << 16) | (8 << 24)
    e = isa.Exe(func=f)
    assert (e.addr, e.np, e.nt) == (12, 4, 8)


@pytest.mark.parametrize("words", [[0x0000020F], [0x00000301, 0], [0x00000501] + [0] * 4, [0x00000302, 0, 0]])
def test_decode_rejects_malformed(words):
    with pytest.raises(isa.DecodeError):
        isa.decode(words)


def test_field_values_must_fit():
    with pytest.raises(ValueError):
        isa.encode(isa.Log(on=2))


def test_committed_docs_page_is_generated():
    assert (ROOT / "docs" / "tensor_isa.md").read_text() == isa.docs_markdown()


def test_committed_runtime_header_is_generated(tmp_path):
    out = tmp_path / "ztam_isa.h"
    assert tsoc(["mcore", "header", "-o", str(out)]) == 0
    assert out.read_text() == isa.c_header() == (ROOT / "sw" / "runtime" / "ztam_isa.h").read_text()
