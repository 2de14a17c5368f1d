"""The TensorEngine's scratch-pad (cores/tensor_engine/ports.py, ScratchPad):
writes are registered before the block RAM, so a read presented in the clock
of a write request returns the old word and one presented the clock after
returns the new one; element-port writes land in their 32-bit slice with
their byte enables, wide writes with theirs.  Migen's simulator, clock by
clock (a value the testbench sets before a ``yield`` is on the signal in the
clock that ``yield`` starts)."""

from migen.sim import run_simulation

from tensorsoc.cores.tensor_engine.ports import ScratchPad


def _run(word_bytes, body):
    dut = ScratchPad(64 * word_bytes, word_bytes)
    log = []
    run_simulation(dut, body(dut, log))
    return log


def _element_write(p, adr, dat, sel):
    yield p.wr_stb.eq(1)
    yield p.wr_adr.eq(adr)
    yield p.wr_dat.eq(dat)
    yield p.wr_sel.eq(sel)


def _element_read_from(p, adr):
    """A read request from this clock on, held until its acknowledge: its data."""
    yield p.rd_stb.eq(1)
    yield p.rd_adr.eq(adr)
    yield
    while True:
        yield
        if (yield p.rd_ack):
            yield p.rd_stb.eq(0)
            return (yield p.rd_dat)


def test_element_read_in_the_clock_of_a_write_returns_the_old_word():
    def body(dut, log):
        p = dut.port
        yield from _element_write(p, 5, 0x11223344, 0b1111)
        log.append(("read", (yield from _element_read_from(p, 5))))   # both requests in clock A
    log = _run(8, body)
    assert log == [("read", 0)]


def test_element_write_lands_a_clock_after_its_request():
    def body(dut, log):
        p = dut.port
        # clock A: write word 5 (slice 1 of wide word 2)
        yield from _element_write(p, 5, 0x11223344, 0b1111)
        yield
        log.append(("write ack", (yield p.wr_ack)))
        yield p.wr_stb.eq(0)
        # clock A+1 on: read it
        log.append(("next clock", (yield from _element_read_from(p, 5))))
        # bytes 0 and 2 of word 4, read from the clock after
        yield from _element_write(p, 4, 0xAABBCCDD, 0b0101)
        yield
        yield p.wr_stb.eq(0)
        log.append(("bytes", (yield from _element_read_from(p, 4))))
        log.append(("slice 1 kept", (yield from _element_read_from(p, 5))))
    log = _run(8, body)
    assert log == [("write ack", 1), ("next clock", 0x11223344), ("bytes", 0x00BB00DD),
                   ("slice 1 kept", 0x11223344)]


def test_wide_write_lands_a_clock_after_its_request():
    def body(dut, log):
        # clock A: write bytes 4-7 of wide word 3 and read it
        yield dut.wide.eq(1)
        yield dut.wide_wr_adr.eq(3)
        yield dut.wide_wr_dat.eq(0x0123456789ABCDEF)
        yield dut.wide_wr_be.eq(0b11110000)
        yield dut.wide_rd_adr.eq(3)
        yield
        yield dut.wide_wr_be.eq(0)
        yield
        log.append((yield dut.wide_rd_dat))    # the read of clock A
        yield
        log.append((yield dut.wide_rd_dat))    # the read of clock A+1
    assert _run(8, body) == [0, 0x0123456700000000]
