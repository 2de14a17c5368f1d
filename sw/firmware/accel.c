/* Accelerated compute ops: see accel.h.  The TensorEngine writes main RAM by
 * DMA, so the data cache is flushed after each program (the software path and
 * the output stream then read what the engine wrote). */
#include <stdio.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <tensorsoc_config.h>
#include <model_image.h>

#include "accel.h"
#include "console.h"
#include "platform.h"
#include "te_trace.h"
#include "ztam.h"

/* The PCORE array (cores/pcore/soc.py): its registers are LiteX CSRs (bank
 * pcore, csr.h's pcore_*_read/write), its instruction memory the Wishbone
 * region pcore (mem.h's PCORE_BASE), one 32-bit instruction per word. */
#if defined(CSR_TENSOR_ENGINE_BASE) && defined(CSR_PCORE_BASE) && defined(PCORE_BASE)
#define HAVE_ACCEL 1
static volatile uint32_t *const pcore_imem = (volatile uint32_t *)PCORE_BASE;
/* INFO without its ISA version: NP, NT, VW as the image's geometry word holds them. */
#define PCORE_GEOMETRY_MASK ((1u << CSR_PCORE_INFO_ISA_VERSION_OFFSET) - 1)
#else
#define HAVE_ACCEL 0
#endif

/* The instruction fetch (cores/tensor_engine/fetch.py): reads a program from
 * main RAM into the TensorEngine's queue, or a kernel into the PCORE
 * instruction memory, by DMA.  Without it the CPU writes the words. */
#if HAVE_ACCEL && defined(CSR_TENSOR_ENGINE_FETCH_BASE)
#define HAVE_FETCH 1
#define FETCH_TARGET_QUEUE 0
#define FETCH_TARGET_IMEM 1
#else
#define HAVE_FETCH 0
#endif

#if HAVE_FETCH
static int fetch_busy(void)
{
	return (tensor_engine_fetch_status_read() >> CSR_TENSOR_ENGINE_FETCH_STATUS_BUSY_OFFSET) & 1;
}

/* Starts fetching `n` words from `words` to `target`. */
static void fetch_start(const volatile uint32_t *words, uint32_t n, uint32_t target)
{
	tensor_engine_fetch_address_write((uint32_t)(uintptr_t)words);
	tensor_engine_fetch_length_write(n);
	tensor_engine_fetch_control_write(1u << CSR_TENSOR_ENGINE_FETCH_CONTROL_START_OFFSET |
	                                  target << CSR_TENSOR_ENGINE_FETCH_CONTROL_TARGET_OFFSET);
}
#endif

#if HAVE_ACCEL
static void trace_put(int c)
{
	uart_putc((char)c);
}

/* One trace record (two CSR reads); 0 when the buffer is empty. */
static uint32_t trace_read(uint32_t *ts)
{
	uint32_t info = tensor_engine_trace_data_read();
	if (info)
		*ts = tensor_engine_trace_data_read();
	return info;
}

/* Print the records the engine has, up to and including LOG_OFF when
 * ``until_off``; returns 1 once LOG_OFF was printed. */
static int trace_drain(te_trace_state_t *st, int until_off)
{
	uint32_t idle = 0;
	for (;;) {
		uint32_t ts, info = trace_read(&ts);
		if (!info) {
			/* LOG_OFF follows the program's CALLBACK in the queue: give the
			 * engine a moment to execute it. */
			if (!until_off || ++idle > 100000)
				return 0;
			continue;
		}
		idle = 0;
		te_trace_print_record(st, info, ts, trace_put);
		if ((info >> TE_TRACE_KIND_LSB & TE_TRACE_KIND_MASK) == TE_TRACE_KIND_LOG_OFF)
			return 1;
	}
}
#endif

int accel_present(void)
{
	return HAVE_ACCEL;
}

/* Why an op runs in software (accel.h): what the server prints per layer
 * (verification/soc/model_job.py reads the lines). */
