"""The host port end to end: the SoC's SPI/QPI slave gateware and its server
firmware, driven by the host library through the simulated pins.

Run by tests/test_host_soc.py, once in SPI and once in QPI mode
(TSOC_HOST_QPI), and on an SoC built with the MSB-first option.
"""

import json
import os
from pathlib import Path

import cocotb

from tensorsoc.spec import model_image
from tensorsoc.spec.memory_map import MEM_MAP
from tensorsoc.sw.host.device import DeviceError
from tensorsoc.spec.host_protocol import (CHUNK_SIZE, DEVICE_ID, HW_TYPE_TENSORSOC, Cmd, ErrorCause, Status)
from tensorsoc.verification.host.device_model import expected_rspec
from tensorsoc.verification.soc.host_env import boot, soc_config

MAIN_RAM_BASE = MEM_MAP["main_ram"]

QPI = os.environ.get("TSOC_HOST_QPI", "0") == "1"
MSB_FIRST = bool(soc_config().host_msb_first)   # a build option of the SoC
MODE = "QPI" if QPI else "SPI"


async def start(dut, **kw):
    return await boot(dut, qpi=QPI, msb_first=MSB_FIRST, **kw)


async def expect_error(dev, cause):
    """The error bit is set with ``cause``; RStatus clears it; the device then
    answers RID correctly."""
    status, got = await dev.peek()
    assert status.error, f"error bit not set ({status}), expected {cause.name}"
    assert got == cause, f"error cause {ErrorCause(got).name}, expected {cause.name}"
    word = await dev.status()
    assert word.error
    status, got = await dev.peek()
    assert not status.error and got == ErrorCause.NONE, "RStatus did not clear the error"
    assert await dev.id() == DEVICE_ID


STREAM_MODEL = """
tens_trans_seq:
  - name: pass
    tens_trans:
      - {{tens_trans_type: TENS_STREAM, res_name: x, layout: col_first, res_dim: [{n}, 1], h2c_data_source: lin_index}}
      - {{tens_trans_type: TENS_STREAM, src_name: x, dealloc: [x]}}
"""


