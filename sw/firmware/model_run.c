/* The software path of model execution: every op of the model image in plain
 * C on the MCORE, with the fixed-point arithmetic of
 * verification/golden/fixedpoint.py (wrapping 32-bit accumulator, round-half-up
 * shifts, 16-bit saturation, the bias + batch-norm + activation epilogue, tanh
 * by the stream processor's table interpolation).  It is the baseline the
 * TensorEngine + PCORE path is measured against: a compute op whose program
 * is in the image's accelerator section runs there instead (accel.c). */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "model_image.h"
#include "model_run.h"
#include "accel.h"
#include "platform.h"
#include "tensorsoc_config.h"

#define SPU_SIZE 64
#define SPU_SHIFT 10
#define MAX_CHANNELS 1024

typedef struct {
	const volatile uint32_t *w;   /* the tensor-table entry */
	volatile int16_t *data;
	uint32_t dims[4];
	uint32_t ndim;
} tensor_t;

static const volatile uint32_t *payload_of(const volatile uint32_t *image)
{
	return image + MODEL_IMAGE_HEADER_SIZE / 4;
}

static uint32_t section(const volatile uint32_t *image, int word)
{
	return payload_of(image)[word];
}

static const volatile uint32_t *tensor_entry(const volatile uint32_t *image, uint32_t i)
{
	const volatile uint8_t *p = (const volatile uint8_t *)payload_of(image);
	return (const volatile uint32_t *)(p + section(image, MODEL_SECTION_W_TENSOR_TABLE)) + i * MODEL_TENSOR_WORDS;
}

static const volatile uint32_t *op_entry(const volatile uint32_t *image, uint32_t i)
{
	const volatile uint8_t *p = (const volatile uint8_t *)payload_of(image);
	return (const volatile uint32_t *)(p + section(image, MODEL_SECTION_W_OP_TABLE)) + i * MODEL_OP_WORDS;
}

static volatile uint8_t *region_base(const volatile uint32_t *image, uint32_t region)
{
	switch (region) {
	case MODEL_REGION_CONST:
		return (volatile uint8_t *)payload_of(image) + section(image, MODEL_SECTION_W_CONSTS);
	case MODEL_REGION_INPUT:
		return (volatile uint8_t *)TENSOR_WINDOW_BASE;
	case MODEL_REGION_ARENA:
		return (volatile uint8_t *)MAIN_RAM_BASE + section(image, MODEL_SECTION_W_ARENA_BASE);
	}
	return 0;
}

static void tensor(const volatile uint32_t *image, uint32_t i, tensor_t *t)
{
	t->w = tensor_entry(image, i);
	t->data = (volatile int16_t *)(region_base(image, t->w[MODEL_TENSOR_W_REGION]) + t->w[MODEL_TENSOR_W_OFFSET]);
	t->ndim = t->w[MODEL_TENSOR_W_NDIM];
	for (int d = 0; d < 4; d++)
		t->dims[d] = t->w[MODEL_TENSOR_W_DIM0 + d];
}

int model_validate(const volatile uint32_t *image)
{
	uint32_t payload = image[MODEL_IMAGE_W_PAYLOAD_LENGTH];
	uint32_t nt = section(image, MODEL_SECTION_W_N_TENSORS), no = section(image, MODEL_SECTION_W_N_OPS);
	if (payload < 4 * MODEL_SECTION_WORDS ||
	    section(image, MODEL_SECTION_W_TENSOR_WORDS) != MODEL_TENSOR_WORDS ||
	    section(image, MODEL_SECTION_W_OP_WORDS) != MODEL_OP_WORDS) {
		printf("server: model rejected: table entry sizes differ from this firmware's\n");
		return -1;
	}
	if (section(image, MODEL_SECTION_W_TENSOR_TABLE) + 4 * MODEL_TENSOR_WORDS * nt > payload ||
	    section(image, MODEL_SECTION_W_OP_TABLE) + 4 * MODEL_OP_WORDS * no > payload ||
	    section(image, MODEL_SECTION_W_CONSTS) + section(image, MODEL_SECTION_W_CONST_BYTES) > payload) {
		printf("server: model rejected: a table lies outside the image\n");
		return -1;
	}
	uint32_t arena_end = MAIN_RAM_BASE + section(image, MODEL_SECTION_W_ARENA_BASE) +
			     section(image, MODEL_SECTION_W_ARENA_BYTES);
	if (arena_end > MODEL_WINDOW_BASE) {
		printf("server: model rejected: its arena ends at 0x%08lx, past the model window\n", (unsigned long)arena_end);
		return -1;
	}
	for (uint32_t i = 0; i < nt; i++) {
		const volatile uint32_t *t = tensor_entry(image, i);
		if (t[MODEL_TENSOR_W_REGION] > MODEL_REGION_ARENA) {
			printf("server: model rejected: tensor %lu has region %lu\n", (unsigned long)i,
			       (unsigned long)t[MODEL_TENSOR_W_REGION]);
			return -1;
		}
	}
	for (uint32_t i = 0; i < no; i++) {
		const volatile uint32_t *o = op_entry(image, i);
		for (int k = MODEL_OP_W_RES; k <= MODEL_OP_W_BATCH; k++)
			if (o[k] != MODEL_NONE && o[k] >= nt) {
				printf("server: model rejected: op %lu names tensor %lu of %lu\n", (unsigned long)i,
				       (unsigned long)o[k], (unsigned long)nt);
				return -1;
			}
		if (o[MODEL_OP_W_OPCODE] < MODEL_OPCODE_STREAM_IN || o[MODEL_OP_W_OPCODE] > MODEL_OPCODE_MAXPOOL) {
			printf("server: model rejected: op %lu has opcode %lu\n", (unsigned long)i,
			       (unsigned long)o[MODEL_OP_W_OPCODE]);
			return -1;
		}
	}
	/* Index the accelerator programs and load the kernels now, with the
	 * model, not in the first inference's time. */
	accel_kernels_resident(image);
	return 0;
}