static const char *const why_text[ACCEL_N_WHY] = {
	[ACCEL_RAN] = "on the accelerator",
	[ACCEL_NO_HARDWARE] = "this SoC has no accelerator",
	[ACCEL_NO_SECTION] = "the image has no accelerator section",
	[ACCEL_MALFORMED] = "malformed accelerator section",
	[ACCEL_OTHER_GEOMETRY] = "image compiled for another PCORE geometry (NP, NT, VW)",
	[ACCEL_OTHER_MEMORY] = "image compiled for other PCORE memory sizes",
	[ACCEL_OTHER_WINDOW] = "image compiled for another model window address",
	[ACCEL_NO_PROGRAM] = "no program for this op in the accelerator section",
	[ACCEL_KERNEL_TOO_BIG] = "kernel larger than the PCORE instruction memory",
};

const char *accel_why(unsigned why)
{
	return why < ACCEL_N_WHY ? why_text[why] : "?";
}

#define WHY(code) do { if (why) *why = (code); return 0; } while (0)

/* The accelerator section's programs of the last image used, by op-table
 * index: found once per model instead of walking the records at every layer
 * (up to ACCEL_INDEX_OPS ops; later ops walk the records). */
#define ACCEL_INDEX_OPS 96
static struct {
	const volatile uint32_t *image;
	uint32_t crc, length;
	uint8_t why;                        /* section-wide reason, or ACCEL_RAN */
	uint8_t resident;                   /* every kernel in the instruction memory */
	uint32_t imem_words;                /* PCORE IMEMINFO: the instruction memory's size in words */
	const volatile uint32_t *rec[ACCEL_INDEX_OPS];
} ix;

/* The accelerator section of `image`, or 0 (*why says why). */
static const volatile uint32_t *accel_section(const volatile uint32_t *image, uint8_t *why)
{
#if HAVE_ACCEL
	const volatile uint32_t *payload = image + MODEL_IMAGE_HEADER_SIZE / 4;
	uint32_t off = payload[MODEL_SECTION_W_ACCEL], len = image[MODEL_IMAGE_W_PAYLOAD_LENGTH];
	if (!off)
		WHY(ACCEL_NO_SECTION);
	if (off % 4 || off + 4 * MODEL_ACCEL_WORDS > len)
		WHY(ACCEL_MALFORMED);
	const volatile uint32_t *a = payload + off / 4;
	if (a[MODEL_ACCEL_W_GEOMETRY] != (pcore_info_read() & PCORE_GEOMETRY_MASK))
		WHY(ACCEL_OTHER_GEOMETRY);
	if (a[MODEL_ACCEL_W_MEMORY] != pcore_meminfo_read())
		WHY(ACCEL_OTHER_MEMORY);
	if (a[MODEL_ACCEL_W_MODEL_WINDOW] != (uint32_t)(uintptr_t)image)
		WHY(ACCEL_OTHER_WINDOW);
	/* The arranged constants (weights in the kernels' order) the programs read. */
	uint32_t data = a[MODEL_ACCEL_W_DATA_BYTES];
	if (data % 4 || data / 4 > (len - off) / 4 - MODEL_ACCEL_WORDS)
		WHY(ACCEL_MALFORMED);
	return a;
#else
	(void)image;
	WHY(ACCEL_NO_HARDWARE);
#endif
}

#if HAVE_ACCEL
/* Walks the program records of section `a`: calls `visit` on each (stops
 * when it returns nonzero); returns ACCEL_MALFORMED for a record that runs
 * past the payload, else ACCEL_RAN. */
