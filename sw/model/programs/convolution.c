/* TENS_CONV and TENS_LIN on the convolution kernel
 * (sw/pcore/kernels/convolution.pcore, NPIX = 1: one output pixel per thread).
 * Compiled by sw/model/accel.py as described in layer.c.
 *
 * The PCORE array is addressed as one PCORE of NP*NT threads,
 * PCORE(1).THREAD(NP*NT): private memory is linear in pcore*NT + thread, so
 * thread tau of a pass is thread tau%NT of PCORE tau/NT, and a pass covers up
 * to NP*NT consecutive output pixels (row-major).
 *
 * accel.py cuts the op into steps (docs/models.md, "Tiling"): a pass of up
 * to NP*NT output pixels, a tile of output channels and, when a patch does
 * not fit, a tile of K.  It issues tanh_table (tanh layers) and stage (what
 * goes to the scratch-pad), then for each step i (process space i%2): the
 * shared constants when that space does not hold them yet, the loads, the
 * kernel(s), then the store of the step before.  While kernel i runs, the
 * engine stores step i-1 and loads step i+1: a transfer waits only for a
 * kernel of its own process space.
 */
#include <stdint.h>

/* Stream program 0 <= the model's tanh table (docs/tensor_semantics.md). */
void tanh_table(uint32_t TANH)
{
	> SPU <= DDR(TANH)[0:SPU_LOOKUP_SIZE-1];
}

/* ---- shared constants: once per process space ---- */

/* The arranged shared-memory image (coef[G][K][VW], then bias / scale /
 * offset; DataBlob in accel.py), broadcast to PCOREs 0..NPU-1 (a power of
 * 2), one contiguous transfer from the model's constants or from their
 * scratch-pad copy.  coef(IMAGE+) is not bound-checked: it runs on into the
 * epilogue vectors after coef. */
void image_ddr(uint32_t IMG, int IMAGE, int NPU)
{
	> PCORE(NPU)[*].convolution::coef(IMAGE+)[:] <= DDR(IMG)[0:IMAGE-1];
}

void image_scratch(uint32_t IMG, int IMAGE, int NPU)
{
	> PCORE(NPU)[*].convolution::coef(IMAGE+)[:] <= SCRATCH(IMG)[0:IMAGE-1];
}

/* Without an arranged image (weights computed at run time), the engine
 * rearranges the weights element by element, broadcast to PCOREs 0..NPU-1.
 * conv: W[KH][KW][CIN][COUT] is [K][G][VW], coef[g][k][l] = W[k][g][l]. */
void coef_conv(uint32_t W, int K, int G, int NPU)
{
	> FOR(I=0:G-1) PCORE(NPU)[*].convolution::coef[I][:][:] <= DDR(W,K,G,VW)[:][I][:];
}

/* A tile of them: the groups G0..G0+GT-1 (output channels (G0+i)*VW + l)
 * of the K tile of rows KY0..KY1, channels C0..C1, coef[i][(ky, kx, c)][l]
 * (W is an INT16 byte address: the groups start 2*G0*VW bytes in). */
void coef_conv_tile(uint32_t W, int KH, int KW, int C, int CO, int KY0, int KY1, int C0, int C1, int G0, int GT, int NPU)
{
	> FOR(I=0:GT-1) PCORE(NPU)[*].convolution::coef[I][:][:] <= DDR(W+2*G0*VW,KH,KW,C,CO/VW,VW)[KY0:KY1][:][C0:C1][I][:];
}

/* lin: W[NO][NI] row-major, coef[g][k][l] = W[g*VW+l][k], W read in memory
 * order so that the source stays contiguous. */
void coef_lin(uint32_t W, int K, int G, int NPU)
{
	> FOR(I=0:G-1) FOR(L=0:VW-1) PCORE(NPU)[*].convolution::coef[I][:][L] <= DDR(W)[0:G*VW*K-1];
}

/* A tile: coef[i][k][l] = W[(G0+i)*VW+l][K0+k], one weight row (contiguous
 * in DDR) per lane. */
void coef_lin_tile(uint32_t W, int NO, int NI, int K0, int K1, int G0, int GT, int NPU)
{
	> FOR(I=0:GT-1) FOR(L=0:VW-1) PCORE(NPU)[*].convolution::coef[I][:][L] <= DDR(W+2*G0*VW*NI,NO/VW,VW,NI)[I][L][K0:K1];
}

/* The bias of output channels CO0..CO0+CT-1, replicated over the output
 * pixels (BIAS == 1). */
void bias(uint32_t B, int CO0, int CT, int NPU)
{
	> PCORE(NPU)[*].convolution::bias[:] <= DDR(B)[CO0:CO0+CT-1];
}

