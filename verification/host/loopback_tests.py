"""cocotb tests of CocotbTransport against host_spi_loopback.v: bit order in
both directions (SPI/QPI, LSB/MSB first), partial bytes and extra clocks,
the datasheet's CS_N and SCLK timings, bus-contention detection.  Run by
tests/test_host_cocotb.py through cocotb's runner."""

import random

import cocotb
from cocotb.triggers import Edge, Timer

from tensorsoc.sw.host.cocotb_transport import CocotbTransport
from tensorsoc.sw.host.transport import BusContention

CONFIGS = [(qpi, msb) for qpi in (False, True) for msb in (False, True)]
ID_BYTES = bytes([0x33, 0x06, 0x00, 0x00])


async def reset(dut, qpi, msb_first, **kwargs):
    transport = CocotbTransport(dut, qpi=qpi, msb_first=msb_first, **kwargs)
    dut.rst.value = 1
    dut.msb_first.value = int(msb_first)
    transport.strap()
    await Timer(50, unit="ns")
    dut.rst.value = 0
    await Timer(50, unit="ns")
    assert int(dut.qpi.value) == int(qpi), "the QPI strap (MISO low at reset) was not seen"
    return transport


def mode(qpi, msb):
    return f"{'QPI' if qpi else 'SPI'}/{'MSB' if msb else 'LSB'} first"


@cocotb.test()
async def bit_order(dut):
    """Known words both ways: the device decodes what the host meant and vice versa."""
    for qpi, msb in CONFIGS:
        t = await reset(dut, qpi, msb)
        cpb = 2 if qpi else 8
        assert await t.transaction(0x03, read_len=4) == ID_BYTES, mode(qpi, msb)
        await t.transaction(0x02, write=bytes([0x01, 0x80, 0xA5, 0x3C]))
        assert int(dut.last_cmd.value) == 0x02, mode(qpi, msb)
        assert int(dut.last_byte0.value) == 0x01, mode(qpi, msb)
        assert int(dut.last_bytes.value) == 5 and int(dut.last_clocks.value) == 5 * cpb, mode(qpi, msb)


@cocotb.test()
async def echo(dut):
    """Random data written and read back, command byte by byte."""
    rng = random.Random(7)
    for qpi, msb in CONFIGS:
        t = await reset(dut, qpi, msb)
        data = bytes(rng.randrange(256) for _ in range(32))
        await t.transaction(0x06, write=data)
        assert await t.transaction(0x07, read_len=32) == data, mode(qpi, msb)
        assert t.stats.bytes_written == 32 and t.stats.bytes_read == 32


@cocotb.test()
async def clock_counts(dut):
    """Partial bytes, missing and extra clocks reach the device as asked."""
    for qpi, msb in CONFIGS:
        t = await reset(dut, qpi, msb)
        cpb = 2 if qpi else 8
        await t.partial(0x02, bits=4)
        assert int(dut.last_clocks.value) == 4 // (4 if qpi else 1), mode(qpi, msb)
        await t.raw(0x02, write=b"\x11\x22\x33\x44", clocks=5 * cpb + 1)
        assert int(dut.last_clocks.value) == 5 * cpb + 1 and int(dut.last_bytes.value) == 5
        await t.raw(0x02, write=b"\x11\x22\x33\x44", clocks=3 * cpb - 1)
        assert int(dut.last_clocks.value) == 3 * cpb - 1 and int(dut.last_bytes.value) == 2
        result = await t.raw(0x03, read_len=4, clocks=cpb + 16 + 6 * cpb)   # 2 extra bytes read
        assert result.data == ID_BYTES + bytes(2) and result.undriven == 0, mode(qpi, msb)
        result = await t.raw(0x02, clocks=0)
        assert result.clocks == 0 and result.data == b""


@cocotb.test()
async def timings(dut):
    """SCLK period, Tcse, Tcsd and Tcsi as configured, measured on the pins."""
    period_ns, tcse, tcsd, tcsi = 20, 100, 120, 250
    t = await reset(dut, False, False, period_ns=period_ns, tcse_ns=tcse, tcsd_ns=tcsd, tcsi_ns=tcsi)
    events = []

    async def watch(sig, name):
        while True:
            await Edge(sig)
            events.append((t.now() * 1e9, name, int(sig.value)))

    watchers = [cocotb.start_soon(watch(dut.host_spi_clk, "clk")), cocotb.start_soon(watch(dut.host_spi_cs_n, "cs"))]
    for _ in range(3):
        await t.transaction(0x01, read_len=4)
    for w in watchers:
        w.cancel()
    cs = [(ts, v) for ts, n, v in events if n == "cs"]
    rises = [ts for ts, n, v in events if n == "clk" and v == 1]
    falls = [ts for ts, n, v in events if n == "clk" and v == 0]
    assert len(rises) == 3 * (8 + 16 + 32)
    assert min(b - a for a, b in zip(rises, rises[1:])) >= period_ns - 1e-6
    for (t_low, v_low), (t_high, v_high) in zip(cs[0::2], cs[1::2]):
        assert (v_low, v_high) == (0, 1)
        first = min(r for r in rises if r > t_low)
        last = max(f for f in falls if f < t_high)
        assert first - t_low >= tcse - 1e-6, f"Tcse {first - t_low} ns"
        assert t_high - last >= tcsd - 1e-6, f"Tcsd {t_high - last} ns"
    for (t_high, _), (t_low, _) in zip(cs[1::2], cs[2::2]):
        assert t_low - t_high >= tcsi - 1e-6, f"Tcsi {t_low - t_high} ns"
    assert t.stats.transactions == 3 and t.stats.busy_s > 0 and t.stats.throughput() > 0


@cocotb.test()
async def contention(dut):
    """The device driving while the host drives, or while deselected, is caught."""
    for qpi, msb in CONFIGS:
        t = await reset(dut, qpi, msb)
        try:
            await t.transaction(0x0C, write=bytes(8))
        except BusContention:
            pass
        else:
            raise AssertionError(f"{mode(qpi, msb)}: device drove DQ during a write, not detected")
        t.cs_n.value = 1
        t.clk.value = 0
        await Timer(300, unit="ns")
        t = await reset(dut, qpi, msb)
        await t.transaction(0x0D, read_len=4)
        try:
            await t.transaction(0x01, read_len=4)
        except BusContention:
            pass
        else:
            raise AssertionError(f"{mode(qpi, msb)}: device kept DQ driven while deselected, not detected")
        t.check_release = False
        await t.transaction(0x02, write=bytes(4))         # any other command ends the misbehaviour
        t.check_release = True
        assert await t.transaction(0x03, read_len=4) == ID_BYTES
