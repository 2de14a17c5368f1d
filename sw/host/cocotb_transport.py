"""Transport that drives a simulated tensorsoc's host pins from cocotb.

Pins (prefix ``host_spi_`` by default): inputs ``clk``, ``cs_n``,
``dq_i[3:0]``; outputs ``dq_o[3:0]``, ``dq_oe[3:0]``.  SPI mode 0: MOSI is
``dq_i[0]``, MISO is ``dq_o[1]`` (valid while ``dq_oe[1]``).  QPI: nibbles
on DQ[3:0].  The host changes its data together with the rising SCLK edge
(the device samples on the falling edge) and samples the device's data at
the falling edge.  Only ``Timer`` triggers are used: one Python step per SCLK
edge, none per system clock.

Lines nobody drives read as 1 (pull-ups).  Bus faults raise
:class:`BusContention`: the device driving MOSI, driving DQ while the host
does (QPI), or still driving any line while CS_N is high.
"""

from sw.host.transport import BusContention, Frame, FrameResult, Transport, TransportError

IDLE_LINES = 0b1111       # pull-ups on DQ[3:0]


class CocotbTransport(Transport):
    """``period_ns``: SCLK period (default 20 ns = 50 MHz, the datasheet's
    fastest); ``tcse_ns``/``tcsd_ns``/``tcsi_ns``: CS_N enable, disable and
    idle times (datasheet minimums by default).  ``check_release``: check
    that the device releases DQ while deselected."""

    def __init__(self, dut, qpi=False, msb_first=False, period_ns=20.0, tcse_ns=100.0, tcsd_ns=100.0,
                 tcsi_ns=200.0, prefix="host_spi_", check_contention=True, check_release=True):
        super().__init__(qpi=qpi, msb_first=msb_first)
        from cocotb.triggers import Lock
        self.dut = dut
        self.clk = getattr(dut, prefix + "clk")
        self.cs_n = getattr(dut, prefix + "cs_n")
        self.dq_i = getattr(dut, prefix + "dq_i")
        self.dq_o = getattr(dut, prefix + "dq_o")
        self.dq_oe = getattr(dut, prefix + "dq_oe")
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
        low, MISO (DQ1) low to select QPI or high (pull-up) for SPI.  Call
        before the testbench releases reset."""
        self.cs_n.value = 1
        self.clk.value = 0
        self.dq_i.value = IDLE_LINES & ~0b0010 if self.qpi else IDLE_LINES

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
        if self.check_release and self._int(self.dq_oe, "dq_oe"):
            raise BusContention(f"device drives DQ (dq_oe=0b{self._int(self.dq_oe, 'dq_oe'):04b}) "
                                f"while CS_N is high, {when}, t={self.now() * 1e9:.1f} ns")

    def _sample(self):
        """The device's lines as the host sees them: (value, undriven)."""
        oe = self._int(self.dq_oe, "dq_oe")
        lines = (self._int(self.dq_o, "dq_o") & oe) | (IDLE_LINES & ~oe)
        if self.qpi:
            return lines, oe != 0b1111
        return lines >> 1 & 1, not oe & 0b0010

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
                self.dq_i.value = values[c] if drives and c < frame.out_clocks else IDLE_LINES
            else:
                self.dq_i.value = (IDLE_LINES & ~1) | (values[c] if c < frame.out_clocks else 0)
            self.clk.value = 1
            await self._wait(self.high_ps)
            if self.check_contention:
                oe = self._int(self.dq_oe, "dq_oe")
                clash = oe if (self.qpi and drives) else (0 if self.qpi else oe & 0b0001)
                if clash:
                    raise BusContention(f"device drives DQ (dq_oe=0b{oe:04b}) while the host drives, "
                                        f"clock {c} of {frame.cmd:#04x}, t={self.now() * 1e9:.1f} ns")
            if c >= frame.read_start and frame.reads:
                value, missing = self._sample()
                samples.append(value)
                undriven += missing
            self.clk.value = 0
            await self._wait(self.low_ps)
        await self._wait(self.tcsd_ps)
        self.cs_n.value = 1
        self.dq_i.value = IDLE_LINES
        self._cs_high_at = self.now()
        return FrameResult(frame, self.codec.decode(samples), total, undriven)
