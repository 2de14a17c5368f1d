"""The stream processor (SPU): 4 lookup/interpolation programs.

Program ``n`` is ``SPU_LOOKUP_SIZE`` 16-bit outputs ``y_k`` at the inputs
``x_k = -32768 + 1024 k`` (docs/tensor_semantics.md, "Stream processor"):
``out = y_k + (((y_{k+1} - y_k) * f) >> 10)`` with ``u = x + 32768``,
``k = u >> 10``, ``f = u & 1023`` and the last segment flat.  A transfer whose
destination space is SPU loads the tables; PROC(n) streams every element
through program ``n`` at the element rate, in three pipeline stages: the
table read (``x`` and ``program`` in, both entries and ``f`` into
registers), the difference of the entries (into registers with ``y_k`` and
``f``), then the multiply and add (``y`` out combinationally from those
registers).  ``y`` is thus the output for the ``x`` of two clocks before.
``LATENCY`` is that number of clocks.

The read ports are asynchronous with their outputs registered, which yosys
maps to a block RAM's read (DP16KD, whose data comes late in its clock:
5.8 ns on the ECP5 at speed 6); the subtract is a stage of its own so that
it, not the multiply, follows that read (docs/fpga.md, "The stream
processor in three stages").
"""

from migen import *

from tensorsoc.spec import tensor_isa as isa

SHIFT = isa.SPU_SEGMENT_SHIFT
SIZE = isa.SPU_LOOKUP_SIZE
LATENCY = 2          # clocks from x to its y


class StreamProcessor(Module):
    def __init__(self):
        self.x = Signal(16)          # input element (int16 bits)
        self.program = Signal(2)
        self.y = Signal(16)          # output element: for the x of LATENCY clocks before
        self.we = Signal()           # table write (SPU destination)
        self.wadr = Signal(8)        # program * SIZE + entry
        self.wdat = Signal(16)

        # # #

        kbits = SIZE.bit_length() - 1
        assert 1 << kbits == SIZE and kbits + SHIFT == 16
        self.mem = Memory(16, isa.SPU_PROGRAMS * SIZE, name="te_spu")
        wr = self.mem.get_port(write_capable=True)
        r0 = self.mem.get_port(async_read=True)
        r1 = self.mem.get_port(async_read=True)
        self.specials += self.mem, wr, r0, r1

        u = Signal(16)
        k = Signal(kbits)
        k1 = Signal(kbits)
        f = Signal((SHIFT + 1, True))
        f_r = Signal((SHIFT + 1, True))
        y0 = Signal((16, True))
        y1 = Signal((16, True))
        d = Signal((17, True))
        d_r = Signal((17, True))
        y0_r = Signal((16, True))
        f_r2 = Signal((SHIFT + 1, True))
        prod = Signal((17 + SHIFT + 1, True))
        step = Signal((17 + 1, True))
        self.comb += [
            wr.adr.eq(self.wadr), wr.dat_w.eq(self.wdat), wr.we.eq(self.we),
            u.eq(self.x ^ 0x8000),
            k.eq(u[SHIFT:]),
            k1.eq(Mux(k == SIZE - 1, k, k + 1)),
            f.eq(u[:SHIFT]),
            r0.adr.eq(Cat(k, self.program)),
            r1.adr.eq(Cat(k1, self.program)),
        ]
        # stage 1: the table read
        self.sync += [y0.eq(r0.dat_r), y1.eq(r1.dat_r), f_r.eq(f)]
        # stage 2: the difference
        self.comb += d.eq(y1 - y0)
        self.sync += [d_r.eq(d), y0_r.eq(y0), f_r2.eq(f_r)]
        # stage 3: the interpolation
        self.comb += [
            prod.eq(d_r * f_r2),
            step.eq(prod[SHIFT:]),          # arithmetic shift: floor
            self.y.eq(y0_r + step),
        ]