static uint8_t walk_records(const volatile uint32_t *image, const volatile uint32_t *a,
                            int (*visit)(const volatile uint32_t *r, void *ctx), void *ctx)
{
	const volatile uint32_t *end = image + MODEL_IMAGE_HEADER_SIZE / 4 + image[MODEL_IMAGE_W_PAYLOAD_LENGTH] / 4;
	const volatile uint32_t *r = a + MODEL_ACCEL_WORDS + a[MODEL_ACCEL_W_DATA_BYTES] / 4;
	for (uint32_t i = 0; i < a[MODEL_ACCEL_W_N_PROGRAMS]; i++) {
		if (r + MODEL_ACCEL_REC_WORDS > end)
			return ACCEL_MALFORMED;
		uint32_t n = r[MODEL_ACCEL_REC_W_CODE_WORDS] + r[MODEL_ACCEL_REC_W_TE_WORDS];
		if (n > (uint32_t)(end - r) - MODEL_ACCEL_REC_WORDS)
			return ACCEL_MALFORMED;
		if (visit(r, ctx))
			break;
		r += MODEL_ACCEL_REC_WORDS + n;
	}
	return ACCEL_RAN;
}

static int fits_imem(const volatile uint32_t *r)
{
	return r[MODEL_ACCEL_REC_W_CODE_ORIGIN] <= ix.imem_words &&
	       r[MODEL_ACCEL_REC_W_CODE_WORDS] <= ix.imem_words - r[MODEL_ACCEL_REC_W_CODE_ORIGIN];
}

static int index_record(const volatile uint32_t *r, void *ctx)
{
	(void)ctx;
	uint32_t op = r[MODEL_ACCEL_REC_W_OP];
	if (op < ACCEL_INDEX_OPS && !ix.rec[op])
		ix.rec[op] = r;
	if (!fits_imem(r))
		ix.resident = 0;
	return 0;
}

static int load_code(const volatile uint32_t *r, void *ctx)
{
	(void)ctx;
	volatile uint32_t *imem = pcore_imem + r[MODEL_ACCEL_REC_W_CODE_ORIGIN];
	const volatile uint32_t *code = r + MODEL_ACCEL_REC_WORDS;
	for (uint32_t i = 0; i < r[MODEL_ACCEL_REC_W_CODE_WORDS]; i++)
		imem[i] = code[i];
	return 0;
}

struct find { uint32_t op; const volatile uint32_t *r; };

static int find_record(const volatile uint32_t *r, void *ctx)
{
	struct find *f = ctx;
	if (r[MODEL_ACCEL_REC_W_OP] != f->op)
		return 0;
	f->r = r;
	return 1;
}
#endif

/* Indexes the programs of `image` when it is not the image indexed last
 * (another model, or the same window rewritten: its CRC differs), and, when
 * the compiler placed every kernel at its own instruction address
 * (kernels_resident), loads them all into the instruction memory now. */
static void accel_prepare(const volatile uint32_t *image)
{
	if (ix.image == image && ix.crc == image[MODEL_IMAGE_W_CRC32] &&
	    ix.length == image[MODEL_IMAGE_W_PAYLOAD_LENGTH])
		return;
	for (uint32_t i = 0; i < ACCEL_INDEX_OPS; i++)
		ix.rec[i] = 0;
	ix.image = image;
	ix.crc = image[MODEL_IMAGE_W_CRC32];
	ix.length = image[MODEL_IMAGE_W_PAYLOAD_LENGTH];
	ix.resident = 0;
	ix.why = ACCEL_RAN;
	const volatile uint32_t *a = accel_section(image, &ix.why);
#if HAVE_ACCEL
	if (!a)
		return;
	ix.imem_words = pcore_imeminfo_read();
	ix.resident = a[MODEL_ACCEL_W_KERNELS_RESIDENT] == 1;
	ix.why = walk_records(image, a, index_record, 0);
	if (ix.why != ACCEL_RAN)
		ix.resident = 0;
	else if (ix.resident)
		walk_records(image, a, load_code, 0);
#else
	(void)a;
#endif
}

int accel_kernels_resident(const volatile uint32_t *image)
{
	accel_prepare(image);
	return ix.resident;
}

