"""SpidevTransport without hardware: the ioctl layer is replaced by a fake
controller written from the kernel's spidev ABI (struct offsets, request
numbers, word bit order), with the behavioural device model on its pins."""

import asyncio
import ctypes
import errno
import struct

import pytest

from tensorsoc.sw.host.device import DeviceError, SyncDevice
from tensorsoc.spec.host_protocol import DEVICE_ID, Cmd, ErrorCause
from tensorsoc.sw.host.spidev_transport import SpidevIO, SpidevTransport, reverse_bits
from tensorsoc.sw.host.transport import TransportError
from tensorsoc.verification.host.device_model import DeviceModel, ReferenceFirmware

# Request numbers of <linux/spi/spidev.h> on the common architectures.
WR_MODE32, WR_LSB_FIRST, WR_BITS, WR_SPEED = 0x40046B05, 0x40016B02, 0x40016B03, 0x40046B04


def message_request(n):
    return 0x40006B00 | (32 * n) << 16


class FakeController(SpidevIO):
    """A spidev controller: shifts words out MSB first (or LSB first once
    SPI_LSB_FIRST is set), quad transfers a nibble a clock high nibble
    first; the device on the lines decodes the protocol's bit order and
    answers through DeviceModel."""

    def __init__(self, model, msb_first=False, lsb_supported=True):
        self.model = model
        self.msb_first = msb_first          # the device's bit-order build option
        self.lsb_supported = lsb_supported
        self.lsb = False
        self.mode = None
        self.speed = None
        self.messages = []                  # per message: list of transfer dicts
        self.closed = False

    def open(self, path):
        if path != "/dev/spidev0.0":
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        return 5

    def close(self, fd):
        self.closed = True

    def ioctl(self, fd, request, arg):
        assert fd == 5
        if request == WR_MODE32:
            self.mode = struct.unpack("<I", arg)[0]
        elif request == WR_LSB_FIRST:
            if not self.lsb_supported:
                raise OSError(errno.EINVAL, "Invalid argument")
            self.lsb = bool(arg[0])
        elif request == WR_BITS:
            assert arg == bytes([8])
        elif request == WR_SPEED:
            self.speed = struct.unpack("<I", arg)[0]
        elif request & 0xC000FFFF == 0x40006B00:
            self._message(arg, ((request >> 16) & 0x3FFF) // 32)
        else:
            raise OSError(errno.ENOTTY, "Inappropriate ioctl for device")
        return 0

    def _message(self, arg, n):
        assert len(arg) == 32 * n
        transfers = []
        for i in range(n):
            raw = arg[32 * i:32 * (i + 1)]
            tx_buf, rx_buf = struct.unpack_from("<QQ", raw, 0)
            length, speed = struct.unpack_from("<II", raw, 16)
            bits, tx_nbits, rx_nbits = raw[26], raw[28], raw[29]
            transfers.append(dict(tx_buf=tx_buf, rx_buf=rx_buf, len=length, speed=speed, bits=bits,
                                  tx_nbits=tx_nbits, rx_nbits=rx_nbits,
                                  tx=ctypes.string_at(tx_buf, length) if tx_buf else None))
        self.messages.append(transfers)
        # 1. The lines the host drives, clock by clock.
        host, clocks_of = [], []
        for t in transfers:
            lanes = max(t["tx_nbits"], t["rx_nbits"], 1)
            assert t["tx_buf"] or t["rx_buf"] or t["len"] == 0
            if lanes == 4:
                assert not (t["tx_buf"] and t["rx_buf"]), "quad transfers are half duplex"
                assert self.mode & 0xA00 == 0xA00, "quad transfer without SPI_TX_QUAD|SPI_RX_QUAD"
            per_word = t["bits"] // lanes
            for w in range(t["len"]):
                word = t["tx"][w] if t["tx"] else 0
                for k in range(per_word):
                    if lanes == 4:
                        host.append(word >> (4 * (per_word - 1 - k)) & 0xF)
                    else:
                        host.append(word >> (k if self.lsb else t["bits"] - 1 - k) & 1)
            clocks_of.append(t["len"] * per_word)
        # 2. The device: bytes in the protocol's bit order, then its answer.
        qpi = self.model.qpi
        per = 2 if qpi else 8
        width = 4 if qpi else 1
        slots = bytearray()
        for s in range(0, len(host), per):
            byte = 0
            for k, v in enumerate(host[s:s + per]):
                pos = per - 1 - k if self.msb_first else k
                byte |= v << (width * pos)
            slots.append(byte)
        answer = self.model.transaction(bytes(slots), len(host))
        device = []
        for slot in answer:
            b = 0xFF if slot is None else slot
            for k in range(per):
                pos = per - 1 - k if self.msb_first else k
                device.append(b >> (width * pos) & ((1 << width) - 1))
        # 3. What the controller receives: sampled on the trailing (falling)
        # edge in mode 1, as the device drives on the rising one; a mode-0
        # controller samples on the rising edge, where the device changes
        # its data: each clock's sample is the previous clock's level (the
        # undriven line pulled up before the first).
        if not self.mode & 0x01:
            device = [(1 << width) - 1] + device[:-1]
        c = 0
        for t, nclk in zip(transfers, clocks_of):
            lanes = max(t["tx_nbits"], t["rx_nbits"], 1)
            per_word = t["bits"] // lanes
            rx = bytearray()
            for w in range(t["len"]):
                word = 0
                for k in range(per_word):
                    v = device[c]
                    c += 1
                    if lanes == 4:
                        word |= v << (4 * (per_word - 1 - k))
                    else:
                        word |= v << (k if self.lsb else t["bits"] - 1 - k)
                rx.append(word)
            if t["rx_buf"]:
                ctypes.memmove(t["rx_buf"], bytes(rx), t["len"])


def make(qpi=False, msb_first=False, lsb_supported=True, lsb_first_hw=None, **fw):
    model = DeviceModel(ReferenceFirmware(**fw), qpi=qpi)
    ctl = FakeController(model, msb_first=msb_first, lsb_supported=lsb_supported)
    transport = SpidevTransport("/dev/spidev0.0", qpi=qpi, msb_first=msb_first, speed_hz=25_000_000,
                                lsb_first_hw=lsb_first_hw, io=ctl)
    return model, ctl, transport


def test_request_numbers_match_the_kernel_abi():
    from tensorsoc.sw.host import spidev_transport as s
    assert s.spi_ioc_message(1) == 0x40206B00
    assert s.spi_ioc_message(3) == message_request(3)
    assert (s.SPI_IOC_WR_MODE32, s.SPI_IOC_WR_LSB_FIRST, s.SPI_IOC_WR_BITS_PER_WORD, s.SPI_IOC_WR_MAX_SPEED_HZ) == \
        (WR_MODE32, WR_LSB_FIRST, WR_BITS, WR_SPEED)
    assert s.TRANSFER.size == 32


def test_mode_1_is_set_and_a_mode_0_controller_reads_shifted():
    """The transport asks for SPI mode 1 (CPHA 1), quad bits on top in QPI.
    A controller left in mode 0 (it ignores the request) reads every word one
    clock late: RID's 0x633 shifted left, the pulled-up idle level below."""
    from tensorsoc.sw.host.spidev_transport import SPI_RX_QUAD, SPI_TX_QUAD
    _, ctl, t = make()
    assert ctl.mode == 1 and SyncDevice(t).id() == DEVICE_ID
    _, ctl, t = make(qpi=True)
    assert ctl.mode == 1 | SPI_TX_QUAD | SPI_RX_QUAD and SyncDevice(t).id() == DEVICE_ID

    class Mode0Controller(FakeController):
        def ioctl(self, fd, request, arg):
            if request == WR_MODE32:
                arg = struct.pack("<I", struct.unpack("<I", arg)[0] & ~0x03)
            return super().ioctl(fd, request, arg)
    model = DeviceModel(ReferenceFirmware(), qpi=False)
    t = SpidevTransport("/dev/spidev0.0", io=Mode0Controller(model))
    assert SyncDevice(t).id() == (DEVICE_ID << 1 | 1) & 0xFFFFFFFF


def test_reverse_bits():
    assert reverse_bits(0x01) == 0x80
    assert reverse_bits(0xA0) == 0x05
    assert reverse_bits(0b011, 3) == 0b110
    assert all(reverse_bits(reverse_bits(v)) == v for v in range(256))


def test_spi_rstatus_packing_with_controller_lsb_first():
    _, ctl, t = make()
    assert t.bit_order == "controller" and ctl.lsb and ctl.mode == 1 and ctl.speed == 25_000_000
    SyncDevice(t).status()
    (xfer,) = ctl.messages[-1]
    assert xfer["len"] == 1 + 2 + 4          # command, 16 dummy clocks = 2 bytes, 4 data bytes
    assert xfer["tx"] == bytes([0x01]) + bytes(6)
    assert xfer["bits"] == 8 and xfer["tx_nbits"] == 1 and xfer["rx_nbits"] == 1


def test_spi_rstatus_packing_with_software_bit_reversal():
    _, ctl, t = make(lsb_supported=False)
    assert t.bit_order == "software" and not ctl.lsb
    SyncDevice(t).status()
    (xfer,) = ctl.messages[-1]
    assert xfer["tx"] == bytes([0x80]) + bytes(6)
    # an explicit demand for the controller's LSB-first mode fails on this controller
    with pytest.raises(OSError):
        make(lsb_supported=False, lsb_first_hw=True)


def test_qpi_packing_releases_the_bus_for_dummy_and_read():
    _, ctl, t = make(qpi=True)
    assert ctl.mode == 0x01 | 0x200 | 0x800 and not ctl.lsb and t.bit_order == "software"
    assert hex(SyncDevice(t).id()) == hex(DEVICE_ID)
    cmd_xfer, read_xfer = ctl.messages[-2]     # RID (the last message is the RERROR check)
    assert cmd_xfer["tx"] == bytes([0x30]) and cmd_xfer["rx_buf"] == 0 and cmd_xfer["tx_nbits"] == 4
    assert read_xfer["tx_buf"] == 0 and read_xfer["rx_nbits"] == 4
    assert read_xfer["len"] == 8 + 4            # 16 dummy clocks = 8 quad bytes, then the word


def test_qpi_msb_first_sends_bytes_as_they_are():
    _, ctl, t = make(qpi=True, msb_first=True)
    asyncio.run(t.transaction(Cmd.WTENSOR, bytes([0x12, 0x34, 0x56, 0x78]) * 4))
    (xfer,) = ctl.messages[0]
    assert xfer["tx"] == bytes([0x06, 0x12, 0x34, 0x56, 0x78]) + bytes([0x12, 0x34, 0x56, 0x78]) * 3


@pytest.mark.parametrize("qpi,msb_first,lsb_supported", [
    (False, False, True), (False, False, False), (False, True, True), (True, False, True), (True, True, True)])
def test_device_flow_over_spidev(qpi, msb_first, lsb_supported):
    model, ctl, t = make(qpi, msb_first, lsb_supported, input_bytes=16, output_bytes=8, layers=2)
    dev = SyncDevice(t)
    assert dev.id() == DEVICE_ID
    image = bytes((i * 7) & 0xFF for i in range(600))
    dev.write_model(image)
    assert bytes(model.windows[0][:600]) == image
    dev.write_tensor(bytes(range(16)))
    dev.infer()
    out = dev.read_tensor()
    assert len(out) == 8 and out == bytes((i % 16 + image[i]) & 0xFF for i in range(8))
    assert dev.timings(2) == [10, 20]
    assert t.stats.bytes_written == 600 + 16


@pytest.mark.parametrize("qpi", [False, True])
def test_partial_byte_uses_a_short_word(qpi):
    model, ctl, t = make(qpi)
    dev = SyncDevice(t)
    bits = 4 if qpi else 3
    result = asyncio.run(t.partial(Cmd.RID, bits=bits))
    last = ctl.messages[-1]
    assert last[-1]["bits"] == bits and last[-1]["len"] == 1
    assert model.outcomes[-1].error == ErrorCause.PARTIAL_BYTE and result.clocks == bits // (4 if qpi else 1)
    assert dev.clear_error() == ErrorCause.PARTIAL_BYTE
    with pytest.raises(DeviceError) as e:
        dev.write_tensor(bytes(8))          # no model loaded: the firmware says NO_MODEL
    assert e.value.cause == ErrorCause.NO_MODEL


def test_open_failure_is_a_transport_error():
    model = DeviceModel()
    with pytest.raises(TransportError, match="cannot open /dev/spidev9.9"):
        SpidevTransport("/dev/spidev9.9", io=FakeController(model))
