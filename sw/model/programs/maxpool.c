/* TENS_MAXPOOL on the maxpool kernel (sw/pcore/kernels/maxpool.pcore,
 * NPIX = 1), the same step structure as convolution.c: passes of NP*NT
 * output pixels, one per thread of PCORE(1).THREAD(NP*NT), and tiles of
 * channels when a window does not fit a thread's private memory,
 * alternating between the process spaces (loads of step i, exe, store of
 * step i-1).
 * Compiled by sw/model/accel.py as described in layer.c.
 */
#include <stdint.h>

/* The windows (kernel rows KY0..KY1, channels C0..C1; the whole window:
 * 0..KH-1, 0..C-1) of output pixels OXA..OXA+N-1 of one output row
 * (threads TAU..TAU+N-1) of X[H][W][C], walked as in convolution.c's
 * patch_ddr; the padding reads -32768, below every value. */
void window_ddr(uint32_t X, int H, int W, int C, int KW, int SW, int PL, int WO, int Y0, int KY0, int KY1, int C0, int C1, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].maxpool::win((KY1-KY0+1)*KW*(C1-C0+1))[:] <= PAD(-32768) DDR(X,H,W(WO+,SW+),C+)[Y0+KY0:Y0+KY1][OX][-PL:KW-1-PL][C0:C1];
}

/* The same from the input's scratch-pad copy at X (overlapping windows). */
void window_scratch(uint32_t X, int H, int W, int C, int KW, int SW, int PL, int WO, int Y0, int KY0, int KY1, int C0, int C1, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].maxpool::win((KY1-KY0+1)*KW*(C1-C0+1))[:] <= PAD(-32768) SCRATCH(X,H,W(WO+,SW+),C+)[Y0+KY0:Y0+KY1][OX][-PL:KW-1-PL][C0:C1];
}

void exe(int N)
{
	> EXE_LOCKSTEP(maxpool::exe, (N+NT-1)/NT, N < NT ? N : NT);
}

/* Row-tiled windows: the running maximum in a register (first, mid..., finish). */
void first(int N)
{
	> EXE_LOCKSTEP(maxpool::first, (N+NT-1)/NT, N < NT ? N : NT);
}

void mid(int N)
{
	> EXE_LOCKSTEP(maxpool::mid, (N+NT-1)/NT, N < NT ? N : NT);
}

void finish(int N)
{
	> EXE_LOCKSTEP(maxpool::finish, (N+NT-1)/NT, N < NT ? N : NT);
}

/* Output rows Q0..Q0+N-1 of Y[P][C]. */
void store(uint32_t Y, int C, int Q0, int N)
{
	> DDR(Y)[Q0*C:(Q0+N)*C-1] <= PCORE(1).THREAD(NP*NT)[0:N-1].maxpool::out(C)[:];
}

/* A tile of channels, C0..C1, of those rows. */
void store_tile(uint32_t Y, int P, int C, int C0, int C1, int Q0, int N)
{
	> DDR(Y,P,C)[Q0:Q0+N-1][C0:C1] <= PCORE(1).THREAD(NP*NT)[0:N-1].maxpool::out(C1-C0+1)[:];
}
