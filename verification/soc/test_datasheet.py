"""The datasheet followed literally, by a host that knows only the datasheet
and the textbook SPI modes (verification/host/textbook_master.py), not the
project's host library.

Every sequence here is one of the datasheet's own examples, sent as written
(``/work/shared/seeds/inference_engine_datasheet.rst``): the chunked model
write with a status poll after each chunk, the typical inference cycle
``0x06 / 0x08 / repeat 0x01 until bit 1 is cleared / 0x07`` with no poll
between the tensor write and the inference, and the two Acquire cycles, at
the datasheet's fastest SCLK (50 MHz).  A real model (examples/mlp.yaml)
runs, its output compared with the golden model.  In QPI, MISO is tied to
ground for the whole session, as the datasheet wires it, and the master
fails the test if the device ever drives it.  A textbook mode-0 host reads
the device's words shifted by one bit, as docs/host_protocol.md says.

Run by tests/test_host_datasheet.py on the default SoC build.
"""

import os
from pathlib import Path

import cocotb

from tensorsoc.verification.host.device_model import expected_rspec
from tensorsoc.verification.host.textbook_master import TextbookMaster
from tensorsoc.verification.soc.host_env import boot, soc_config

ROOT = Path(__file__).resolve().parents[2]
# The datasheet's Tclk minimum (50 MHz), or a board's fastest SCLK with the
# SoC at the board's clock (tests/test_host_datasheet.py sets both).
SCLK_NS = float(os.environ.get("TSOC_DATASHEET_SCLK_NS", "20"))
DEVICE_ID = 0x00000633  # "This returns 0x00000633"

# The datasheet's codes: table and examples.
RSTATUS, RID, RSPEC, RTENSOR = 0x01, 0x03, 0x05, 0x07
WMODEL_EXAMPLE, WTENSOR, INFERENCE, ACQUIRE = 0x80, 0x06, 0x08, 0x0A
BIT_WRITE, BIT_INFERENCE, BIT_ACQUIRE, BIT_ERROR = 0, 1, 2, 8


async def start(dut, qpi, mode=1):
    """Boots the SoC with the host pins strapped (MISO low for QPI) and
    hands the pins to a textbook master."""
    _, console, sensor = await boot(dut, qpi=qpi, path="pins", period_ns=SCLK_NS)
    master = TextbookMaster(dut, mode=mode, quad=qpi, period_ns=SCLK_NS)
    master.idle()
    return master, console, sensor


def mlp():
    from tensorsoc.sw.model.compiler import compile_model
    from tensorsoc.sw.model.frontend import load_model
    from tensorsoc.verification.soc.model_job import golden_io
    m = load_model(ROOT / "examples" / "mlp.yaml", soc_config())
    _, inp, expected = golden_io(m)
    return m, compile_model(m, require_accel=True), inp, expected


async def write_model(master, image):
    """The datasheet's "Write model" example: 0x80 and 256 bytes, "repeat
    0x01 until the bottom bit is cleared", ..., a last chunk shorter than 256
    (0 bytes when the image is a multiple of 256)."""
    chunks = [image[i:i + 256] for i in range(0, len(image), 256)]
    if len(chunks[-1]) == 256:
        chunks.append(b"")
    for chunk in chunks:
        await master.write(WMODEL_EXAMPLE, chunk)
        status, _ = await master.poll(BIT_WRITE)
        assert not status >> BIT_ERROR & 1, f"WModel chunk refused: status 0x{status:08x}"


async def inference_cycle(master, tensor, m_bytes):
    """The datasheet's "typical inference cycle", as written:
    0x06 then N bytes / 0x08 / repeat 0x01 until bit 1 is cleared /
    0x07 then dummy clocks then read M bytes."""
    await master.write(WTENSOR, tensor)
    await master.write(INFERENCE)
    status, polls = await master.poll(BIT_INFERENCE)
    out = await master.read(RTENSOR, m_bytes)
    assert not status >> BIT_ERROR & 1, f"the cycle raised an error: status 0x{status:08x}"
    return out, polls


