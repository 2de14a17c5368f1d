"""The Device API against the behavioural device model: every command, every
status bit, every error path, chunking edge cases; in SPI and QPI."""

import asyncio

import pytest

from tensorsoc.sw.host.device import Device, DeviceError, DeviceTimeout, ProtocolUsageError, SyncDevice
from tensorsoc.spec.host_protocol import (BUSY_MASK, CHUNK_SIZE, DEVICE_ID, DUMMY_CLOCKS, HW_TYPE_TENSORSOC, Cmd,
                              ErrorCause, Msg, Status, Window, decode_rerror)
from tensorsoc.verification.host.device_model import DeviceModel, ModelInfo, ModelTransport, ReferenceFirmware


@pytest.fixture(params=[False, True], ids=["spi", "qpi"])
def qpi(request):
    return request.param


def make(qpi=False, window_sizes=None, sensor=None, chunk_delay=0, timeout=1.0, **fw):
    model = DeviceModel(ReferenceFirmware(**fw), qpi=qpi, window_sizes=window_sizes, sensor=sensor,
                        chunk_delay=chunk_delay)
    transport = ModelTransport(model)
    return model, transport, SyncDevice(transport, timeout=timeout)


def run(coro):
    return asyncio.run(coro)


def cmds_sent(transport):
    return [f.frame.cmd for f in transport.frames]


# -- plain reads --------------------------------------------------------------

def test_id_status_spec(qpi):
    model, t, dev = make(qpi)
    assert dev.id() == DEVICE_ID
    assert dev.status().value == 0 and int(dev.status()) == 0 and str(dev.status()) == "0x00000000 [idle]"
    spec = dev.spec()
    assert spec["hw_type"] == HW_TYPE_TENSORSOC and spec["tiles"] == 1 and spec["input_bytes"] == 0
    assert dev.error_cause() == ErrorCause.NONE
    assert all(o.error is None for o in model.outcomes)


def test_async_api_awaits_in_an_event_loop(qpi):
    model = DeviceModel(qpi=qpi)
    dev = Device(ModelTransport(model))

    async def flow():
        assert await dev.id() == DEVICE_ID
        await dev.write_model(bytes(64))
        return await dev.spec()
    assert run(flow())["output_bytes"] == 8


# -- the full usage sequences -----------------------------------------------------

def test_model_tensor_inference_read(qpi):
    model, t, dev = make(qpi, input_bytes=16, output_bytes=12, layers=4)
    image = bytes((3 * i + 1) & 0xFF for i in range(600))
    dev.write_model(image)
    assert bytes(model.windows[Window.MODEL][:600]) == image
    assert model.messages == [(Msg.MODEL_DONE, 600)]
    assert dev.spec()["input_bytes"] == 16 and dev.spec()["output_bytes"] == 12
    tensor = bytes(range(100, 116))
    dev.write_tensor(tensor)
    assert bytes(model.windows[Window.TENSOR][:16]) == tensor
    dev.infer()
    expected = bytes((tensor[i] + image[i]) & 0xFF for i in range(12))
    assert dev.read_tensor(12) == expected
    assert dev.read_tensor() == expected          # length from RSpec
    assert dev.timings(4) == [10, 20, 30, 40]
    assert all(o.error is None for o in model.outcomes)


def test_acquire_then_read_frame_and_infer(qpi):
    frame = bytes(range(16))
    model, t, dev = make(qpi, sensor=lambda: frame, input_bytes=16, output_bytes=4)
    dev.acquire()
    assert dev.read_frame(16) == frame
    dev.write_model(bytes([1]) * 8)
    dev.acquire()
    dev.infer()
    assert dev.read_tensor(4) == bytes((frame[i] + 1) & 0xFF for i in range(4))


