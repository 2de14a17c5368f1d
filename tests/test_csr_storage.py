"""cores/csr_storage.py: a write-only storage register holds what the CSR
bus writes and reads back as 0, beside a LiteX CSRStorage that reads back
its value (SoCConfig.csr_readback)."""

from migen import Module, run_simulation
from litex.soc.interconnect.csr import CSRStorage
from litex.soc.interconnect.csr_bus import CSRBank, Interface

from tensorsoc.cores.csr_storage import WriteOnlyStorage, storage_class


class _Regs(Module):
    def __init__(self):
        self.wide = WriteOnlyStorage(40)          # two CSR words
        self.rw = CSRStorage(32)
        self.submodules.bank = CSRBank([self.wide, self.rw], address=0,
                                       bus=Interface(data_width=32, address_width=14))


def test_write_only_storage_holds_the_value_and_reads_as_zero():
    dut = _Regs()
    seen = {}

    def bench():
        bus = dut.bank.bus
        yield from bus.write(0, 0xab)             # big-endian words: word 0 holds bits 39..32
        yield from bus.write(1, 0x12345678)
        yield from bus.write(2, 0xcafef00d)
        yield
        seen["wide"] = (yield dut.wide.storage)
        seen["rw"] = (yield dut.rw.storage)
        seen["reads"] = []
        for a in range(3):
            yield from bus.read(a)
            yield                                 # the bank's read data are registered
            seen["reads"].append((yield bus.dat_r))

    run_simulation(dut, bench())
    assert seen["wide"] == 0xab12345678
    assert seen["rw"] == 0xcafef00d
    assert seen["reads"] == [0, 0, 0xcafef00d]


def test_storage_class_follows_readback():
    assert storage_class(True) is CSRStorage
    assert storage_class(False) is WriteOnlyStorage