async def datasheet_session(dut, qpi):
    master, console, sensor = await start(dut, qpi)
    cfg = soc_config()
    assert await master.read_word(RID) == DEVICE_ID
    status = await master.read_word(RSTATUS)
    assert status & 0b111 == 0, f"status 0x{status:08x} after boot"
    spec = await master.read(RSPEC, 16)
    rspec = expected_rspec(cfg)
    assert spec[0] == 0x54 and spec[1] == rspec["tiles"], spec.hex()
    assert int.from_bytes(spec[2:4], "little") == rspec["internal_kib"], spec.hex()
    assert int.from_bytes(spec[6:8], "little") == rspec["external_kib"], spec.hex()

    m, image, inp, expected = mlp()
    await write_model(master, image)
    spec = await master.read(RSPEC, 16)
    n_bytes, m_bytes = int.from_bytes(spec[8:12], "little"), int.from_bytes(spec[12:16], "little")
    assert (n_bytes, m_bytes) == (m.input_bytes, m.output_bytes), spec.hex()

    # The cycle twice, the first on a zero tensor: the second inference must
    # see its own tensor, not read the first one's output again.
    zero_out, _ = await inference_cycle(master, bytes(n_bytes), m_bytes)
    assert zero_out != expected, "the zero tensor gives the expected output: the check below would prove nothing"
    out, polls = await inference_cycle(master, inp, m_bytes)
    assert out == expected, "the typical inference cycle's output differs from the golden model"
    cocotb.log.info(f"typical inference cycle: {polls} status polls until bit 1 cleared")
    await console.wait_for("server: inference done")

    # Acquire, first use case: 0x0A / repeat 0x01 until bit 2 is cleared /
    # 0x07 then dummy clocks then read F bytes (F: the frame, the model's input).
    frame = bytes((7 * i + 3) & 0xFF for i in range(n_bytes))
    feeding = cocotb.start_soon(sensor.send(frame))
    await master.write(ACQUIRE)
    status, _ = await master.poll(BIT_ACQUIRE)
    assert not status >> BIT_ERROR & 1, f"Acquire raised an error: status 0x{status:08x}"
    assert await master.read(RTENSOR, n_bytes) == frame
    await feeding
    # Second use case: the acquired frame classified: 0x0A / poll bit 2 /
    # 0x08 / poll bit 1 / 0x07 ... M bytes.  The sensor sends the golden input.
    feeding = cocotb.start_soon(sensor.send(inp))
    await master.write(ACQUIRE)
    await master.poll(BIT_ACQUIRE)
    await master.write(INFERENCE)
    status, _ = await master.poll(BIT_INFERENCE)
    assert not status >> BIT_ERROR & 1, f"status 0x{status:08x}"
    assert await master.read(RTENSOR, m_bytes) == expected, "Acquire + Inference output differs from the golden model"
    await feeding
    assert not master.faults
    cocotb.log.info(f"{'QPI' if qpi else 'SPI'}: {master.clocks} SCLK clocks at {1e3 / SCLK_NS:.0f} MHz, no pin fault")


@cocotb.test()
async def spi_mode1_datasheet_cycles(dut):
    """SPI, mode 1 (CPOL 0, CPHA 1): RID, RStatus, RSpec, the chunked model
    write, the typical inference cycle and both Acquire cycles as the
    datasheet writes them."""
    await datasheet_session(dut, qpi=False)


@cocotb.test()
async def qpi_miso_grounded_datasheet_cycles(dut):
    """QPI with MISO tied to ground from reset to the end: the same
    sequences; the device never drives MISO or drives Q while the host does."""
    await datasheet_session(dut, qpi=True)


@cocotb.test()
async def spi_mode0_reads_shifted(dut):
    """A textbook mode-0 host (samples on the rising edge, where the device
    changes its data) reads each bit one clock late: RID's 0x633 shifted left
    by one, its lowest bit the undriven (pulled-up) MISO of the last dummy
    clock.  Its writes still land (the device samples on the falling edge,
    after the host's data settled), which is why the mistake is easy to miss."""
    master, _, _ = await start(dut, qpi=False, mode=0)
    assert await master.read_word(RID) == (DEVICE_ID << 1 | 1) & 0xFFFF_FFFF
    # The same device answers a mode-1 host correctly right after.
    master.cpha = 1
    assert await master.read_word(RID) == DEVICE_ID
