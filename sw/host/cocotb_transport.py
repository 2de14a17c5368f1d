"""Transport that drives a simulated tensorsoc's host pins from cocotb.

The datasheet's pins (prefix ``host_spi_`` by default, see
cores/host_spi/pins.py): inputs ``clk``, ``cs_n``, ``mosi``, ``miso_i``,
``q_i[3:0]``; outputs ``miso_o``/``miso_oe`` and ``q_o[3:0]``/``q_oe[3:0]``.
SPI: MOSI and MISO.  QPI: nibbles on Q[3:0], and MISO tied to ground for the
whole session (the strap), as the datasheet wires it.  SPI mode 1 (CPOL 0,
CPHA 1): the host changes its data with the rising SCLK edge (the device
samples on the falling edge) and samples the device's data at the falling
edge.  Only ``Timer`` triggers are used: one Python step per SCLK edge, none
per system clock.

Pins nobody drives read as 1 (pull-ups).  Bus faults raise
:class:`BusContention`: the device driving Q while the host does (QPI),
driving the grounded MISO (QPI) or a Q pin (SPI), or still driving any pin
while CS_N is high.
"""

from tensorsoc.sw.host.transport import BusContention, Frame, FrameResult, Transport, TransportError

IDLE_LINES = 0b1111       # pull-ups on Q[3:0]


