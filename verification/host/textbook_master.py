"""An SPI/QPI master written from the textbook definition of the SPI modes,
independent of the project's host library (sw/host/) and its BFMs.

It knows the four SPI modes by their two bits and nothing of tensorsoc's
protocol beyond what the datasheet's pin table says:

* CPOL = 0: SCLK idles low, so the *leading* edge of each clock is the
  rising one and the *trailing* edge the falling one.
* CPHA = 0 (modes 0, 2): data is sampled on the leading edge and changed on
  the trailing edge; the first bit is put on the line when CS_N falls, before
  the first leading edge.
* CPHA = 1 (modes 1, 3): data is changed on the leading edge and sampled on
  the trailing edge.

A master that changes a line does so a little after its edge (``tco_ns``,
above the slave's hold time), and samples the value the line had just before
its sampling edge, as flip-flops do.  The quad variant shifts a nibble a
clock on Q0..Q3 (Q0 the least significant bit of the nibble) and releases
the Q lines after the command and data it sends.  Bits go least significant
first (the datasheet's order).  Lines nobody drives read as 1 (pull-ups).

The master transacts raw bytes: :meth:`transfer` sends ``out`` (the command
byte and its data), then gives ``dummy_clocks`` clocks, then ``nread`` bytes
of clocks, and returns what it sampled in those.  It also watches the pins
it expects the device to leave alone: MOSI is the master's in SPI, Q0..Q3
are the master's while it sends in QPI, and MISO is tied to ground for the
whole QPI session (``miso_grounded``): a device driving any of them is a
:class:`PinFault`.
"""

from cocotb.triggers import Timer

PULLUP = 1


class PinFault(AssertionError):
    """The device drove a pin it must leave to the host or to ground."""


