"""The host port's write queue (cores/host_spi/core.py WriteQueue) in front of
LiteX's Wishbone DMA writer, on a bus that acknowledges late: entries are data
words and the addresses of the words behind them; each word must land at its
transaction's address plus its place in it, also with several transactions
queued at once (a failed write's words are written, and the next write may
start before they are: docs/host_protocol.md, rule 7).  Each test runs the
queue with and without its output register (``pipe``,
SoCConfig.host_write_pipe)."""

import random

import pytest
from migen import Module, passive, run_simulation
from litex.soc.cores.dma import WishboneDMAWriter
from litex.soc.interconnect import wishbone

from tensorsoc.cores.host_spi.core import WriteQueue


class Bench(Module):
    def __init__(self, depth, pipe):
        self.bus = wishbone.Interface(data_width=32, adr_width=30)
        self.submodules.queue = WriteQueue(depth, pipe=pipe)
        self.submodules.dma = WishboneDMAWriter(self.bus, endianness="big")
        self.comb += self.queue.source.connect(self.dma.sink)


@pytest.fixture(params=[False, True], ids=["fifo", "registered"])
def pipe(request):
    return request.param


def run(transactions, pipe, depth=64, ack_after=0, seed=1):
    """Queue ``transactions`` ((word address, [words]) each, an address
    entry in front of each one's words), the bus acknowledging nothing
    before clock ``ack_after`` and then each cycle after 0-3 clocks.
    Returns the bus writes [(address, data)] in order, and the most
    entries the queue held (its FIFO's level and its output register)."""
    dut = Bench(depth, pipe)
    rng = random.Random(seed)
    writes, peak, held = [], [0], [0]
    entries = []
    for adr, words in transactions:
        entries.append((1, adr))
        entries += [(0, w) for w in words]

    def producer():
        for is_addr, data in entries:
            yield dut.queue.sink.valid.eq(1)
            yield dut.queue.sink.is_addr.eq(is_addr)
            yield dut.queue.sink.data.eq(data)
            yield
            while not (yield dut.queue.sink.ready):
                yield
        yield dut.queue.sink.valid.eq(0)

    @passive
    def memory():
        clock = 0
        while True:
            peak[0] = max(peak[0], (yield dut.queue.level) + (yield dut.queue.held))
            held[0] = max(held[0], (yield dut.queue.held))
            if (yield dut.bus.cyc) and (yield dut.bus.stb):
                # Wishbone: the master holds the request until the
                # acknowledge, whatever the wait.
                req = ((yield dut.bus.we), (yield dut.bus.adr), (yield dut.bus.dat_w))
                # The host port tells the firmware a write is in memory
                # on ``drained``: never while a word waits for the bus.
                assert not (yield dut.queue.drained), f"clock {clock}: drained with a write pending"
                for _ in range(max(0, ack_after - clock) + rng.randrange(4)):
                    yield
                    clock += 1
                    peak[0] = max(peak[0], (yield dut.queue.level) + (yield dut.queue.held))
                    now = ((yield dut.bus.we), (yield dut.bus.adr), (yield dut.bus.dat_w))
                    assert (yield dut.bus.cyc) and (yield dut.bus.stb) and now == req, \
                        f"clock {clock}: the request {req} changed to {now} before its acknowledge"
                assert req[0], f"clock {clock}: a read from the write queue's DMA"
                writes.append(req[1:])
                yield dut.bus.ack.eq(1)
                yield
                yield dut.bus.ack.eq(0)
            yield
            clock += 1

    drained = []

    def waiter():
        total = sum(len(w) for _, w in transactions)
        for _ in range(ack_after + 10 * total + 100):
            if len(writes) == total:
                break
            yield
        for _ in range(3):      # the last write's acknowledge, then the DMA's sink
            yield
        drained.append((yield dut.queue.drained))

    run_simulation(dut, [producer(), memory(), waiter()])
    assert drained == [1], "every word written, and the queue not drained"
    if ack_after:
        # the bus stalled with words queued: the first waited in the output register, if there is one
        assert held[0] == int(pipe)
    return writes, peak[0]


def expected(transactions):
    return [(adr + i, w) for adr, words in transactions for i, w in enumerate(words)]


def test_one_transaction_lands_at_consecutive_addresses(pipe):
    tr = [(0x1000, [0x11111111, 0x22222222, 0x33333333])]
    writes, _ = run(tr, pipe)
    assert writes == expected(tr)


@pytest.mark.parametrize("seed", [1, 2])
def test_transactions_queued_together_keep_their_addresses(seed, pipe):
    """Three transactions in the queue at once (the bus stalls until all
    their entries are in), the second and third of one word."""
    tr = [(0x2000, [1, 2, 3, 4]), (0x0040, [5]), (0x3ffffff0, [6, 7])]
    writes, peak = run(tr, pipe, ack_after=40, seed=seed)
    assert peak >= 9, "the transactions were not all in the queue together"
    assert writes == expected(tr)


def test_a_whole_chunk_and_its_address_fit(pipe):
    """64 words behind their address, with the bus stalled until all are
    in: the address leaves the queue at once (into the address counter),
    the 64 words wait in it (the first in its output register, when it
    has one)."""
    tr = [(0x4000, list(range(1000, 1064)))]
    writes, peak = run(tr, pipe, ack_after=200)
    assert peak == 64
    assert writes == expected(tr)
