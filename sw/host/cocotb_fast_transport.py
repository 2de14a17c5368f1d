"""The fast host path: transactions put on the simulated SoC's host pins by
the simulation-only master (cores/host_spi/sim_master.py), not by Python.

:class:`CocotbTransport` wakes Python at every SCLK edge, so a 300 KB model
upload costs millions of Python steps.  This transport hands the master a
chunk of up to ``CHUNK_BYTES`` bytes (its ``host_fast_*`` ports), toggles
``go`` and sleeps until ``done``: one Python wake-up per chunk.  The waveform
on the pins is the pin-level host's (same SCLK period, CS_N timings, bit
order, idle and strap levels), the device cannot tell the two apart, and the
:class:`~sw.host.device.Device` API, the frames (malformed ones included) and
the statistics are the same.  The bus checks are the master's: the device
driving a pin it must not (Q while the host drives or the grounded MISO in
QPI, Q in SPI) or any pin while deselected raises :class:`BusContention`.

The transport can also be the pin-level host (``pin_level=True``, or
:meth:`use_pins` between frames): the master's ``en`` is then low and
Python drives the pins as :class:`CocotbTransport` does, so one test can
run its pin corners at pin level and its bulk uploads on the master.
"""

from tensorsoc.sw.host.transport import BusContention, Frame, FrameResult

from .cocotb_transport import CocotbTransport

CHUNK_BYTES = 256     # cores.host_spi.sim_master.CHUNK_BYTES (checked against the port width)


def _reverse_bits(b):
    return int(f"{b:08b}"[::-1], 2)


# The master shifts bits (SPI) or nibbles (QPI) out least significant first;
# MSB-first bytes are reordered on the way in and out.
_MSB_SPI = bytes(_reverse_bits(b) for b in range(256))
_MSB_QPI = bytes(((b & 0xF) << 4) | (b >> 4) for b in range(256))