def test_server_upgrade():
    model, t, dev = make()
    dev.write_server(bytes(range(256)) * 2)
    assert model.firmware.servers_started == 1
    # the datasheet's 512-byte example: 256, 256, then an empty chunk
    writes = [f.frame for f in t.frames if f.frame.cmd == Cmd.WSERVER]
    assert [len(f.write) for f in writes] == [256, 256, 0]


# -- chunking -----------------------------------------------------------------------

@pytest.mark.parametrize("length,chunks", [(0, [0]), (4, [4]), (252, [252]), (256, [256, 0]),
                                           (512, [256, 256, 0]), (600, [256, 256, 88])])
def test_chunking(qpi, length, chunks):
    model, t, dev = make(qpi, load_model=lambda image: ModelInfo(4, 4))
    image = bytes((i * 13 + 5) & 0xFF for i in range(length))
    dev.write_model(image)
    writes = [f for f in t.frames if f.frame.cmd == Cmd.WMODEL]
    assert [len(f.frame.write) for f in writes] == chunks
    assert bytes(model.windows[Window.MODEL][:length]) == image
    assert model.messages == [(Msg.MODEL_DONE, length)]
    # after every chunk the host polls until bit 0 is clear before the next one
    sent = cmds_sent(t)
    for a, b in zip([i for i, c in enumerate(sent) if c == Cmd.WMODEL], [i for i, c in enumerate(sent) if c == Cmd.WMODEL][1:]):
        assert Cmd.RERROR in sent[a + 1:b]
    assert sent[-1] in (Cmd.RERROR, Cmd.RSTATUS)


def test_polls_until_busy_clears():
    model, t, dev = make(delay=5)
    dev.write_model(bytes(8))
    polls = [f for f in t.frames if f.frame.cmd == Cmd.RERROR]
    busy = [decode_rerror(int.from_bytes(f.data, "little"))[0] & BUSY_MASK for f in polls]
    assert busy == [1] * 5 + [0]


def test_intermediate_chunk_busy_cleared_by_hardware():
    model, t, dev = make(chunk_delay=2)
    dev.write_model(bytes(300))
    polls = [decode_rerror(int.from_bytes(f.data, "little"))[0] for f in t.frames if f.frame.cmd == Cmd.RERROR]
    assert polls[:3] == [1 << Status.BUSY_WRITE] * 2 + [0]


# -- status bits ---------------------------------------------------------------------

def test_each_busy_bit_and_the_error_bit():
    model, t, dev = make(delay=3, sensor=lambda: bytes(16))
    run(t.transaction(Cmd.WTENSOR, bytes(16)))
    assert dev.status().value == 1 << Status.BUSY_WRITE
    model.run_pending()
    assert dev.status().value == 1 << Status.ERROR          # NO_MODEL: no model loaded yet
    assert dev.status().value == 0                          # cleared by reading
    dev.write_model(bytes(16))
    run(t.transaction(Cmd.INFERENCE))
    assert dev.status().value == 1 << Status.WAIT_INFERENCE
    model.run_pending()
    run(t.transaction(Cmd.ACQUIRE))
    assert dev.status().value == 1 << Status.WAIT_ACQUIRE
    model.run_pending()
    model.run_pending()
    assert dev.status().value == 0


def test_rstatus_clears_error_and_cause_but_rerror_does_not():
    model, t, dev = make()
    run(t.transaction(0x42))
    assert dev.error_cause() == ErrorCause.UNKNOWN_COMMAND
    assert dev.error_cause() == ErrorCause.UNKNOWN_COMMAND
    assert dev.status().error
    assert dev.error_cause() == ErrorCause.NONE and not dev.status().error


def test_first_error_is_kept():
    model, t, dev = make()
    run(t.transaction(0x42))
    run(t.raw(Cmd.RID, read_len=8))
    assert dev.clear_error() == ErrorCause.UNKNOWN_COMMAND


