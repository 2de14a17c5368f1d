"""Control registers that the firmware only writes.

``storage_class(readback)`` is LiteX's ``CSRStorage`` when ``readback``,
else ``WriteOnlyStorage``: the same register, address and fields,
whose words read as 0 on the CSR bus.  A storage register's read-back is
a 32-bit input of its CSR bank's read multiplexer per word; the host
port's twelve of them took about 300 LUT positions of the Colorlight i5's
SoC (``SoCConfig.csr_readback``, docs/fpga.md "Write-only control
registers").  The firmware never reads these registers back (its reads
are the status registers'), so nothing it does changes.
"""

from litex.soc.interconnect.csr import CSRStorage


class WriteOnlyStorage(CSRStorage):
    """A ``CSRStorage`` whose CSR words read as 0: ``storage`` holds what
    was written, as in LiteX's, and the bank's read multiplexer sees a
    constant, which synthesis folds away."""

    def do_finalize(self, busword, ordering):
        CSRStorage.do_finalize(self, busword, ordering)
        # Migen's combinational statements run in order: this assignment
        # replaces the read-back of ``storage`` made above.
        self.comb += [sc.w.eq(0) for sc in self.simple_csrs]


def storage_class(readback):
    """``CSRStorage`` (``readback``) or ``WriteOnlyStorage``.  The caller
    constructs it in the assignment that names it (``self.x = Storage(..)``):
    LiteX takes a register's name from that statement."""
    return CSRStorage if readback else WriteOnlyStorage
