"""SPI/QPI slave PHY: the logic clocked by the host's SCLK and CS_N.

Three reset-less clock domains, all driven by the host's pins:

* ``hspi_rx`` on SCLK falling edges: the device samples command and data
  there (the host drives on rising edges) and pushes whole bytes into an
  asynchronous FIFO towards the system clock domain;
* ``hspi_tx`` on SCLK rising edges: the device drives read data there, popped
  from an asynchronous FIFO the system side fills;
* ``hspi_cs`` on CS_N rising edges: counts transactions (the *epoch*), as
  a ripple counter (``hspi_cs1`` .. ``hspi_cs7`` clock its upper bits).

No domain sees an edge between transactions, so none can be reset by CS_N
synchronously.  Instead each SCLK domain compares the epoch it saw last with
the current one: a difference marks the first clock of a new transaction.
The epoch changes at a CS_N rising edge, at least Tcsi + Tcse (300 ns) before
the next SCLK edge, so it is stable when sampled.  Bytes and read data carry
the epoch, so the system side never mixes transactions and stale read data
is discarded by the transmitter.

After CS_N rises the system side reads the transaction's clock count (stable
by then: no SCLK edges until the next transaction) and learns how many bits
the host sent or received, including partial bytes.
"""

from migen import (Cat, ClockDomain, ClockSignal, If, Mux, Signal)
from migen.genlib.cdc import MultiReg
from migen.genlib.fifo import AsyncFIFO

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from tensorsoc.spec.host_protocol import DUMMY_CLOCKS

EPOCH_BITS = 8
CLOCK_BITS = 24          # clocks per transaction counted (saturating)


def rx_layout():
    return [("data", 8), ("sot", 1), ("epoch", EPOCH_BITS)]


def tx_layout():
    return [("data", 8), ("epoch", EPOCH_BITS)]


def end_layout():
    return [("epoch", EPOCH_BITS), ("clocks", CLOCK_BITS), ("active", 1)]