const volatile void *model_output(const volatile uint32_t *image)
{
	return region_base(image, MODEL_REGION_ARENA) + section(image, MODEL_SECTION_W_OUTPUT_OFFSET);
}

/* -- fixed-point arithmetic (verification/golden/fixedpoint.py) ------------ */

static inline int32_t sat16(int64_t x)
{
	return x > 32767 ? 32767 : x < -32768 ? -32768 : (int32_t)x;
}

static inline int64_t rshift_round(int64_t x, uint32_t s)
{
	return s ? (x + ((int64_t)1 << (s - 1))) >> s : x;
}

static inline int32_t shl_sat(int32_t x, uint32_t s)
{
	if (s > 16)
		s = 16;
	return sat16((int64_t)x << s);
}

static int32_t spu_eval(const volatile int16_t *table, int32_t v)
{
	uint32_t u = ((uint32_t)v & 0xffff) ^ 0x8000;
	uint32_t k = u >> SPU_SHIFT, f = u & ((1u << SPU_SHIFT) - 1);
	int32_t y0 = table[k], y1 = table[k + 1 < SPU_SIZE ? k + 1 : SPU_SIZE - 1];
	return y0 + (((y1 - y0) * (int32_t)f) >> SPU_SHIFT);
}

typedef struct {
	uint32_t frac, flags, act, tanh_shift;
	tensor_t bias, batch;
	const volatile int16_t *tanh;
} epilogue_t;

/* acc for output element `index` of channel `ch` (bias index for a
 * replicated bias; otherwise the output's own index). */
static int16_t epilogue(const epilogue_t *e, uint32_t acc, uint32_t ch, uint32_t index)
{
	if (e->flags & MODEL_FLAG_BIAS) {
		int32_t b = e->bias.data[(e->flags & MODEL_FLAG_REPL_BIAS) ? ch : index];
		acc += (uint32_t)b << e->frac;          /* wraps like the accumulator */
	}
	int32_t y = sat16(rshift_round((int32_t)acc, e->frac));
	if (e->flags & MODEL_FLAG_BATCH_NORM) {
		uint32_t c = e->batch.dims[0];
		y = sat16(rshift_round((int64_t)y * e->batch.data[ch], e->frac));
		y = sat16((int64_t)y + e->batch.data[c + ch]);
	}
	if (e->act == MODEL_ACT_RELU && y < 0)
		y = 0;
	else if (e->act == MODEL_ACT_TANH)
		y = spu_eval(e->tanh, shl_sat(y, e->tanh_shift));
	return (int16_t)y;
}

static void epilogue_setup(const volatile uint32_t *image, const volatile uint32_t *op, epilogue_t *e)
{
	e->frac = section(image, MODEL_SECTION_W_FRAC_BITS);
	e->flags = op[MODEL_OP_W_FLAGS];
	e->act = op[MODEL_OP_W_ACT];
	e->tanh_shift = op[MODEL_OP_W_TANH_SHIFT];
	if (e->flags & MODEL_FLAG_BIAS)
		tensor(image, op[MODEL_OP_W_BIAS], &e->bias);
	if (e->flags & MODEL_FLAG_BATCH_NORM)
		tensor(image, op[MODEL_OP_W_BATCH], &e->batch);
	e->tanh = e->act == MODEL_ACT_TANH ?
		(const volatile int16_t *)(region_base(image, MODEL_REGION_CONST) + op[MODEL_OP_W_TANH_TABLE]) : 0;
}

