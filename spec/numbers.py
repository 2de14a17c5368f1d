"""Number formats and the stream processor's tanh table, as specifications.

Data are ``DATA_BITS``-bit two's-complement fixed point, Q(16-frac).frac,
with ``frac`` chosen per model (``frac_bits``).  The compiler (quantising
constants and inputs, writing the tanh table) and the golden model each
implement these rules; tests/test_spec_numbers.py checks that they agree.

Quantisation of a real value ``r`` to Q.frac
    ``q = floor(r * 2**frac + 0.5)`` (round half up), then saturated to
    [-2**(DATA_BITS-1), 2**(DATA_BITS-1) - 1].

The stream processor (SPU) evaluates a piecewise-linear function of a
``DATA_BITS``-bit input from a table of ``SPU_LOOKUP_SIZE`` entries: entry k
is the value at input ``-2**(DATA_BITS-1) + k * 2**SPU_SEGMENT_SHIFT``.

tanh on Q.frac data
    The value is first shifted left (saturating) by
    ``tanh_shift = max(0, DATA_BITS - 1 - TANH_RANGE_LOG2 - frac)`` bits, so
    that the real range [-2**TANH_RANGE_LOG2, 2**TANH_RANGE_LOG2) covers the
    whole input range of the table when Q.frac allows it.  Entry k of the
    table is the quantisation (above) of ``tanh(x_k)``, with
    ``x_k = (-2**(DATA_BITS-1) + k * 2**SPU_SEGMENT_SHIFT) / 2**(frac + tanh_shift)``.
"""

DATA_BITS = 16
ELEMENT_BYTES = DATA_BITS // 8    # bytes of one element in memory (DDR, the PCOREs, the host windows)
SPU_LOOKUP_SIZE = 64          # 16-bit entries per stream program
SPU_SEGMENT_SHIFT = 10        # 2**16 input values / 64 segments = 2**10
TANH_RANGE_LOG2 = 2           # the tanh table spans [-4, 4): tanh(4) = 1 - 7e-4
