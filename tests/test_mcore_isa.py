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
    assert isa.decode(words) == instrs


def test_transfer_length_and_layout():
    side = isa.Side(space=isa.space("SCRATCH"), dtype=isa.dtype("INT8"), base=0x1234,
                    levels=[isa.Level(count=3, step=-2, start=5, stride=-1, bound=9)])
    t = isa.Transfer(dst=side, src=side, process=1, pad=0xBEEF)
    w = isa.encode(t)
    assert len(w) == 2 + 2 * (5 + 5) == 22
    assert w[0] == (1 << 0) | (1 << 4) | (22 << 8)
    assert w[1] == 0xBEEF
    assert w[2] == isa.space("SCRATCH") | (isa.dtype("INT8") << 3) | (1 << 8)
    assert w[4] == 0x1234 and w[7:12] == [3, 2**32 - 2, 5, 2**32 - 1, 9]


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