class CocotbFastTransport(CocotbTransport):
    """Same arguments as :class:`CocotbTransport`; ``dut`` must be the
    simulation SoC (it has the master's ``host_fast_*`` ports)."""

    def __init__(self, dut, *args, fast_prefix="host_fast_", pin_level=False, **kwargs):
        super().__init__(dut, *args, **kwargs)
        self.f = {name: getattr(dut, fast_prefix + name) for name in (
            "en", "go", "done", "begin", "end", "qpi", "out_clocks", "rel_clocks", "in_clocks", "half",
            "tcse", "tcsd", "tcsi", "wdata", "rdata", "hdata", "dmap", "sclk", "undriven", "fault")}
        if len(self.f["wdata"]) != 8 * CHUNK_BYTES:
            raise ValueError(f"host_fast_wdata is {len(self.f['wdata'])} bits; this transport sends "
                             f"{CHUNK_BYTES}-byte chunks: rebuild the simulator")
        self.pin_level = pin_level
        self.sclk = self.clk if pin_level else self.f["sclk"]
        self._from_pins = False      # the next master frame follows a pin-level one
        self._go = 0
        self._strapped = False
        self._sys_ps = None
        # Called after each frame with (clocks, host, device, drove): the
        # wire as the master saw it (a monitor's view; see _Stream).
        self.observers = []

    def strap(self):
        """As the pin-level host: the master holds the strap while idle; the
        top's pins stay idle too (in case a test switches back)."""
        super().strap()
        self.f["en"].value = 0 if self.pin_level else 1
        self.f["qpi"].value = int(self.qpi)
        if not self._strapped:
            # The master is never reset: a transport made after another one
            # (a test after a test) starts from the toggle the master has.
            done = self.f["done"].value
            self._go = int(done) if done.is_resolvable else 0
            self.f["go"].value = self._go
            self._strapped = True

    def use_pins(self, pins):
        """Between frames: the pin-level host (``pins`` true: the master's
        ``en`` low, Python on the pins) or the master.  The pins are idle
        either way (strap levels, CS_N high)."""
        pins = bool(pins)
        if pins == self.pin_level:
            return
        self.pin_level = pins
        self.f["en"].value = 0 if pins else 1
        self.sclk = self.clk if pins else self.f["sclk"]
        self._from_pins = not pins

    def set_sys_period(self, sys_ps):
        """The SoC clock period: the master counts its timings in it.  The
        SCLK period must be an even number of system clocks."""
        self._sys_ps = sys_ps
        half = self.high_ps // sys_ps
        if half < 1 or self.high_ps % sys_ps or self.low_ps != self.high_ps:
            raise ValueError(f"fast host path: SCLK period {self.period_ps} ps is not an even number of "
                             f"system clocks ({sys_ps} ps); use the pin-level transport for this period")
        self.f["half"].value = half
        # The CS_N times in system clocks, rounded up (never shorter).
        for name in ("tcse", "tcsd", "tcsi"):
            self.f[name].value = max(0, -(-getattr(self, name + "_ps") // sys_ps))

    def _phases(self, frame):
        """The frame's clocks as (host drives, dummy, sampled) counts."""
        total = frame.total_clocks
        out = min(total, frame.out_clocks)
        if not frame.reads:
            return out, total - out, 0
        dummy = min(total - out, frame.dummy_clocks)
        return out, dummy, total - out - dummy

    async def _chunk(self, data, out, rel, inn, begin, end):
        """One chunk on the master; returns (fault, undriven, the wire: host
        values, device values, device-drove bits, one entry a clock, as ints
        with the first clock in the least significant bits)."""
        from cocotb.triggers import ValueChange
        f = self.f
        f["wdata"].value = int.from_bytes(data, "little")
        f["out_clocks"].value = out
        f["rel_clocks"].value = rel
        f["in_clocks"].value = inn
        f["begin"].value = int(begin)
        f["end"].value = int(end)
        self._go ^= 1
        f["go"].value = self._go
        while int(f["done"].value) != self._go:
            await ValueChange(f["done"])
        n = out + rel + inn
        w = 4 if self.qpi else 1
        top = 8 * CHUNK_BYTES
        wire = (int(f["hdata"].value) >> (top - n * w), int(f["rdata"].value) >> (top - n * w),
                int(f["dmap"].value) >> (top - n)) if n else (0, 0, 0)
        return int(f["fault"].value), int(f["undriven"].value), wire

    async def _run_locked(self, frame: Frame) -> FrameResult:
        if self.pin_level:
            return await super()._run_locked(frame)
        if self._sys_ps is None:
            raise RuntimeError("CocotbFastTransport: call set_sys_period() first (host_env.boot does)")
        if self._from_pins:
            # The master counts Tcsi from its own last CS_N rise: after a
            # pin-level frame, keep CS_N high for Tcsi here.
            self._from_pins = False
            idle_ps = self.tcsi_ps - round((self.now() - (self._cs_high_at or 0.0)) * 1e12)
            if self._cs_high_at is not None and idle_ps > 0:
                await self._wait(idle_ps)
        cpb = frame.cpb
        w = 4 if self.qpi else 1
        msb = (_MSB_QPI if self.qpi else _MSB_SPI) if self.msb_first else None
        out, dummy, inn = self._phases(frame)
        data = frame.host_bytes()
        if msb:
            data = data.translate(msb)
        step = CHUNK_BYTES * cpb          # clocks per chunk: a whole number of bytes
        total = out + dummy + inn
        undriven, c = 0, 0
        host, dev, drove = _Stream(w), _Stream(w), _Stream(1)
        while True:
            n = min(step, total - c)
            o = max(0, min(out - c, n))
            r = max(0, min(out + dummy - c, n) - o)
            fault, missing, (h, d, m) = await self._chunk(
                data[c // cpb:c // cpb + CHUNK_BYTES] if o else b"", o, r, n - o - r, c == 0, c + n >= total)
            if fault & 0b10 and self.check_release:
                raise BusContention(f"device drives its pins while CS_N is high, before {frame.cmd:#04x}, "
                                    f"t={self.now() * 1e9:.1f} ns")
            if fault & 0b01 and self.check_contention:
                raise BusContention(f"device drives a pin it must not ({'Q while the host drives, or MISO' if self.qpi else 'Q in SPI'}), in clocks {c}..{c + n - 1} "
                                    f"of {frame.cmd:#04x}, t={self.now() * 1e9:.1f} ns")
            host.add(h, n)
            dev.add(d, n)
            drove.add(m, n)
            undriven += missing
            c += n
            if c >= total:
                break
        self._cs_high_at = self.now()
        read = b""
        if frame.reads:
            start = out + dummy
            read = dev.bytes(start, total)
            if msb:
                read = read.translate(msb)
        for observer in self.observers:
            observer(total, host, dev, drove)
        return FrameResult(frame, read, total, undriven)


class _Stream:
    """Per-clock values of ``width`` bits, first clock in the least
    significant bits (one big int: a 300 KB upload is 2.4 M clocks)."""

    def __init__(self, width):
        self.width = width
        self.parts = []
        self.clocks = 0
        self._value = None

    def add(self, value, clocks):
        self.parts.append((value, clocks))
        self.clocks += clocks
        self._value = None

    @property
    def value(self):
        if self._value is None:
            # Every chunk but the last is a whole number of bytes.
            head = b"".join(p.to_bytes(c * self.width // 8, "little") for p, c in self.parts[:-1])
            last, _ = self.parts[-1] if self.parts else (0, 0)
            self._value = int.from_bytes(head, "little") | last << (8 * len(head))
        return self._value

    def values(self):
        """One int a clock (for a monitor)."""
        v, mask = self.value, (1 << self.width) - 1
        return [(v >> (i * self.width)) & mask for i in range(self.clocks)]

    def bytes(self, start, end):
        """The whole bytes of clocks ``start``..``end`` (a trailing partial
        byte dropped), least significant bits first."""
        nbytes = max(0, end - start) * self.width // 8
        return ((self.value >> (start * self.width)) & ((1 << 8 * nbytes) - 1)).to_bytes(nbytes, "little")