/* -- ops -------------------------------------------------------------------- */

static uint32_t acc_buf[MAX_CHANNELS];

/* x (H, W, Cin) channel-contiguous; w (KH, KW, Cin, Cout) row-first; y (Ho, Wo, Cout). */
static int op_conv(const volatile uint32_t *image, const volatile uint32_t *op)
{
	tensor_t x, w, y;
	epilogue_t e;
	tensor(image, op[MODEL_OP_W_SRC_B], &x);
	tensor(image, op[MODEL_OP_W_SRC_A], &w);
	tensor(image, op[MODEL_OP_W_RES], &y);
	epilogue_setup(image, op, &e);
	uint32_t H = x.dims[0], W = x.dims[1], C = x.dims[2];
	uint32_t KH = w.dims[0], KW = w.dims[1], CO = w.dims[3];
	uint32_t HO = y.dims[0], WO = y.dims[1];
	uint32_t sh = op[MODEL_OP_W_STRIDE_H], sw = op[MODEL_OP_W_STRIDE_W];
	int32_t pt = op[MODEL_OP_W_PAD_TOP], pl = op[MODEL_OP_W_PAD_LEFT];
	if (CO > MAX_CHANNELS)
		return -1;
	for (uint32_t oh = 0; oh < HO; oh++)
		for (uint32_t ow = 0; ow < WO; ow++) {
			memset(acc_buf, 0, CO * sizeof acc_buf[0]);
			for (uint32_t kh = 0; kh < KH; kh++) {
				int32_t ih = (int32_t)(oh * sh + kh) - pt;
				if (ih < 0 || ih >= (int32_t)H)
					continue;           /* zero padding */
				for (uint32_t kw = 0; kw < KW; kw++) {
					int32_t iw = (int32_t)(ow * sw + kw) - pl;
					if (iw < 0 || iw >= (int32_t)W)
						continue;
					const volatile int16_t *xp = x.data + ((uint32_t)ih * W + (uint32_t)iw) * C;
					const volatile int16_t *wp = w.data + (kh * KW + kw) * C * CO;
					for (uint32_t ci = 0; ci < C; ci++) {
						int32_t xv = xp[ci];
						const volatile int16_t *wr = wp + ci * CO;
						for (uint32_t co = 0; co < CO; co++)
							acc_buf[co] += (uint32_t)(xv * wr[co]);
					}
				}
			}
			uint32_t base = (oh * WO + ow) * CO;
			for (uint32_t co = 0; co < CO; co++)
				y.data[base + co] = epilogue(&e, acc_buf[co], co, base + co);
		}
	return 0;
}

/* w (n_out, n_in) row-first; x (n_in, n_b) column-major (or (h, w, c)
 * flattened, which moves no data); y (n_out, n_b) column-major. */
static int op_lin(const volatile uint32_t *image, const volatile uint32_t *op)
{
	tensor_t x, w, y;
	epilogue_t e;
	tensor(image, op[MODEL_OP_W_SRC_B], &x);
	tensor(image, op[MODEL_OP_W_SRC_A], &w);
	tensor(image, op[MODEL_OP_W_RES], &y);
	epilogue_setup(image, op, &e);
	uint32_t NO = w.dims[0], NI = w.dims[1], NB = y.dims[1];
	for (uint32_t b = 0; b < NB; b++)
		for (uint32_t o = 0; o < NO; o++) {
			const volatile int16_t *wr = w.data + o * NI, *xc = x.data + b * NI;
			uint32_t acc = 0;
			for (uint32_t i = 0; i < NI; i++)
				acc += (uint32_t)((int32_t)wr[i] * xc[i]);
			y.data[b * NO + o] = epilogue(&e, acc, o, b * NO + o);
		}
	return 0;
}

