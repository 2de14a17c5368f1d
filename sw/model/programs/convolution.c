/* TENS_CONV and TENS_LIN on the convolution kernel
 * (sw/pcore/kernels/convolution.pcore, NPIX = 1: one output pixel per thread).
 * Compiled by sw/model/accel.py as described in layer.c.
 *
 * The PCORE array is addressed as one PCORE of NP*NT threads,
 * PCORE(1).THREAD(NP*NT): private memory is linear in pcore*NT + thread, so
 * thread tau of a pass is thread tau%NT of PCORE tau/NT, and a pass covers up
 * to NP*NT consecutive output pixels (row-major).
 *
 * accel.py issues, for P output pixels in passes of NP*NT:
 *   tanh_table (tanh layers), stage (the input and the shared image, when
 *   they go to the scratch-pad), the shared constants of process space 0;
 *   for each pass i (process space i%2): its loads, exe, then (after pass 0)
 *   the shared constants of process space 1, then store of pass i-1;
 *   store of the last pass; done.
 * While kernel i runs, the engine stores pass i-1 and loads pass i+1: a
 * transfer waits only for a kernel of its own process space.
 */
#include <stdint.h>

/* Stream program 0 <= the model's tanh table (docs/tensor_semantics.md). */
void tanh_table(uint32_t TANH)
{
	> SPU <= DDR(TANH)[0:SPU_LOOKUP_SIZE-1];
}

/* ---- shared constants: once per process space ---- */

/* The arranged shared-memory image (coef[G][K][VW], then bias / scale /
 * offset; DataBlob in accel.py) of PCORE U, one contiguous transfer from the
 * model's constants or from their scratch-pad copy.  coef(IMAGE+) is not
 * bound-checked: it runs on into the epilogue vectors after coef. */
void image_ddr(int U, uint32_t IMG, int IMAGE)
{
	> PCORE(NP)[U].convolution::coef(IMAGE+)[:] <= DDR(IMG)[0:IMAGE-1];
}

void image_scratch(int U, uint32_t IMG, int IMAGE)
{
	> PCORE(NP)[U].convolution::coef(IMAGE+)[:] <= SCRATCH(IMG)[0:IMAGE-1];
}

/* Without an arranged image (weights computed at run time), the engine
 * rearranges the weights element by element, broadcast to PCOREs 0..NPU-1.
 * conv: W[KH][KW][CIN][COUT] is [K][G][VW], coef[g][k][l] = W[k][g][l]. */
void coef_conv(uint32_t W, int K, int G, int NPU)
{
	> FOR(I=0:G-1) PCORE(NPU)[*].convolution::coef[I][:][:] <= DDR(W,K,G,VW)[:][I][:];
}

/* lin: W[NO][NI] row-major, coef[g][k][l] = W[g*VW+l][k], W read in memory
 * order so that the source stays contiguous. */
void coef_lin(uint32_t W, int K, int G, int NPU)
{
	> FOR(I=0:G-1) FOR(L=0:VW-1) PCORE(NPU)[*].convolution::coef[I][:][L] <= DDR(W)[0:G*VW*K-1];
}

/* The bias replicated over the output pixels (BIAS == 1). */
void bias(uint32_t B, int CO, int NPU)
{
	> PCORE(NPU)[*].convolution::bias[:] <= DDR(B)[0:CO-1];
}

/* Batch-norm scale and offset (BN == 1): BN[2][CO]. */
void batchnorm(uint32_t BN, int CO, int NPU)
{
	> PCORE(NPU)[*].convolution::scale[:] <= DDR(BN)[0:CO-1];
	> PCORE(NPU)[*].convolution::offset[:] <= DDR(BN)[CO:2*CO-1];
}

/* ---- a pass: loads, kernel ---- */

/* conv: the im2col patches of output pixels OXA..OXA+N-1 of one output row
 * (threads TAU..TAU+N-1), from the HWC input X[H][W][C].  The window walks
 * C, KW, KH, then the output column OX.  Top/bottom padding: the bound check
 * of the H dimension (rows Y0..Y0+KH-1, Y0 = oy*SH - pad_top).  Left/right
 * padding: the overlapped group W(WO+, SW+) of the OX and KW dimensions,
 * whose offset (OX*SW + kx) must stay in 0..W-1 columns (kx from -PL).
 * Out-of-bound elements read 0. */
void patch_ddr(uint32_t X, int H, int W, int C, int KH, int KW, int SW, int PL, int WO, int Y0, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].convolution::patch(KH*KW*C)[:] <= DDR(X,H,W(WO+,SW+),C+)[Y0:Y0+KH-1][OX][-PL:KW-1-PL][:];
}

/* The same from the input's scratch-pad copy at X. */
void patch_scratch(uint32_t X, int H, int W, int C, int KH, int KW, int SW, int PL, int WO, int Y0, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].convolution::patch(KH*KW*C)[:] <= SCRATCH(X,H,W(WO+,SW+),C+)[Y0:Y0+KH-1][OX][-PL:KW-1-PL][:];
}

/* lin: input columns Q0..Q0+N-1 of X[NB][K] (a column is a pixel). */
void columns(uint32_t X, int NB, int K, int Q0, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].convolution::patch(K)[:] <= DDR(X,NB,K)[Q0:Q0+N-1][:];
}

/* One bias per output element (BIAS == 2): rows Q0..Q0+N-1 of B[P][CO]. */
void bias_pixels(uint32_t B, int CO, int Q0, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].convolution::bias(CO)[:] <= DDR(B)[Q0*CO:(Q0+N)*CO-1];
}

/* The kernel on the pass's N threads: whole PCOREs of NT threads, or N
 * threads of PCORE 0. */
void exe(int N)
{
	> EXE_LOCKSTEP(convolution::exe, (N+NT-1)/NT, N < NT ? N : NT);
}

/* ---- the pass's result: output rows Q0..Q0+N-1 of Y[P][CO] ---- */

void store(uint32_t Y, int CO, int Q0, int N)
{
	> DDR(Y)[Q0*CO:(Q0+N)*CO-1] <= PCORE(1).THREAD(NP*NT)[0:N-1].convolution::out(CO)[:];
}

/* tanh: the kernel has shifted the result left by tanh_shift (saturating);
 * stream program 0 maps it through the tanh table on the way. */
void store_tanh(uint32_t Y, int CO, int Q0, int N)
{
	> DDR(Y)[Q0*CO:(Q0+N)*CO-1] <= PROC(0) <= PCORE(1).THREAD(NP*NT)[0:N-1].convolution::out(CO)[:];
}