def test_wrong_rstatus_length_sets_a_new_error():
    model, t, dev = make()
    run(t.transaction(0x42))
    data = run(t.transaction(Cmd.RSTATUS, read_len=8))
    assert int.from_bytes(data[:4], "little") == 1 << Status.ERROR and data[4:] == bytes(4)
    assert dev.clear_error() == ErrorCause.BAD_LENGTH


# -- error paths -------------------------------------------------------------------

def test_unknown_command_is_ignored(qpi):
    model, t, dev = make(qpi)
    result = run(t.raw(0x42, read_len=4))
    assert result.data == b"\xff" * 4 and result.undriven == 4 * (2 if qpi else 8)   # device does not drive
    assert dev.clear_error() == ErrorCause.UNKNOWN_COMMAND
    assert dev.id() == DEVICE_ID                   # and the next command is answered


@pytest.mark.parametrize("cmd,read_len", [(Cmd.RID, 8), (Cmd.RID, 0), (Cmd.RSPEC, 12), (Cmd.RERROR, 8)])
def test_wrong_read_length(cmd, read_len):
    model, t, dev = make()
    run(t.transaction(cmd, read_len=read_len))
    assert dev.clear_error() == ErrorCause.BAD_LENGTH


def test_read_tensor_lengths():
    model, t, dev = make(output_bytes=8)
    run(t.transaction(Cmd.RTENSOR, read_len=0))     # nothing available yet: 0 bytes is right
    assert dev.clear_error() == ErrorCause.NONE
    dev.write_model(bytes(16))
    dev.write_tensor(bytes(16))
    dev.infer()
    with pytest.raises(DeviceError) as e:
        dev.read_tensor(12)
    assert e.value.cause == ErrorCause.BAD_LENGTH and e.value.cmd == Cmd.RTENSOR
    data = run(t.transaction(Cmd.RTENSOR, read_len=12))
    assert data[8:] == bytes(4)                   # bytes past the available data read as 0
    assert dev.clear_error() == ErrorCause.BAD_LENGTH
    with pytest.raises(DeviceError, match="BAD_LENGTH"):
        dev.timings(2)                             # 3 layers were timed


def test_write_length_not_multiple_of_4_sent_raw():
    model, t, dev = make()
    run(t.transaction(Cmd.WMODEL, bytes(6)))
    assert dev.clear_error() == ErrorCause.BAD_LENGTH
    assert model.messages == []


def test_extra_clocks_after_inference():
    model, t, dev = make()
    dev.write_model(bytes(16))
    run(t.raw(Cmd.INFERENCE, clocks=8 + 8))
    assert dev.clear_error() == ErrorCause.BAD_LENGTH
    run(t.raw(Cmd.INFERENCE, clocks=8 + 3))
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE
    assert dev.status().value == 0                 # no inference started


def test_wtensor_length_must_match_the_model():
    model, t, dev = make(input_bytes=16)
    dev.write_model(bytes(16))
    with pytest.raises(DeviceError) as e:
        dev.write_tensor(bytes(8))
    assert e.value.cause == ErrorCause.BAD_LENGTH and e.value.cmd == Cmd.WTENSOR


def test_command_while_busy_is_ignored():
    model, t, dev = make(delay=10)
    run(t.transaction(Cmd.WTENSOR, bytes(16)))
    run(t.transaction(Cmd.WMODEL, bytes(8)))       # refused: busy
    assert model.messages == [(Msg.TENSOR_DONE, 16)]
    assert bytes(model.windows[Window.MODEL][:8]) == bytes(8)
    status, cause = run(dev.device.peek())
    assert status.bit(Status.BUSY_WRITE) and cause == ErrorCause.BUSY
    with pytest.raises(DeviceError) as e:
        dev.id()
    assert e.value.cause == ErrorCause.BUSY