class HostSPIPHY(LiteXModule):
    """Pads: ``clk``, ``cs_n``, ``dq_i[4]`` in; ``dq_o[4]``, ``dq_oe[4]`` out.

    ``qpi`` (system domain, static after reset) selects 4-bit transfers;
    ``msb_first`` is a build option.  System-side interfaces: ``rx`` (source
    of bytes), ``tx`` (sink of read bytes), ``end`` (source: one record per
    transaction with the number of clocks the host gave), ``underrun`` and
    ``overrun`` (single-cycle pulses).
    """

    def __init__(self, pads, qpi, msb_first=False, fifo_depth=16):
        self.rx = stream.Endpoint(rx_layout())
        self.tx = stream.Endpoint(tx_layout())
        self.end = stream.Endpoint(end_layout())
        self.underrun = Signal()
        self.overrun = Signal()

        # # #

        self.cd_hspi_rx = ClockDomain(reset_less=True)
        self.cd_hspi_tx = ClockDomain(reset_less=True)
        self.cd_hspi_sys = ClockDomain(reset_less=True)  # sys clock, never reset: FIFO pointers
        self.comb += [
            self.cd_hspi_rx.clk.eq(~pads.clk),
            self.cd_hspi_tx.clk.eq(pads.clk),
            self.cd_hspi_sys.clk.eq(ClockSignal("sys")),
        ]

        # Transaction counter: a ripple counter.  Bit 0 toggles on each CS_N
        # rising edge (domain ``hspi_cs``), bit i on each falling edge of bit
        # i-1 (domain ``hspi_cs<i>``, clocked by its complement).  Each
        # flip-flop's only input is its own output, so no path in these
        # domains goes from one flip-flop to another: CS_N is not on a
        # clock-capable pin and reaches the flip-flops through fabric
        # routing, and a synchronous incrementer on that clock failed a hold
        # check by placement luck (1.32 ns of clock skew against a 0.43 ns
        # carry path, Colorlight i5, docs/fpga.md).  The count settles a few
        # flip-flop delays after the edge, far inside Tcsi + Tcse.
        epoch_bits = [Signal(name=f"epoch{i}") for i in range(EPOCH_BITS)]
        epoch = Signal(EPOCH_BITS)
        self.comb += epoch.eq(Cat(*epoch_bits))
        for i, bit in enumerate(epoch_bits):
            name = "hspi_cs" if i == 0 else f"hspi_cs{i}"
            cd = ClockDomain(name, reset_less=True)
            setattr(self, f"cd_{name}", cd)
            self.comb += cd.clk.eq(pads.cs_n if i == 0 else ~epoch_bits[i - 1])
            sync = getattr(self.sync, name)
            sync += bit.eq(~bit)
            setattr(self.sync, name, sync)

        cmd_clocks = Mux(qpi, 2, 8)

        # Receiver (SCLK falling edges) ------------------------------------
        rx_fifo = AsyncFIFO(len(Cat(*[Signal(w) for _, w in rx_layout()])), fifo_depth)
        rx_fifo = self.rx_fifo = _rename(rx_fifo, write="hspi_rx", read="hspi_sys")
        # Initial value differs from the first epoch (0): the first clock of
        # the first transaction is recognised as such.
        rx_seen = Signal(EPOCH_BITS, reset=2**EPOCH_BITS - 1)
        rx_clocks = Signal(CLOCK_BITS)
        rx_pos = Signal(3)          # clock index within the current byte
        rx_sr = Signal(8)
        rx_in_cmd = Signal()
        rx_overrun = Signal()       # toggles on each lost byte

        first = Signal()
        pos = Signal(3)
        sr_in = Signal(8)
        sr_next = Signal(8)
        in_cmd = Signal()
        byte_done = Signal()
        din = pads.dq_i
        self.comb += [
            first.eq(rx_seen != epoch),
            pos.eq(Mux(first, 0, rx_pos)),
            sr_in.eq(Mux(first, 0, rx_sr)),
            in_cmd.eq(first | rx_in_cmd),
            If(qpi,
                sr_next.eq(Cat(din[0:4], sr_in[0:4]) if msb_first else Cat(sr_in[4:8], din[0:4])),
                byte_done.eq(pos == 1),
            ).Else(
                sr_next.eq(Cat(din[0], sr_in[0:7]) if msb_first else Cat(sr_in[1:8], din[0])),
                byte_done.eq(pos == 7),
            ),
            rx_fifo.din.eq(Cat(sr_next, in_cmd, epoch)),
            rx_fifo.we.eq(byte_done),
        ]
        self.sync.hspi_rx += [
            rx_seen.eq(epoch),
            If(first, rx_clocks.eq(1)).Elif(rx_clocks != (2**CLOCK_BITS - 1), rx_clocks.eq(rx_clocks + 1)),
            rx_pos.eq(Mux(byte_done, 0, pos + 1)),
            rx_sr.eq(sr_next),
            rx_in_cmd.eq(in_cmd & ~byte_done),
            If(byte_done & ~rx_fifo.writable, rx_overrun.eq(~rx_overrun)),
        ]
        rx_data = Signal(8)
        rx_first = Signal()
        rx_epoch = Signal(EPOCH_BITS)
        self.comb += [
            Cat(rx_data, rx_first, rx_epoch).eq(rx_fifo.dout),
            self.rx.valid.eq(rx_fifo.readable),
            self.rx.data.eq(rx_data),
            self.rx.sot.eq(rx_first),
            self.rx.epoch.eq(rx_epoch),
            rx_fifo.re.eq(self.rx.ready),
        ]

        # Transmitter (SCLK rising edges) ----------------------------------
        tx_fifo = AsyncFIFO(8 + EPOCH_BITS, fifo_depth)
        tx_fifo = self.tx_fifo = _rename(tx_fifo, write="hspi_sys", read="hspi_tx")
        self.comb += [
            tx_fifo.din.eq(Cat(self.tx.data, self.tx.epoch)),
            tx_fifo.we.eq(self.tx.valid),
            self.tx.ready.eq(tx_fifo.writable),
        ]
        tx_seen = Signal(EPOCH_BITS, reset=2**EPOCH_BITS - 1)
        tx_clocks = Signal(6)        # saturates once in the data phase
        tx_pos = Signal(3)
        tx_sr = Signal(8)
        tx_driving = Signal()
        tx_underrun = Signal()       # toggles on each missing byte
        dq_o = Signal(4)
        dq_oe = Signal(4)

        t_first = Signal()
        t_clock = Signal(6)
        data_start = Signal(6)
        in_data = Signal()
        head_data = Signal(8)
        head_epoch = Signal(EPOCH_BITS)
        head_ok = Signal()
        stale = Signal()
        t_pos = Signal(3)
        load = Signal()
        byte = Signal(8)
        self.comb += [
            t_first.eq(tx_seen != epoch),
            t_clock.eq(Mux(t_first, 0, tx_clocks)),
            data_start.eq(cmd_clocks + DUMMY_CLOCKS),
            in_data.eq(t_clock >= data_start),
            Cat(head_data, head_epoch).eq(tx_fifo.dout),
            head_ok.eq(tx_fifo.readable & (head_epoch == epoch)),
            stale.eq(tx_fifo.readable & (head_epoch != epoch)),
            t_pos.eq(Mux(t_clock == data_start, 0, tx_pos)),
            load.eq(in_data & (t_pos == 0)),
            byte.eq(Mux(load, Mux(head_ok, head_data, 0), tx_sr)),
            tx_fifo.re.eq(stale | (load & head_ok)),
        ]
        lsb_bit, msb_bit = byte[0], byte[7]
        lsn, msn = byte[0:4], byte[4:8]
        self.sync.hspi_tx += [
            tx_seen.eq(epoch),
            If(t_clock != 63, tx_clocks.eq(t_clock + 1)),
            If(in_data,
                tx_pos.eq(Mux(t_pos == Mux(qpi, 1, 7), 0, t_pos + 1)),
                If(qpi,
                    dq_o.eq(msn if msb_first else lsn),
                    tx_sr.eq(Cat(byte[4:8], byte[0:4]) if msb_first else Cat(byte[4:8], byte[0:4])),
                ).Else(
                    dq_o.eq(Cat(0, msb_bit if msb_first else lsb_bit, 0, 0)),
                    tx_sr.eq(Cat(0, byte[0:7]) if msb_first else Cat(byte[1:8], 0)),
                ),
                If(load & ~head_ok & tx_driving, tx_underrun.eq(~tx_underrun)),
                If(load & head_ok, tx_driving.eq(1)),
                dq_oe.eq(Mux(qpi, 0b1111, 0b0010) & Mux(head_ok | (tx_driving & ~t_first), 0b1111, 0)),
            ).Else(
                tx_pos.eq(0),
                tx_driving.eq(0),
                dq_oe.eq(0),
                dq_o.eq(0),
            ),
        ]
        # Released as soon as CS_N rises (no SCLK edge follows the last bit).
        self.comb += [pads.dq_o.eq(dq_o), pads.dq_oe.eq(Mux(pads.cs_n, 0, dq_oe))]

        # End of transaction (system clock) --------------------------------
        cs_sync = Signal(reset=1)
        epoch_sync = Signal(EPOCH_BITS)
        seen_sync = Signal(EPOCH_BITS)
        clocks_sync = Signal(CLOCK_BITS)
        self.specials += [
            MultiReg(pads.cs_n, cs_sync, reset=1),
            MultiReg(epoch, epoch_sync),
            MultiReg(rx_seen, seen_sync),
            MultiReg(rx_clocks, clocks_sync),
        ]
        prev_epoch = Signal(EPOCH_BITS)   # epoch of the transaction that just ended
        self.comb += prev_epoch.eq(epoch_sync - 1)
        cs_prev = Signal(reset=1)
        settle = Signal(3)
        end_fifo = stream.SyncFIFO(end_layout(), 4)
        self.end_fifo = end_fifo
        self.sync += [
            cs_prev.eq(cs_sync),
            If(cs_sync & ~cs_prev, settle.eq(4)).Elif(settle != 0, settle.eq(settle - 1)),
        ]
        self.comb += [
            end_fifo.sink.valid.eq(settle == 1),
            end_fifo.sink.epoch.eq(prev_epoch),
            end_fifo.sink.active.eq(seen_sync == prev_epoch),
            end_fifo.sink.clocks.eq(Mux(seen_sync == prev_epoch, clocks_sync, 0)),
            end_fifo.source.connect(self.end),
        ]

        # Clock-ratio violations, as pulses.
        for toggle, pulse in ((rx_overrun, self.overrun), (tx_underrun, self.underrun)):
            t_sync = Signal()
            t_prev = Signal()
            self.specials += MultiReg(toggle, t_sync)
            self.sync += t_prev.eq(t_sync)
            self.comb += pulse.eq(t_sync ^ t_prev)


def _rename(fifo, write, read):
    from migen import ClockDomainsRenamer
    return ClockDomainsRenamer({"write": write, "read": read})(fifo)