const volatile uint32_t *accel_program(const volatile uint32_t *image, uint32_t op, uint8_t *why)
{
	accel_prepare(image);
	if (ix.why != ACCEL_RAN)
		WHY(ix.why);
#if HAVE_ACCEL
	const volatile uint32_t *r = op < ACCEL_INDEX_OPS ? ix.rec[op] : 0;
	if (!r && op >= ACCEL_INDEX_OPS) {
		struct find f = { op, 0 };
		walk_records(image, accel_section(image, 0), find_record, &f);
		r = f.r;
	}
	if (!r)
		WHY(ACCEL_NO_PROGRAM);
	if (!fits_imem(r))
		WHY(ACCEL_KERNEL_TOO_BIG);
	return r;
#else
	(void)op;
	WHY(ACCEL_NO_HARDWARE);
#endif
}

int accel_run(const volatile uint32_t *record, uint32_t layer)
{
#if HAVE_ACCEL
	uint32_t nc = record[MODEL_ACCEL_REC_W_CODE_WORDS], nte = record[MODEL_ACCEL_REC_W_TE_WORDS];
	const volatile uint32_t *code = record + MODEL_ACCEL_REC_WORDS, *te = code + nc;
	int trace = (boot_flags() & BOOT_TE_TRACE) != 0;
	te_trace_state_t st;
	/* The previous program ended with its CALLBACK, after its last store:
	 * no kernel runs, the instruction memory is free.  Resident kernels
	 * were loaded with the model (accel_prepare). */
	if (!ix.resident) {
#if HAVE_FETCH
		if (nc && record[MODEL_ACCEL_REC_W_CODE_ORIGIN] == 0) {   /* the fetch writes from word 0 */
			fetch_start(code, nc, FETCH_TARGET_IMEM);
			while (fetch_busy())
				;
		} else
#endif
			load_code(record, 0);
	}
	if (trace && !(tensor_engine_trace_status_read() >> CSR_TENSOR_ENGINE_TRACE_STATUS_DEPTH_OFFSET)) {
		printf("accel: layer %lu: no TensorEngine activity trace in this build (te_trace_depth=0)\n",
		       (unsigned long)layer);
		trace = 0;
	}
	if (trace) {
		printf("accel: layer %lu: TensorEngine activity (LOG_ON .. LOG_OFF)\n", (unsigned long)layer);
		te_trace_init(&st);
		while (trace_read(&(uint32_t){0}))      /* records left from before */
			;
		ztamLog(1);
	}
#if HAVE_FETCH
	/* The fetch pushes the words as the queue takes them; the CPU only
	 * waits for the CALLBACK (and drains the trace). */
	if (nte)
		fetch_start(te, nte, FETCH_TARGET_QUEUE);
#else
	/* Read the free space once per batch of words, not once per word. */
	for (uint32_t i = 0, space = 0; i < nte; i++, space--) {
		while (space == 0)
			space = tensor_engine_queue_space_read();
		tensor_engine_queue_write(te[i]);
	}
#endif
	/* Poll sparingly: every CSR read is a bus cycle the engine's DMA
	 * cannot have. */
	uint32_t cb;
	while (!((cb = tensor_engine_callback_read()) >> 31)) {
		/* Tracing: print as the records come, so the buffer does not fill. */
		if (trace)
			trace_drain(&st, 0);
		for (int d = 0; d < 32; d++)
			__asm__ volatile("nop");
	}
#if HAVE_FETCH
	/* The CALLBACK is the program's last word: the fetch is done (the
	 * queue is the CPU's again, for LOG_OFF or the next program). */
	while (fetch_busy())
		;
#endif
	if (trace) {
		ztamLog(0);
		if (!trace_drain(&st, 1))
			printf("accel: layer %lu: no LOG_OFF record from the TensorEngine\n", (unsigned long)layer);
	}
	uint32_t errors = tensor_engine_errors_read();
	if ((cb & 0x7fffffffu) != layer || errors) {
		printf("accel: layer %lu: TensorEngine callback 0x%08lx, error flags 0x%lx\n", (unsigned long)layer,
		       (unsigned long)cb, (unsigned long)errors);
		return -1;
	}
	return 0;
#else
	(void)record;
	(void)layer;
	return -1;
#endif
}