def model(payload_len=None, input_bytes=64, corrupt=False):
    """A real compiled model without layers (its input streamed back out),
    its payload padded with zeros to ``payload_len`` bytes when given (the
    datasheet's examples use exact sizes)."""
    from tensorsoc.sw.model.compiler import compile_model
    from tensorsoc.sw.model.frontend import parse_model
    image = compile_model(parse_model(STREAM_MODEL.format(n=input_bytes // 2), config=soc_config()))
    h = model_image.parse_header(image)
    payload = image[model_image.HEADER_SIZE:]
    if payload_len is not None:
        assert payload_len >= len(payload), f"the stream model's payload is {len(payload)} bytes"
        payload += bytes(payload_len - len(payload))
    image = bytearray(model_image.build_image(payload, h["input_bytes"], h["output_bytes"], h["n_layers"]))
    if corrupt:
        image[-1] ^= 0x40
    return bytes(image)


def peek_ram(dut, byte_addr, nwords):
    base = (byte_addr - MAIN_RAM_BASE) // 4
    return [int(dut.main_ram[base + i].value) for i in range(nwords)]


# RAM below the host windows that the tests compare before and after: all of
# it up to this size, else its first and last RAM_CHECK_BYTES / 2 (a stray
# write lands at the start of RAM or right below the model window).  Reading
# the default 7 MiB word by word through VPI would take minutes.
RAM_CHECK_BYTES = 128 * 1024


def peek_ram_below_windows(dut):
    low = soc_config().windows(MAIN_RAM_BASE)["model"][0] - MAIN_RAM_BASE
    if low <= RAM_CHECK_BYTES:
        return peek_ram(dut, MAIN_RAM_BASE, low // 4)
    half = RAM_CHECK_BYTES // 2
    return peek_ram(dut, MAIN_RAM_BASE, half // 4) + peek_ram(dut, MAIN_RAM_BASE + low - half, half // 4)


@cocotb.test()
async def rid_and_spec(dut):
    """RID and RSpec decoded; status idle; the firmware saw the right mode."""
    dev, console, _ = await start(dut)
    assert await dev.id() == DEVICE_ID
    spec = await dev.spec()
    cfg = soc_config()
    assert spec == {"hw_type": HW_TYPE_TENSORSOC, **expected_rspec(cfg), "input_bytes": 0, "output_bytes": 0}
    assert not (await dev.status()).busy
    await console.wait_for(f"server: ready ({MODE} host port)")


@cocotb.test()
async def host_path_switch(dut):
    """One transport changes host path between frames, as the UVM env's does
    for a protocol test's server upload: pin level, the simulated master,
    pin level again.  The master's en follows, the device answers the same
    on each path, and an error raised on one path is read on the other."""
    dev, _, _ = await start(dut, path="pins", switchable=True)
    t = dev.transport
    assert t.pin_level and t.sclk is t.clk
    assert await dev.id() == DEVICE_ID
    assert int(dut.host_fast_en.value) == 0
    spec = await dev.spec()
    t.use_pins(False)
    assert t.sclk is not t.clk
    assert await dev.id() == DEVICE_ID
    assert int(dut.host_fast_en.value) == 1
    assert await dev.spec() == spec
    await t.raw(0x55)                                   # unknown command, on the master
    t.use_pins(True)
    assert t.sclk is t.clk
    await expect_error(dev, ErrorCause.UNKNOWN_COMMAND)  # read at pin level
    assert int(dut.host_fast_en.value) == 0
    assert await dev.spec() == spec


@cocotb.test()
async def protocol_errors(dut):
    """Each transport-level error sets the error bit with its cause and the
    device answers the next command correctly."""
    dev, _, _ = await start(dut)
    before = peek_ram_below_windows(dut)
    t = dev.transport
    await t.raw(0x55)                                   # unknown command
    await expect_error(dev, ErrorCause.UNKNOWN_COMMAND)
    await t.raw(0x00, read_len=4)                       # unknown, with clocks after it
    await expect_error(dev, ErrorCause.UNKNOWN_COMMAND)
    await t.raw(Cmd.RID, read_len=8)                    # too many bytes read
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    await t.raw(Cmd.RSPEC, read_len=12)                 # too few
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    await t.raw(Cmd.RID, read_len=0, dummy_clocks=8)    # CS released in the dummy clocks
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    await t.partial(Cmd.RID, bits=4)                    # CS released inside the command byte
    await expect_error(dev, ErrorCause.PARTIAL_BYTE)
    await t.partial(Cmd.WTENSOR, write=b"\x01\x02\x03\x04", bits=8 + 20)   # ... inside a data byte
    await expect_error(dev, ErrorCause.PARTIAL_BYTE)
    await t.raw(Cmd.WTENSOR, write=b"\x01\x02\x03\x04\x05\x06")           # not a multiple of 4
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    await t.raw(Cmd.INFERENCE, write=b"\0\0\0\0")        # data after an action command
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    await t.raw(Cmd.INFERENCE, clocks=0)                 # CS pulse without a clock: nothing
    status, cause = await dev.peek()
    assert int(status) == 0 and cause == ErrorCause.NONE
    assert peek_ram_below_windows(dut) == before, "RAM below the host windows changed"


@cocotb.test()
async def inference_without_model(dut):
    dev, _, _ = await start(dut)
    try:
        await dev.infer()
    except DeviceError as e:
        assert e.cause == ErrorCause.NO_MODEL, e
    else:
        raise AssertionError("inference without a model did not fail")
    assert await dev.id() == DEVICE_ID


@cocotb.test()
async def model_tensor_inference(dut):
    """WModel in chunks (aliases too), RSpec reflects the model, WTensor length
    checked against it, inference of a layer-less model, empty outputs."""
    dev, console, _ = await start(dut)
    for size in (600, 512 - model_image.HEADER_SIZE, None):   # 3 chunks; 2 full + empty; 1 short
        await dev.write_model(model(payload_len=size))
        await console.wait_for("server: model loaded")
    spec = await dev.spec()
    assert spec["input_bytes"] == 64 and spec["output_bytes"] == 64
    # The datasheet's example: a 600-byte model with code 0x80: 256 + 256 + 88,
    # "repeat 0x01 until the bottom bit is cleared" after each chunk.
    with_alias = model(payload_len=600 - model_image.HEADER_SIZE, input_bytes=32)
    assert len(with_alias) == 600
    for i, chunk in enumerate((with_alias[:256], with_alias[256:512], with_alias[512:])):
        await dev.transport.transaction(0x80, chunk)
        if i == 2:
            # The server is still checking the image (CRC): bit 0 shows busy,
            # and a command other than RStatus/RError is refused meanwhile.
            status, _ = await dev.peek()
            assert status.bit(Status.BUSY_WRITE), f"bit 0 not seen while the model is checked ({status})"
            await dev.transport.raw(Cmd.RID, read_len=4)
            status, cause = await dev.peek()
            assert cause == ErrorCause.BUSY, cause
            await dev.status()
        while (await dev.status()).bit(Status.BUSY_WRITE):
            pass
    assert (await dev.spec())["input_bytes"] == 32
    tensor = bytes(range(32))
    await dev.transport.transaction(0x90, tensor)
    await dev.wait_clear(Status.BUSY_WRITE, Cmd.WTENSOR)
    await dev.transport.raw(Cmd.WTENSOR, write=tensor + tensor)       # not the model's input size
    await expect_error(dev, ErrorCause.BAD_LENGTH)
    assert peek_ram(dut, soc_config().windows(MAIN_RAM_BASE)["tensor"][0], 8) == \
        [int.from_bytes(tensor[i:i + 4], "little") for i in range(0, 32, 4)]
    await dev.write_tensor(tensor)
    await dev.infer()
    assert await dev.read_tensor(32) == tensor          # the model streams its input back
    assert await dev.timings(0) == []
    # A corrupt image is refused by the server, which keeps no model.
    try:
        await dev.write_model(model(corrupt=True))
    except DeviceError as e:
        assert e.cause == ErrorCause.BAD_MODEL, e
    else:
        raise AssertionError("corrupt model accepted")
    await console.wait_for("model rejected: CRC mismatch")
    assert (await dev.spec())["input_bytes"] == 0


@cocotb.test()
async def chunk_sequence_errors(dut):
    dev, console, _ = await start(dut)
    t = dev.transport
    await t.raw(Cmd.WMODEL, write=bytes(CHUNK_SIZE + 4))          # chunk too long
    await expect_error(dev, ErrorCause.CHUNK_TOO_LONG)
    await t.transaction(Cmd.WMODEL, bytes(CHUNK_SIZE))             # sequence started...
    await dev.wait_clear(Status.BUSY_WRITE, Cmd.WMODEL)
    await t.raw(Cmd.WTENSOR, write=bytes(4))                       # ...broken by a tensor write
    await expect_error(dev, ErrorCause.BROKEN_SEQUENCE)
    await t.transaction(Cmd.WSERVER, bytes(CHUNK_SIZE))
    await dev.wait_clear(Status.BUSY_WRITE, Cmd.WSERVER)
    await t.raw(Cmd.WMODEL, write=bytes(4))                        # ... or by the other chunked write
    await expect_error(dev, ErrorCause.BROKEN_SEQUENCE)
    # After an aborted sequence a complete model loads from offset 0.
    await dev.write_model(model(payload_len=700))
    await console.wait_for(f"server: model loaded: {len(model(payload_len=700))} bytes")


@cocotb.test(skip=not QPI or soc_config().model_window_size > 64 * 1024)
async def oversize_model_and_window_bounds(dut):
    """A model larger than the model window: WINDOW_OVERFLOW, and nothing
    outside the windows changes (checked through the RAM itself).  QPI only,
    on a build with a model window of at most 64 KiB (spec.config.COMPACT_MEMORY:
    the default 8 MiB takes far too long to fill), at 4 bits a clock."""
    dev, _, _ = await start(dut)
    cfg = soc_config()
    windows = cfg.windows(MAIN_RAM_BASE)
    before_low = peek_ram_below_windows(dut)
    before_tensor = peek_ram(dut, windows["tensor"][0], 64)
    t = dev.transport
    chunk = bytes([0xA5]) * CHUNK_SIZE
    for i in range(cfg.model_window_size // CHUNK_SIZE):
        await t.transaction(Cmd.WMODEL, chunk)
        await dev.wait_clear(Status.BUSY_WRITE, Cmd.WMODEL)
    await t.raw(Cmd.WMODEL, write=chunk)                          # one chunk too many
    await expect_error(dev, ErrorCause.WINDOW_OVERFLOW)
    assert peek_ram(dut, windows["tensor"][0], 64) == before_tensor, "write spilled into the tensor window"
    assert peek_ram_below_windows(dut) == before_low, "RAM below the windows changed"


@cocotb.test()
async def busy_acquire_and_sensor(dut):
    """Acquire waits for the sensor: meanwhile every command but RStatus /
    RError is refused with BUSY and writes nothing; the frame then becomes the
    input tensor and can be read raw."""
    dev, _, sensor = await start(dut)
    await dev.write_model(model(input_bytes=64))
    tensor_base = soc_config().windows(MAIN_RAM_BASE)["tensor"][0]
    await dev.write_tensor(bytes(64))
    await dev.transport.transaction(Cmd.ACQUIRE)
    status, _ = await dev.peek()
    assert status.bit(Status.WAIT_ACQUIRE)
    await dev.transport.raw(Cmd.RID, read_len=4)
    await dev.transport.raw(Cmd.WTENSOR, write=bytes([0xFF]) * 64)
    status, cause = await dev.peek()
    assert status.error and cause == ErrorCause.BUSY
    assert peek_ram(dut, tensor_base, 16) == [0] * 16, "a refused write changed the tensor window"
    frame = bytes((5 * i + 1) & 0xFF for i in range(64))
    await sensor.send(frame)
    # The BUSY error raised meanwhile is still pending: clear it, then wait.
    await dev.status()
    for _ in range(50):
        status, _ = await dev.peek()
        if not status.bit(Status.WAIT_ACQUIRE):
            break
    assert not status.bit(Status.WAIT_ACQUIRE), "acquisition never finished"
    assert await dev.read_frame(64) == frame
    await dev.infer()


@cocotb.test()
async def acquire_without_sensor(dut):
    """A build without the sensor port (SoCConfig.host_sensor=0): Acquire
    answers SENSOR at once, sets no busy bit, takes nothing from the sensor
    stream and writes nothing; the device then runs an inference as
    before."""
    assert not soc_config().host_sensor, "this case is for a build with host_sensor=0"
    dev, _, _ = await start(dut)
    await dev.write_model(model(input_bytes=64))
    tensor_base = soc_config().windows(MAIN_RAM_BASE)["tensor"][0]
    await dev.write_tensor(bytes(range(64)))
    before = peek_ram(dut, tensor_base, 16)
    dut.sensor_valid.value = 1
    dut.sensor_data.value = 0xA5
    await dev.transport.transaction(Cmd.ACQUIRE)
    status, _ = await dev.peek()
    assert not status.bit(Status.WAIT_ACQUIRE), "Acquire without a sensor port set WAIT_ACQUIRE"
    assert int(dut.sensor_ready.value) == 0, "the sensor stream was taken"
    dut.sensor_valid.value = 0
    await expect_error(dev, ErrorCause.SENSOR)
    assert peek_ram(dut, tensor_base, 16) == before, "Acquire changed the tensor window"
    await dev.infer()


@cocotb.test()
async def example_models_bit_exact(dut):
    """The example models end to end through the SPI port: WModel, WTensor,
    Inference, RTensor compared bit for bit with the golden model; RTimings
    holds one time per layer.  Every layer of the examples runs on the
    accelerator: compiled with require_accel, and the server's per-layer
    console lines say so (their exact cycles agree with RTimings).  Then
    the firmware's own decision: the MLP compiled for other PCORE memory
    sizes runs every layer in software, saying why, still bit-exact."""
    from tensorsoc.sw.model.compiler import compile_model, compile_report
    from tensorsoc.sw.model.frontend import load_model
    from tensorsoc.verification.soc.model_job import device_layers, golden_io
    dev, console, _ = await start(dut)
    root = Path(__file__).resolve().parents[2]
    cfg = soc_config()
    f_mhz = cfg.sys_clk_freq / 1e6

    async def run(m, image, expected_engine):
        _, inp, expected = golden_io(m)
        await dev.write_model(image)
        await dev.write_tensor(inp)
        n = len(console.lines)
        await dev.infer(timeout=0.2)
        line = await console.wait_for("server: inference done", start=n)
        got = await dev.read_tensor(m.output_bytes)
        times = await dev.timings(m.n_layers)
        where = device_layers(console.lines[n:])
        cocotb.log.info(f"{Path(m.file).name}: {m.n_layers} layers, {m.output_bytes} output bytes, per-layer us {times}")
        assert got == expected, f"{Path(m.file).name}: output differs from the golden model"
        assert len(times) == m.n_layers and all(t > 0 for t in times), times
        assert sorted(where) == list(range(m.n_layers)), console.lines[n:]
        assert all(abs(where[k]["cycles"] / f_mhz - times[k]) <= 1 for k in where), (where, times)
        assert all(w["engine"] == expected_engine for w in where.values()), console.lines[n:]
        return line, where

    for name in os.environ.get("TSOC_HOST_MODELS", "mlp,cnn_instructions,relu_cnn3").split(","):
        m = load_model(root / "examples" / f"{name}.yaml", cfg)
        line, _ = await run(m, compile_model(m, require_accel=True), "accel")
        assert f"{m.n_layers} of {m.n_layers} layers on the accelerator" in line, line
    if cfg.accelerator:
        other = cfg.with_overrides(pcore_shared_words=cfg.pcore_shared_words // 2)
        m = load_model(root / "examples" / "mlp.yaml", other)
        # --portable keeps the weights in memory layout too: the compiler puts
        # every layer on the accelerator, the device runs them in software.
        image, report = compile_report(m, require_accel=True, portable=True)
        line, where = await run(m, image, "software")
        assert f"0 of {m.n_layers} layers on the accelerator" in line, line
        assert all(w["reason"] == "image compiled for other PCORE memory sizes" for w in where.values()), where
        # By default each weight is stored once, arranged for that
        # accelerator: the device refuses the layer, naming it, and the
        # inference fails with BAD_MODEL instead of computing from nothing.
        image, report = compile_report(m, require_accel=True)
        assert report.left_out > 0
        _, inp, _ = golden_io(m)
        await dev.write_model(image)
        await dev.write_tensor(inp)
        n = len(console.lines)
        try:
            await dev.infer(timeout=0.2)
            raise AssertionError("an image whose weights are arranged only ran on another accelerator")
        except DeviceError as e:
            assert e.cause == ErrorCause.BAD_MODEL, e
        line = await console.wait_for("cannot run in software", start=n)
        assert "layer 0 (op 1)" in line and "image compiled for other PCORE memory sizes" in line, line


@cocotb.test(skip=not soc_config().accelerator)
async def accelerator_trace_printed(dut):
    """LOG_ON/LOG_OFF around each accelerated layer (boot flag TE_TRACE): the
    firmware prints the TensorEngine's activity report on the console, one
    transfer line per transfer instruction of the layer's program, with the
    guide's attributes; the outputs stay bit-exact.  A build without a trace
    buffer (te_trace_depth=0) says so once per layer instead."""
    from tensorsoc.spec import tensor_isa as isa
    from tensorsoc.sw.model.compiler import compile_model
    from tensorsoc.sw.model.frontend import load_model
    from tensorsoc.verification.soc.host_env import SKIP_MEMTEST, TE_TRACE
    from tensorsoc.verification.soc.model_job import golden_io
    dev, console, _ = await start(dut, flags=SKIP_MEMTEST | TE_TRACE)
    import re
    # The MLP: three layers with few transfers each (every line costs UART time).
    m = load_model(Path(__file__).resolve().parents[2] / "examples" / "mlp.yaml", soc_config())
    image = compile_model(m)
    programs = model_image.decode_image(image)["accel"]["programs"]
    _, inp, expected = golden_io(m)
    await dev.write_model(image)
    await dev.write_tensor(inp)
    n = len(console.lines)
    await dev.infer(timeout=0.5)
    await console.wait_for("server: inference done", start=n)
    assert await dev.read_tensor(m.output_bytes) == expected
    lines = console.lines[n:]
    if not soc_config().te_trace_depth:
        none = [l for l in lines if "no TensorEngine activity trace in this build (te_trace_depth=0)" in l]
        assert len(none) == m.n_layers and not any("LOG_ON .. LOG_OFF" in l for l in lines), lines[:20]
        return
    starts = [i for i, l in enumerate(lines) if "TensorEngine activity (LOG_ON .. LOG_OFF)" in l]
    assert len(starts) == len(programs) == m.n_layers, lines[:20]
    assert not any("no LOG_OFF" in l for l in lines)
    for k, (a, prog) in enumerate(zip(starts, programs)):
        b = starts[k + 1] if k + 1 < len(starts) else len(lines)
        report = lines[a + 1:b]
        assert report[0].strip().startswith("XX PP SS PP SS DD"), report[:3]
        transfers = [l for l in report if " <= " in l]
        want = sum(isinstance(i, isa.Transfer) for i in isa.decode(prog["te"]))
        assert len(transfers) == want, f"layer {k}: {len(transfers)} transfer lines, program has {want}"
        side = r"(DDR|SCRATCH|PCORE|SPU) V[1248] X[12]"
        assert all(re.search(rf"{side}  <= {side}", l) for l in transfers), transfers
        times = [int(l[1:l.index("]")]) for l in report if l.startswith("[")]
        assert times and all(t >= 0 for t in times)
    assert any(" V8 X2 " in l for l in lines)
    cocotb.log.info("\n".join(lines[starts[0]:starts[0] + 12]))


@cocotb.test()
async def wserver_upload(dut):
    """WServer: the server checks the uploaded image and runs it; a corrupt
    one is refused and the ROM server keeps serving."""
    from tensorsoc.soc.builder import SimBuild
    build = SimBuild(soc_config(), os.environ["TSOC_BUILD_DIR"], log=lambda *_: None)
    image = build.server_image()
    dev, console, _ = await start(dut)
    # A corrupt image: the first KiB of the real payload, one bit flipped,
    # under the real header with its length cut to 1 KiB (the CRC is still
    # the full payload's): the firmware's CRC check refuses it.  Sending the
    # whole image with a flipped bit tests the same check at 24 times the
    # SPI time.
    from tensorsoc.spec.server_image import HEADER_SIZE
    n = 1024
    bad = bytearray(image[:HEADER_SIZE + n])
    bad[4:8] = n.to_bytes(4, "little")
    bad[HEADER_SIZE + 100] ^= 1
    try:
        await dev.write_server(bytes(bad))
    except DeviceError as e:
        assert e.cause == ErrorCause.BAD_SERVER, e
    else:
        raise AssertionError("corrupt server accepted")
    # The datasheet's server example: 512 bytes with code 0x81 = 256 + 256 + an
    # empty chunk (here not a valid image, so the server refuses it).
    for chunk in (image[:256], image[256:512], b""):
        await dev.transport.transaction(0x81, chunk)
        while True:
            status, cause = await dev.peek()
            if not status.bit(Status.BUSY_WRITE):
                break
    assert cause == ErrorCause.BAD_SERVER, cause
    await dev.status()
    assert await dev.id() == DEVICE_ID
    n = len(console.lines)
    await dev.write_server(image)
    await console.wait_for("tensorsoc MCORE firmware (uploaded)", start=n)
    await console.wait_for("server: ready", start=n)
    assert await dev.id() == DEVICE_ID
    assert (await dev.spec())["tiles"] == soc_config().np


@cocotb.test()
async def wtensor_throughput(dut):
    """Sustained WTensor rate against the link's rate (SCLK 50 MHz)."""
    dev, _, _ = await start(dut)
    n = 8192
    await dev.write_model(model(input_bytes=n))
    t = dev.transport
    t0 = t.now()
    await dev.write_tensor(bytes(i & 0xFF for i in range(n)))
    elapsed = t.now() - t0
    link = (4 if QPI else 1) / (t.period_ps * 1e-12)
    rate = n * 8 / elapsed
    result = {"mode": MODE, "bytes": n, "seconds": elapsed, "bits_per_s": rate, "link_bits_per_s": link,
              "efficiency": rate / link}
    cocotb.log.info(f"WTensor {n} bytes in {MODE}: {rate / 1e6:.1f} Mbit/s of {link / 1e6:.0f} Mbit/s "
                    f"({100 * rate / link:.1f}%, including the status poll)")
    out = Path(os.environ.get("TSOC_RESULT_JSON") or Path(os.environ["TSOC_BUILD_DIR"]) / f"wtensor_rate_{MODE.lower()}.json")
    out.write_text(json.dumps(result, indent=1))
    assert rate > 0.8 * link
