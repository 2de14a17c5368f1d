/* TENS_LIN with one input column (batch 1) on the linear kernel
 * (sw/pcore/kernels/linear.pcore, OB = 1, NB = 1): each thread owns a block
 * of VW output neurons, its weight rows in its private memory; the input
 * column is in the shared memory and broadcast one element per clock.
 * Every weight is read from DDR once: the layer is bound by that read.
 * Compiled by sw/model/accel.py as described in layer.c.
 *
 * accel.py cuts the op into steps (docs/models.md, "Tiling"): a pass of up
 * to NP*NT output blocks and K tiles of KT inputs, the last one shorter or
 * not; the partial sums stay in the threads' accumulators from one K tile to
 * the next (first, mid..., then last).  The compiler arranges the weights so
 * that the N threads' rows of a step are one contiguous block: WA[N][KT][VW].
 */
#include <stdint.h>

/* The weight tiles of threads 0..N-1: KT x VW elements each, contiguous. */
void weights(uint32_t WA, int KT, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].linear::w(KT*VW)[:] <= DDR(WA)[0:N*KT*VW-1];
}

/* The last K tile's weights with the epilogue: per thread VW words over y
 * (the kernel's last writes it), the E epilogue elements (bias, scale,
 * offset as the kernel has them), then KT x VW weights, contiguous in the
 * private memory and in the arranged block WA[N][VW+E+KT*VW]: one transfer
 * instead of two, whatever the last tile's KT.  The cast (..+) runs on past
 * y into the epilogue and w. */
void weights_epilogue(uint32_t WA, int KT, int E, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].linear::y(VW+E+KT*VW+)[:] <= DDR(WA)[0:N*(VW+E+KT*VW)-1];
}

/* Inputs K0..K0+KT-1 of the column X, to PCOREs 0..NPU-1. */
void column(uint32_t X, int K0, int KT, int NPU)
{
	> PCORE(NPU)[*].linear::x(KT)[:] <= DDR(X)[K0:K0+KT-1];
}

void first(int N)
{
	> EXE_LOCKSTEP(linear::first, (N+NT-1)/NT, N < NT ? N : NT);
}

void mid(int N)
{
	> EXE_LOCKSTEP(linear::mid, (N+NT-1)/NT, N < NT ? N : NT);
}

void last(int N)
{
	> EXE_LOCKSTEP(linear::last, (N+NT-1)/NT, N < NT ? N : NT);
}

/* Outputs O0..O0+N*VW-1 of the column Y. */
void store(uint32_t Y, int O0, int N)
{
	> DDR(Y)[O0:O0+N*VW-1] <= PCORE(1).THREAD(NP*NT)[0:N-1].linear::y(VW)[:];
}

/* tanh: the kernel has shifted the result left by tanh_shift (saturating);
 * stream program 0 maps it through the tanh table on the way. */
void store_tanh(uint32_t Y, int O0, int N)
{
	> DDR(Y)[O0:O0+N*VW-1] <= PROC(0) <= PCORE(1).THREAD(NP*NT)[0:N-1].linear::y(VW)[:];
}