class TextbookMaster:
    """``mode``: the SPI mode number 0..3 (only CPOL = 0 is wired here: modes
    0 and 1).  ``quad``: QPI data on Q0..Q3 (MISO tied low throughout).
    ``period_ns``: SCLK period; ``tcs_ns``: CS_N set-up, hold and idle."""

    def __init__(self, dut, mode=1, quad=False, period_ns=20.0, tcs_ns=200.0, tco_ns=4.0, prefix="host_spi_"):
        if mode not in (0, 1):
            raise ValueError(f"SPI mode {mode}: the host port's SCLK idles low (CPOL 0): modes 0 and 1 only")
        self.cpha = mode & 1
        self.quad = quad
        self.half_ps = round(period_ns * 500)
        self.tco_ps = round(tco_ns * 1000)
        if not 0 < self.tco_ps < self.half_ps:
            raise ValueError(f"tco {tco_ns} ns must lie inside the half period {period_ns / 2} ns")
        self.tcs_ps = round(tcs_ns * 1000)
        pin = lambda name: getattr(dut, prefix + name)
        self.clk, self.cs_n = pin("clk"), pin("cs_n")
        self.mosi, self.miso_i, self.miso_o, self.miso_oe = pin("mosi"), pin("miso_i"), pin("miso_o"), pin("miso_oe")
        self.q_i, self.q_o, self.q_oe = pin("q_i"), pin("q_o"), pin("q_oe")
        self.faults = []
        self.clocks = 0

    def idle(self):
        """Pins as the host holds them between transactions (and through a
        reset: MISO grounded selects QPI, pulled up SPI)."""
        self.cs_n.value = 1
        self.clk.value = 0
        self.mosi.value = 0
        self.q_i.value = 0b1111
        self.miso_i.value = 0 if self.quad else PULLUP

    # -- the wire -----------------------------------------------------------
    def _units(self, data):
        """Bytes as the line values of successive clocks, LSB (LSN) first."""
        if self.quad:
            return [b >> s & 0xF for b in data for s in (0, 4)]
        return [b >> s & 1 for b in data for s in range(8)]

    def _bytes(self, units):
        per, width = (2, 4) if self.quad else (8, 1)
        return bytes(sum(u << (width * k) for k, u in enumerate(units[i:i + per])) for i in range(0, len(units), per))

    def _drive(self, value):
        if value is None:                       # released (QPI) / idle low (SPI)
            if self.quad:
                self.q_i.value = 0b1111
            else:
                self.mosi.value = 0
        elif self.quad:
            self.q_i.value = value
        else:
            self.mosi.value = value

    def _sample(self):
        if self.quad:
            oe = int(self.q_oe.value)
            return (int(self.q_o.value) & oe) | (0b1111 & ~oe)
        return int(self.miso_o.value) if int(self.miso_oe.value) else PULLUP

    def _check(self, sending, where):
        q_oe, miso_oe = int(self.q_oe.value), int(self.miso_oe.value)
        if self.quad and miso_oe:
            self.faults.append(f"device drove the grounded MISO ({where})")
        if self.quad and sending and q_oe:
            self.faults.append(f"device drove Q (q_oe=0b{q_oe:04b}) while the host sent ({where})")
        if not self.quad and q_oe:
            self.faults.append(f"device drove Q in SPI (q_oe=0b{q_oe:04b}) ({where})")
        if self.faults:
            raise PinFault("; ".join(self.faults))

    async def transfer(self, out: bytes, dummy_clocks=0, nread=0) -> bytes:
        """One CS_N-low period: ``out`` sent, ``dummy_clocks`` clocks with
        the data lines released, ``nread`` bytes of clocks read."""
        units = self._units(out)
        per = 2 if self.quad else 8
        total = len(units) + dummy_clocks + nread * per
        sends = lambda k: k < len(units)
        got = []
        self.cs_n.value = 0
        if self.cpha == 0 and total:
            self._drive(units[0] if units else None)   # CPHA 0: the first bit before the first edge
        await Timer(self.tcs_ps, unit="ps")
        for k in range(total):
            if self.cpha == 1:
                # Leading (rising) edge: change data; trailing (falling): sample.
                self.clk.value = 1
                await Timer(self.tco_ps, unit="ps")
                self._drive(units[k] if sends(k) else None)
                await Timer(self.half_ps - self.tco_ps, unit="ps")
                self._check(sends(k), f"clock {k}")
                got.append(self._sample())
                self.clk.value = 0
                await Timer(self.half_ps, unit="ps")
            else:
                # Leading (rising) edge: sample; trailing (falling): change data.
                self._check(sends(k), f"clock {k}")
                got.append(self._sample())
                self.clk.value = 1
                await Timer(self.half_ps, unit="ps")
                self.clk.value = 0
                await Timer(self.tco_ps, unit="ps")
                self._drive(units[k + 1] if sends(k + 1) else None)
                await Timer(self.half_ps - self.tco_ps, unit="ps")
        self.clocks += total
        await Timer(self.tcs_ps, unit="ps")
        self.cs_n.value = 1
        self._drive(None)
        await Timer(self.tcs_ps, unit="ps")
        if int(self.q_oe.value) or int(self.miso_oe.value):
            raise PinFault("device still drives its pins after CS_N rose")
        return self._bytes(got[len(units) + dummy_clocks:])

    # -- the datasheet's commands, as its tables give them ---------------------
    async def read(self, cmd, nbytes):
        """An R* command: the command byte, 16 dummy clocks, ``nbytes``."""
        return await self.transfer(bytes([cmd]), dummy_clocks=16, nread=nbytes)

    async def write(self, cmd, data=b""):
        """A W* command or an action: the command byte and its data."""
        await self.transfer(bytes([cmd]) + bytes(data))

    async def read_word(self, cmd):
        return int.from_bytes(await self.read(cmd, 4), "little")

    async def poll(self, bit, limit=100_000):
        """"repeat 0x01 until bit ``bit`` is cleared"; returns the last status
        word and the number of polls."""
        for n in range(1, limit + 1):
            status = await self.read_word(0x01)
            if not status >> bit & 1:
                return status, n
        raise AssertionError(f"status bit {bit} never cleared in {limit} polls")
