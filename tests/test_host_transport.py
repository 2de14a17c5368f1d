"""Frames and the bit codec (no simulator), and a property test of the
device model: whatever malformed traffic precedes it, the device answers the
next command correctly and never writes outside its windows."""

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from tensorsoc.sw.host.device import SyncDevice
from tensorsoc.spec.host_protocol import DEVICE_ID, ErrorCause, Window
from tensorsoc.sw.host.transport import BitCodec, Frame, default_dummy_clocks
from tensorsoc.verification.host.device_model import DeviceModel, ModelTransport, ReferenceFirmware


def test_codec_known_values():
    assert BitCodec().encode(b"\x01\x80") == [1, 0, 0, 0, 0, 0, 0, 0] + [0] * 7 + [1]
    assert BitCodec(msb_first=True).encode(b"\x01") == [0] * 7 + [1]
    assert BitCodec(qpi=True).encode(b"\x3c") == [0xC, 0x3]
    assert BitCodec(qpi=True, msb_first=True).encode(b"\x3c") == [0x3, 0xC]


@given(st.binary(max_size=40), st.booleans(), st.booleans())
def test_codec_round_trip(data, qpi, msb):
    codec = BitCodec(qpi, msb)
    values = codec.encode(data)
    assert len(values) == len(data) * (2 if qpi else 8)
    assert codec.decode(values) == data
    assert codec.decode(values + values[:1]) == data      # a trailing partial byte is dropped


def test_frame_layout():
    f = Frame(0x07, read_len=8, dummy_clocks=16)
    assert (f.out_clocks, f.read_start, f.nominal_clocks) == (8, 24, 88)
    q = Frame(0x06, write=bytes(4), dummy_clocks=0, qpi=True)
    assert (q.out_clocks, q.nominal_clocks, q.reads) == (10, 10, False)
    assert q.host_drives(9) and Frame(0x01, read_len=4, qpi=True).host_drives(2) is False
    assert Frame(0x02, write=b"\xaa\xbb", dummy_clocks=0, clocks=13).host_bytes() == b"\x02\xaa"
    assert Frame(0x02, dummy_clocks=0, clocks=20).host_bytes() == b"\x02\x00\x00"
    assert default_dummy_clocks(0x01, 4) == 16 and default_dummy_clocks(0x02, 0) == 0
    assert default_dummy_clocks(0x80, 0) == 0 and default_dummy_clocks(0x55, 4) == 16


junk = st.tuples(st.integers(0, 255), st.binary(max_size=300).map(bytes), st.integers(0, 8),
                 st.one_of(st.none(), st.integers(0, 3000)))


@settings(max_examples=60, deadline=None)
@given(st.lists(junk, max_size=8), st.booleans())
def test_any_traffic_then_the_device_still_answers(frames, qpi):
    sizes = {Window.MODEL: 512, Window.TENSOR: 64, Window.SERVER: 256}
    model = DeviceModel(ReferenceFirmware(delay=2), qpi=qpi, window_sizes=sizes, sensor=lambda: bytes(16))
    t = ModelTransport(model)
    for cmd, write, read_words, clocks in frames:
        asyncio.run(t.raw(cmd, write, 4 * read_words, clocks=clocks))
    assert {w: len(b) for w, b in model.windows.items()} == sizes
    model.run_pending()
    dev = SyncDevice(t)
    dev.clear_error()
    assert dev.error_cause() == ErrorCause.NONE
    if model.sequence:                 # a chunk sequence left open is ended by the host
        dev.write_model(b"")
        model.run_pending()
        dev.clear_error()
    assert dev.id() == DEVICE_ID
    assert dev.status().value == 0