#if HAVE_FETCH
/* Fetches program record r's TensorEngine words into the engine's queue. */
static void queue_program(const volatile uint32_t *r)
{
	fetch_start(r + MODEL_ACCEL_REC_WORDS + r[MODEL_ACCEL_REC_W_CODE_WORDS], r[MODEL_ACCEL_REC_W_TE_WORDS],
	            FETCH_TARGET_QUEUE);
}
#endif

int accel_run_queued(accel_next_t next, void *ctx, uint32_t max, uint32_t *layers, uint64_t *done_at)
{
	/* Program 0 first: its look-up indexes the image (accel_prepare), which
	 * says whether the kernels are resident. */
	const volatile uint32_t *r = max ? next(ctx, 0, &layers[0]) : 0;
	if (!r)
		return 0;
#if HAVE_FETCH
	if (!ix.resident || (boot_flags() & BOOT_TE_TRACE))
#endif
	{
		uint32_t k = 0;
		while (r) {
			if (accel_run(r, layers[k]))
				return -1;
			done_at[k++] = cycles_now();
			r = k < max ? next(ctx, k, &layers[k]) : 0;
		}
		return (int)k;
	}
#if HAVE_FETCH
	/* Every kernel is in the instruction memory.  Program 0 starts as soon
	 * as it is found; the others are looked up while it runs (a few
	 * hundred cycles each), all before the first CALLBACK is polled, so
	 * that no CALLBACK waits for a look-up: then each program is fetched
	 * into the engine's queue as soon as the previous one's last word is
	 * in it, so the engine starts it right after the previous CALLBACK,
	 * and each CALLBACK (the last word of a program, tag = its layer) is
	 * timed as it is popped.  (Looking program k+1 up while program k
	 * runs delayed the CALLBACKs of layers shorter than a look-up: two
	 * popped back to back, one layer timed at 0 us.) */
	const volatile uint32_t *recs[ACCEL_QUEUE_MAX];
	if (max > ACCEL_QUEUE_MAX)
		max = ACCEL_QUEUE_MAX;
	recs[0] = r;
	queue_program(r);
	uint32_t n = 1;
	while (n < max && (recs[n] = next(ctx, n, &layers[n])) != 0)
		n++;
	uint32_t queued = 1, done = 0;
	while (done < n) {
		if (queued < n && !fetch_busy()) {
			queue_program(recs[queued++]);
			continue;
		}
		uint32_t cb = tensor_engine_callback_read();
		if (cb >> 31) {
			done_at[done] = cycles_now();
			if ((cb & 0x7fffffffu) != layers[done]) {
				printf("accel: layer %lu: TensorEngine callback 0x%08lx\n", (unsigned long)layers[done],
				       (unsigned long)cb);
				return -1;
			}
			done++;
			continue;
		}
		/* Poll sparingly: every CSR read is a bus cycle the engine's DMA
		 * cannot have.  (64 nops instead of 16 changed no layer by more
		 * than 120 cycles on LeNet-5, the short ones for the worse.) */
		for (int d = 0; d < 16; d++)
			__asm__ volatile("nop");
	}
	while (fetch_busy())
		;
	uint32_t errors = tensor_engine_errors_read();
	if (errors) {
		printf("accel: layers %lu..%lu: TensorEngine error flags 0x%lx\n", (unsigned long)layers[0],
		       (unsigned long)layers[n - 1], (unsigned long)errors);
		return -1;
	}
	return (int)n;
#endif
}