/* x (H, W, C), y (Ho, Wo, C); padding reads as minus infinity. */
static int op_maxpool(const volatile uint32_t *image, const volatile uint32_t *op)
{
	tensor_t x, y;
	tensor(image, op[MODEL_OP_W_SRC_A], &x);
	tensor(image, op[MODEL_OP_W_RES], &y);
	uint32_t H = x.dims[0], W = x.dims[1], C = x.dims[2], HO = y.dims[0], WO = y.dims[1];
	uint32_t KH = op[MODEL_OP_W_KERNEL_H], KW = op[MODEL_OP_W_KERNEL_W];
	uint32_t sh = op[MODEL_OP_W_STRIDE_H], sw = op[MODEL_OP_W_STRIDE_W];
	int32_t pt = op[MODEL_OP_W_PAD_TOP], pl = op[MODEL_OP_W_PAD_LEFT];
	for (uint32_t oh = 0; oh < HO; oh++)
		for (uint32_t ow = 0; ow < WO; ow++)
			for (uint32_t c = 0; c < C; c++) {
				int32_t m = -32768;
				for (uint32_t kh = 0; kh < KH; kh++) {
					int32_t ih = (int32_t)(oh * sh + kh) - pt;
					for (uint32_t kw = 0; kw < KW; kw++) {
						int32_t iw = (int32_t)(ow * sw + kw) - pl;
						if (ih < 0 || ih >= (int32_t)H || iw < 0 || iw >= (int32_t)W)
							continue;
						int32_t v = x.data[((uint32_t)ih * W + (uint32_t)iw) * C + c];
						if (v > m)
							m = v;
					}
				}
				y.data[(oh * WO + ow) * C + c] = (int16_t)m;
			}
	return 0;
}

/* Host-side data (padded lanes not sent) <-> memory layout (padded lanes 0).
 * Lanes are innermost in memory, so groups of `vw` elements carry `vw - pad`
 * host values. */
static void stream_in(volatile int16_t *dst, const volatile int16_t *src, uint32_t elements, uint32_t vw, uint32_t pad)
{
	if (!pad) {
		if (dst != src)
			for (uint32_t i = 0; i < elements; i++)
				dst[i] = src[i];
		return;
	}
	/* Backwards: dst may be src itself (the tensor window). */
	uint32_t groups = elements / vw, keep = vw - pad;
	for (uint32_t g = groups; g-- > 0;) {
		for (uint32_t l = vw; l-- > keep;)
			dst[g * vw + l] = 0;
		for (uint32_t l = keep; l-- > 0;)
			dst[g * vw + l] = src[g * keep + l];
	}
}

static void stream_out(volatile int16_t *dst, const volatile int16_t *src, uint32_t elements, uint32_t vw, uint32_t pad)
{
	uint32_t keep = pad ? vw - pad : vw, n = 0;
	for (uint32_t i = 0; i < elements; i++)
		if (!pad || i % vw < keep)
			dst[n++] = src[i];
}

static uint32_t elements_of(const tensor_t *t)
{
	uint32_t n = 1;
	for (uint32_t d = 0; d < t->ndim; d++)
		n *= t->dims[d];
	return n;
}

/* Records layer `layer`'s time (server's per-layer console line, RTimings). */
static void record_layer(uint32_t layer, uint32_t i, uint32_t opcode, uint64_t cycles, uint8_t why,
			 uint32_t *timings_us, model_layer_t *layers, uint32_t max_layers)
{
	if (layer == MODEL_NONE || layer >= max_layers)
		return;
	timings_us[layer] = (uint32_t)((cycles + TSOC_SYS_CLK_FREQ / 2000000) / (TSOC_SYS_CLK_FREQ / 1000000));
	if (layers) {
		layers[layer].op = (uint16_t)i;
		layers[layer].opcode = (uint8_t)opcode;
		layers[layer].cycles = cycles > 0xffffffffu ? 0xffffffffu : (uint32_t)cycles;
		layers[layer].why = why;
	}
}

static int is_compute(uint32_t opcode)
{
	return opcode == MODEL_OPCODE_CONV || opcode == MODEL_OPCODE_LIN || opcode == MODEL_OPCODE_MAXPOOL;
}

/* A constant that only accelerated layers read is stored once, arranged in
 * the accelerator section (sw/model/compiler.py compile_report): its
 * memory-layout offset is MODEL_NONE, and the software path cannot run an
 * op that reads it. */
static int constants_left_out(const volatile uint32_t *image, const volatile uint32_t *op)
{
	for (int k = MODEL_OP_W_SRC_A; k <= MODEL_OP_W_BATCH; k++) {
		if (op[k] == MODEL_NONE)
			continue;
		const volatile uint32_t *t = tensor_entry(image, op[k]);
		if (t[MODEL_TENSOR_W_REGION] == MODEL_REGION_CONST && t[MODEL_TENSOR_W_OFFSET] == MODEL_NONE)
			return 1;
	}
	return 0;
}