def test_inference_queues_behind_a_pending_tensor_write(qpi):
    """The datasheet's typical inference cycle has no status poll between
    WTensor and Inference: Inference is accepted while bit 0 is a WTensor's,
    runs after it, and sets bit 1; other commands are still refused."""
    model, t, dev = make(qpi, delay=3, input_bytes=16, output_bytes=8)
    dev.write_model(bytes(64))
    run(t.transaction(Cmd.WTENSOR, bytes(range(16))))
    run(t.transaction(Cmd.INFERENCE))
    status, cause = run(dev.device.peek())
    assert status.bit(Status.BUSY_WRITE) and status.bit(Status.WAIT_INFERENCE), status
    assert cause == ErrorCause.NONE and not status.error
    assert model.messages[-2:] == [(Msg.TENSOR_DONE, 16), (Msg.INFERENCE, 0)]
    run(t.raw(Cmd.RID, read_len=4))                      # not a command that may queue
    assert run(dev.device.peek())[1] == ErrorCause.BUSY
    dev.status()
    model.run_pending()
    assert not dev.status().busy and len(dev.read_tensor(8)) == 8


def test_inference_does_not_queue_behind_a_model_write(qpi):
    model, t, dev = make(qpi, delay=3, input_bytes=16)
    run(t.transaction(Cmd.WMODEL, bytes(64)))
    run(t.transaction(Cmd.INFERENCE))
    status, cause = run(dev.device.peek())
    assert status.bit(Status.BUSY_WRITE) and not status.bit(Status.WAIT_INFERENCE) and cause == ErrorCause.BUSY
    assert model.messages == [(Msg.MODEL_DONE, 64)]


def test_device_times_out_on_its_transport_clock():
    model, t, dev = make(delay=10**9, timeout=50e-6)
    with pytest.raises(DeviceTimeout) as e:
        dev.write_model(bytes(8))
    assert e.value.status.bit(Status.BUSY_WRITE)
    assert 50e-6 <= e.value.waited_s < 60e-6


def test_broken_chunk_sequence():
    model, t, dev = make()
    run(t.transaction(Cmd.WMODEL, bytes([1]) * CHUNK_SIZE))
    dev.status()
    assert dev.id() == DEVICE_ID and dev.spec()["tiles"] == 1     # allowed inside a sequence
    run(t.transaction(Cmd.WTENSOR, bytes(16)))                    # not allowed: breaks it
    assert dev.clear_error() == ErrorCause.BROKEN_SEQUENCE
    assert model.messages == []
    run(t.transaction(Cmd.WMODEL, bytes([2]) * 8))                # a new sequence, at offset 0
    model.run_pending()
    assert model.messages == [(Msg.MODEL_DONE, 8)]
    assert bytes(model.windows[Window.MODEL][:8]) == bytes([2]) * 8


def test_switching_chunked_commands_breaks_the_sequence():
    model, t, dev = make()
    run(t.transaction(Cmd.WMODEL, bytes(CHUNK_SIZE)))
    run(t.transaction(Cmd.WSERVER, bytes(8)))
    assert dev.clear_error() == ErrorCause.BROKEN_SEQUENCE


def test_chunk_too_long():
    model, t, dev = make()
    run(t.transaction(Cmd.WMODEL, bytes([7]) * 300))
    assert dev.clear_error() == ErrorCause.CHUNK_TOO_LONG
    assert model.sequence is None and model.messages == []
    assert bytes(model.windows[Window.MODEL][256:300]) == bytes(44)


def test_oversize_model_never_writes_past_the_window(qpi):
    sizes = {Window.MODEL: 1024, Window.TENSOR: 64, Window.SERVER: 512}
    model, t, dev = make(qpi, window_sizes=sizes)
    with pytest.raises(DeviceError) as e:
        dev.write_model(bytes([0xAB]) * 1100)
    assert e.value.cause == ErrorCause.WINDOW_OVERFLOW and e.value.cmd == Cmd.WMODEL
    assert "chunk 5 of 5" in str(e.value)
    assert {w: len(b) for w, b in model.windows.items()} == sizes
    assert bytes(model.windows[Window.MODEL]) == bytes([0xAB]) * 1024
    assert model.windows[Window.TENSOR] == bytes(64) and model.windows[Window.SERVER] == bytes(512)
    with pytest.raises(DeviceError, match="WINDOW_OVERFLOW"):
        dev.write_tensor(bytes(68))
    assert bytes(model.windows[Window.TENSOR]) == bytes(64)     # words inside the window land, nothing else