/* Batch-norm scale and offset of channels CO0..CO0+CT-1 (BN == 1): BN[2][CO]. */
void batchnorm(uint32_t BN, int CO, int CO0, int CT, int NPU)
{
	> PCORE(NPU)[*].convolution::scale[:] <= DDR(BN)[CO0:CO0+CT-1];
	> PCORE(NPU)[*].convolution::offset[:] <= DDR(BN)[CO+CO0:CO+CO0+CT-1];
}

/* ---- a pass: loads, kernel ---- */

/* conv: the im2col patches of output pixels OXA..OXA+N-1 of one output row
 * (threads TAU..TAU+N-1), from the HWC input X[H][W][C]: the K tile of
 * kernel rows KY0..KY1 and input channels C0..C1 (the whole window: 0..KH-1,
 * 0..C-1).  The window walks C, KW, KH, then the output column OX.
 * Top/bottom padding: the bound check of the H dimension (rows
 * Y0+KY0..Y0+KY1, Y0 = oy*SH - pad_top).  Left/right padding: the
 * overlapped group W(WO+, SW+) of the OX and KW dimensions, whose offset
 * (OX*SW + kx) must stay in 0..W-1 columns (kx from -PL).  Out-of-bound
 * elements read 0. */
void patch_ddr(uint32_t X, int H, int W, int C, int KW, int SW, int PL, int WO, int Y0, int KY0, int KY1, int C0, int C1, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].convolution::patch((KY1-KY0+1)*KW*(C1-C0+1))[:] <= DDR(X,H,W(WO+,SW+),C+)[Y0+KY0:Y0+KY1][OX][-PL:KW-1-PL][C0:C1];
}

/* The same from the input's scratch-pad copy at X. */
void patch_scratch(uint32_t X, int H, int W, int C, int KW, int SW, int PL, int WO, int Y0, int KY0, int KY1, int C0, int C1, int OXA, int N, int TAU)
{
	> FOR(OX=OXA:OXA+N-1) PCORE(1).THREAD(NP*NT)[TAU:TAU+N-1].convolution::patch((KY1-KY0+1)*KW*(C1-C0+1))[:] <= SCRATCH(X,H,W(WO+,SW+),C+)[Y0+KY0:Y0+KY1][OX][-PL:KW-1-PL][C0:C1];
}

/* lin: inputs K0..K1 (the K tile) of columns Q0..Q0+N-1 of X[NB][K] (a
 * column is a pixel). */
void columns(uint32_t X, int NB, int K, int K0, int K1, int Q0, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].convolution::patch(K1-K0+1)[:] <= DDR(X,NB,K)[Q0:Q0+N-1][K0:K1];
}

/* One bias per output element (BIAS == 2): channels CO0..CO0+CT-1 of rows
 * Q0..Q0+N-1 of B[P][CO]. */
void bias_pixels(uint32_t B, int P, int CO, int CO0, int CT, int Q0, int N)
{
	> PCORE(1).THREAD(NP*NT)[0:N-1].convolution::bias(CT)[:] <= DDR(B,P,CO)[Q0:Q0+N-1][CO0:CO0+CT-1];
}

/* The kernel on the pass's N threads: whole PCOREs of NT threads, or N
 * threads of PCORE 0.  exe: the whole dot product and epilogue; first, mid,
 * finish: a K-tiled one (the accumulator carries the partial sum). */
void exe(int N)
{
	> EXE_LOCKSTEP(convolution::exe, (N+NT-1)/NT, N < NT ? N : NT);
}

void first(int N)
{
	> EXE_LOCKSTEP(convolution::first, (N+NT-1)/NT, N < NT ? N : NT);
}

void mid(int N)
{
	> EXE_LOCKSTEP(convolution::mid, (N+NT-1)/NT, N < NT ? N : NT);
}

void finish(int N)
{
	> EXE_LOCKSTEP(convolution::finish, (N+NT-1)/NT, N < NT ? N : NT);
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

/* A tile of output channels, CO0..CO0+CT-1, of those rows. */
void store_tile(uint32_t Y, int P, int CO, int CO0, int CT, int Q0, int N)
{
	> DDR(Y,P,CO)[Q0:Q0+N-1][CO0:CO0+CT-1] <= PCORE(1).THREAD(NP*NT)[0:N-1].convolution::out(CT)[:];
}

void store_tile_tanh(uint32_t Y, int P, int CO, int CO0, int CT, int Q0, int N)
{
	> DDR(Y,P,CO)[Q0:Q0+N-1][CO0:CO0+CT-1] <= PROC(0) <= PCORE(1).THREAD(NP*NT)[0:N-1].convolution::out(CT)[:];
}