#define QUEUE_MAX ACCEL_QUEUE_MAX

/* The ops from `i` on, for accel_run_queued: op i+k's program while they
 * are compute ops with programs (why: why op i has none). */
struct run_ctx {
	const volatile uint32_t *image;
	uint32_t i, no;
	uint8_t *why;
};

static const volatile uint32_t *next_program(void *p, uint32_t k, uint32_t *layer)
{
	struct run_ctx *c = p;
	if (c->i + k >= c->no)
		return 0;
	const volatile uint32_t *o = op_entry(c->image, c->i + k);
	if (!is_compute(o[MODEL_OP_W_OPCODE]))
		return 0;
	const volatile uint32_t *prog = accel_program(c->image, c->i + k, k ? 0 : c->why);
	*layer = o[MODEL_OP_W_LAYER];
	return prog;
}

int model_execute(const volatile uint32_t *image, uint32_t *timings_us, model_layer_t *layers, uint32_t max_layers)
{
	uint32_t no = section(image, MODEL_SECTION_W_N_OPS), vw = section(image, MODEL_SECTION_W_VW);
	volatile uint8_t *out_block = (volatile uint8_t *)model_output(image);
	int accelerated = 0;
	int dirty = 0;            /* the TensorEngine wrote main RAM since the last cache flush */
	for (uint32_t i = 0; i < no;) {
		const volatile uint32_t *op = op_entry(image, i);
		uint32_t layer = op[MODEL_OP_W_LAYER], opcode = op[MODEL_OP_W_OPCODE];
		uint64_t t0 = cycles_now();
		uint8_t why = ACCEL_RAN;
		/* Consecutive ops with accelerator programs run as one queue
		 * (accel.h): each layer's time is from the previous CALLBACK to
		 * its own; the first from before its program's look-up. */
		uint32_t qlayer[QUEUE_MAX];
		uint64_t done_at[QUEUE_MAX];
		struct run_ctx ctx = { image, i, no, &why };
		int n = accel_run_queued(next_program, &ctx, QUEUE_MAX, qlayer, done_at);
		if (n < 0)
			return -1;
		if (n) {
			for (int k = 0; k < n; k++) {
				const volatile uint32_t *o = op_entry(image, i + k);
				record_layer(qlayer[k], i + k, o[MODEL_OP_W_OPCODE], done_at[k] - (k ? done_at[k - 1] : t0),
					     ACCEL_RAN, timings_us, layers, max_layers);
			}
			accelerated += n;
			dirty = 1;
			i += (uint32_t)n;
			continue;
		}
		/* The CPU reads what the engine wrote from here on. */
		if (dirty) {
			dcache_flush();
			dirty = 0;
			t0 = cycles_now();
		}
		if (constants_left_out(image, op)) {
			printf("server: layer %lu (op %lu) cannot run in software (%s): its constants are only in the "
			       "accelerator section; compile the model for this SoC, or with --portable\n",
			       (unsigned long)layer, (unsigned long)i, accel_why(why));
			return -1;
		}
		int err = 0;
		tensor_t t;
		switch (opcode) {
		case MODEL_OPCODE_STREAM_IN:
			tensor(image, op[MODEL_OP_W_RES], &t);
			stream_in(t.data, (const volatile int16_t *)((volatile uint8_t *)TENSOR_WINDOW_BASE + op[MODEL_OP_W_IO_OFFSET]),
				  elements_of(&t), vw, op[MODEL_OP_W_STREAM_PADDING]);
			break;
		case MODEL_OPCODE_STREAM_OUT:
			tensor(image, op[MODEL_OP_W_SRC_A], &t);
			stream_out((volatile int16_t *)(out_block + op[MODEL_OP_W_IO_OFFSET]), t.data, elements_of(&t), vw,
				   op[MODEL_OP_W_STREAM_PADDING]);
			break;
		case MODEL_OPCODE_CONV:
			err = op_conv(image, op);
			break;
		case MODEL_OPCODE_LIN:
			err = op_lin(image, op);
			break;
		case MODEL_OPCODE_MAXPOOL:
			err = op_maxpool(image, op);
			break;
		}
		if (err) {
			printf("server: op %lu cannot run here (more than %d channels)\n", (unsigned long)i, MAX_CHANNELS);
			return -1;
		}
		record_layer(layer, i, opcode, cycles_now() - t0, why, timings_us, layers, max_layers);
		i++;
	}
	if (dirty)
		dcache_flush();
	return accelerated;
}