def test_cs_released_mid_byte(qpi):
    model, t, dev = make(qpi)
    run(t.partial(Cmd.RSTATUS, bits=4))
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE
    run(t.raw(Cmd.WTENSOR, bytes(8), clocks=(2 if qpi else 8) * 5 + 1))
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE
    run(t.raw(Cmd.RID, read_len=4, clocks=(2 if qpi else 8) * 4 + DUMMY_CLOCKS + 1))
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE
    run(t.raw(Cmd.RID, read_len=4, clocks=0))                # no clock: nothing at all
    assert dev.status().value == 0 and model.outcomes[-2].clocks != 0


def test_partial_byte_aborts_a_sequence():
    model, t, dev = make()
    run(t.transaction(Cmd.WMODEL, bytes(CHUNK_SIZE)))
    run(t.partial(Cmd.WMODEL, bytes(8), bits=20))
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE and model.sequence is None


def test_inference_without_model_and_bad_images():
    model, t, dev = make(load_model=lambda image: None if image[:4] == b"BAD!" else ModelInfo(4, 4),
                         accept_server=lambda image: image[:4] == b"SRV0")
    with pytest.raises(DeviceError) as e:
        dev.infer()
    assert e.value.cause == ErrorCause.NO_MODEL and e.value.cmd == Cmd.INFERENCE
    with pytest.raises(DeviceError, match="BAD_MODEL"):
        dev.write_model(b"BAD!" + bytes(12))
    with pytest.raises(DeviceError, match="BAD_SERVER"):
        dev.write_server(b"XXXX")
    dev.write_server(b"SRV0" + bytes(300))
    assert dev.status().value == 0


def test_sensor_failure():
    model, t, dev = make(sensor=lambda: None)
    with pytest.raises(DeviceError) as e:
        dev.acquire()
    assert e.value.cause == ErrorCause.SENSOR and e.value.cmd == Cmd.ACQUIRE


def test_aliases_are_accepted():
    model, t, dev = make(input_bytes=4, output_bytes=4)
    run(t.transaction(0x80, bytes(8)))
    model.run_pending()
    run(t.transaction(0x90, bytes(4)))
    model.run_pending()
    run(t.transaction(0x81, bytes(8)))
    model.run_pending()
    assert dev.clear_error() == ErrorCause.NONE
    assert model.messages == [(Msg.MODEL_DONE, 8), (Msg.TENSOR_DONE, 4), (Msg.SERVER_DONE, 8)]


# -- usage errors: nothing is sent ------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda d: d.write_model(bytes(6)), lambda d: d.write_server(bytes(1)), lambda d: d.write_tensor(bytes(3)),
    lambda d: d.read_tensor(6), lambda d: d.read_frame(-4), lambda d: d.timings(-1),
    lambda d: d.write_model("not bytes")])
def test_usage_errors_send_nothing(call):
    model, t, dev = make()
    with pytest.raises(ProtocolUsageError):
        call(dev)
    assert t.stats.transactions == 0


def test_stats_and_virtual_time(qpi):
    model, t, dev = make(qpi)
    dev.id()
    assert t.stats.transactions == 2 and t.stats.bytes_read == 8
    cpb = 2 if qpi else 8
    assert t.stats.clocks == 2 * (cpb + DUMMY_CLOCKS + 4 * cpb)
    assert t.now() == pytest.approx(t.stats.busy_s)
    assert t.stats.throughput() > 0