class CocotbTransport(Transport):
    """``period_ns``: SCLK period (default 20 ns = 50 MHz, the datasheet's
    fastest); ``tcse_ns``/``tcsd_ns``/``tcsi_ns``: CS_N enable, disable and
    idle times (datasheet minimums by default).  ``check_release``: check
    that the device releases its pins while deselected."""

    def __init__(self, dut, qpi=False, msb_first=False, period_ns=20.0, tcse_ns=100.0, tcsd_ns=100.0,
                 tcsi_ns=200.0, prefix="host_spi_", check_contention=True, check_release=True):
        super().__init__(qpi=qpi, msb_first=msb_first)
        from cocotb.triggers import Lock
        self.dut = dut
        self.clk = getattr(dut, prefix + "clk")
        self.cs_n = getattr(dut, prefix + "cs_n")
        self.mosi = getattr(dut, prefix + "mosi")
        self.miso_i = getattr(dut, prefix + "miso_i")
        self.miso_o = getattr(dut, prefix + "miso_o")
        self.miso_oe = getattr(dut, prefix + "miso_oe")
        self.q_i = getattr(dut, prefix + "q_i")
        self.q_o = getattr(dut, prefix + "q_o")
        self.q_oe = getattr(dut, prefix + "q_oe")
        self.sclk = self.clk      # the SCLK the host gives (the fast path's master has its own)
        self.period_ps = round(period_ns * 1000)
        self.high_ps = self.period_ps // 2
        self.low_ps = self.period_ps - self.high_ps
        if self.high_ps <= 0:
            raise ValueError(f"SCLK period {period_ns} ns is too short")
        self.tcse_ps = round(tcse_ns * 1000)
        self.tcsd_ps = round(tcsd_ns * 1000)
        self.tcsi_ps = round(tcsi_ns * 1000)
        self.check_contention = check_contention
        self.check_release = check_release
        self._lock = Lock()
        self._cs_high_at = None      # time CS_N last rose (None: not yet)

    def strap(self):
        """Set the pins as the host holds them through reset: CS_N high, SCLK
        low, MISO tied low to select QPI (for the whole session) or pulled
        up for SPI.  Call before the testbench releases reset."""
        self.cs_n.value = 1
        self.clk.value = 0
        self.mosi.value = 1
        self.q_i.value = IDLE_LINES
        # The device's MISO input (its strap): ground in QPI; in SPI the
        # pull-up (the device reads it only at reset, when it does not drive).
        self.miso_i.value = 0 if self.qpi else 1

    def lines(self):
        """The pins as four data lines for a monitor: (host, device
        output enable, device value with pull-ups) with the host's data on
        line 0 (SPI: MOSI) or 3..0 (QPI: Q), the device's on line 1 (SPI:
        MISO) or 3..0 (QPI)."""
        if self.qpi:
            oe = self._int(self.q_oe, "q_oe")
            return (self._int(self.q_i, "q_i"), oe,
                    (self._int(self.q_o, "q_o") & oe) | (IDLE_LINES & ~oe))
        oe = self._int(self.miso_oe, "miso_oe")
        dev = self._int(self.miso_o, "miso_o") if oe else 1
        return 0b1110 | self._int(self.mosi, "mosi"), oe << 1, 0b1101 | dev << 1

    def _driven(self):
        """Output enables of the pins the device may not drive now (QPI:
        MISO; SPI: Q) and of those it may (QPI: Q; SPI: MISO)."""
        q_oe, miso_oe = self._int(self.q_oe, "q_oe"), self._int(self.miso_oe, "miso_oe")
        return (miso_oe, q_oe) if self.qpi else (q_oe, miso_oe)

    def now(self):
        from cocotb.utils import get_sim_time
        return get_sim_time(unit="ps") * 1e-12

    async def sleep(self, seconds):
        ps = round(seconds * 1e12)
        if ps > 0:
            await self._wait(ps)

    async def _wait(self, ps):
        from cocotb.triggers import Timer
        await Timer(ps, unit="ps")

    def _int(self, sig, what):
        value = sig.value
        if not value.is_resolvable:
            name = getattr(sig, "_name", "?")
            raise TransportError(f"{what} ({name}) is {value}: not 0/1 at t={self.now() * 1e9:.1f} ns")
        return int(value)

    def _check_released(self, when):
        if self.check_release:
            q_oe, miso_oe = self._int(self.q_oe, "q_oe"), self._int(self.miso_oe, "miso_oe")
            if q_oe or miso_oe:
                raise BusContention(f"device drives its pins (q_oe=0b{q_oe:04b}, miso_oe={miso_oe}) "
                                    f"while CS_N is high, {when}, t={self.now() * 1e9:.1f} ns")

    def _sample(self):
        """The device's pins as the host sees them: (value, undriven)."""
        if self.qpi:
            oe = self._int(self.q_oe, "q_oe")
            return (self._int(self.q_o, "q_o") & oe) | (IDLE_LINES & ~oe), oe != 0b1111
        if self._int(self.miso_oe, "miso_oe"):
            return self._int(self.miso_o, "miso_o"), False
        return 1, True

    async def _run(self, frame: Frame) -> FrameResult:
        async with self._lock:
            return await self._run_locked(frame)

    async def _run_locked(self, frame):
        idle_ps = self.tcsi_ps - round((self.now() - (self._cs_high_at or 0.0)) * 1e12)
        if self._cs_high_at is not None and idle_ps > 0:
            await self._wait(idle_ps)
        self._check_released("before the transaction")
        total = frame.total_clocks
        values = self.codec.encode(frame.host_bytes())
        samples, undriven = [], 0
        self.cs_n.value = 0
        if total:
            await self._wait(self.tcse_ps)
        for c in range(total):
            drives = frame.host_drives(c)
            if self.qpi:
                self.q_i.value = values[c] if drives and c < frame.out_clocks else IDLE_LINES
            else:
                self.mosi.value = values[c] if c < frame.out_clocks else 0
            self.clk.value = 1
            await self._wait(self.high_ps)
            if self.check_contention:
                forbidden, allowed = self._driven()
                if forbidden or (self.qpi and drives and allowed):
                    pins = ("MISO" if forbidden else "Q") if self.qpi else "Q"
                    raise BusContention(f"device drives {pins} (q_oe=0b{self._int(self.q_oe, 'q_oe'):04b}, "
                                        f"miso_oe={self._int(self.miso_oe, 'miso_oe')})"
                                        f"{' while the host drives' if self.qpi and drives else ''}, "
                                        f"clock {c} of {frame.cmd:#04x}, t={self.now() * 1e9:.1f} ns")
            if c >= frame.read_start and frame.reads:
                value, missing = self._sample()
                samples.append(value)
                undriven += missing
            self.clk.value = 0
            await self._wait(self.low_ps)
        await self._wait(self.tcsd_ps)
        self.cs_n.value = 1
        self.mosi.value = 1
        self.q_i.value = IDLE_LINES
        self._cs_high_at = self.now()
        return FrameResult(frame, self.codec.decode(samples), total, undriven)
