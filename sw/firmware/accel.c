/* Accelerated compute ops: see accel.h.  The TensorEngine writes main RAM by
 * DMA, so the data cache is flushed after each program (the software path and
 * the output stream then read what the engine wrote). */
#include <stdio.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <tensorsoc_config.h>
#include <model_image.h>
#include <pcore_regs.h>

#include "accel.h"
#include "console.h"
#include "platform.h"
#include "te_trace.h"
#include "ztam.h"

#if defined(CSR_TENSOR_ENGINE_BASE) && defined(PCORE_BASE)
#define HAVE_ACCEL 1
static volatile uint32_t *const pcore = (volatile uint32_t *)PCORE_BASE;
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

const volatile uint32_t *accel_program(const volatile uint32_t *image, uint32_t op, uint8_t *why)
{
#if HAVE_ACCEL
	const volatile uint32_t *payload = image + MODEL_IMAGE_HEADER_SIZE / 4;
	uint32_t off = payload[MODEL_SECTION_W_ACCEL], len = image[MODEL_IMAGE_W_PAYLOAD_LENGTH];
	if (!off)
		WHY(ACCEL_NO_SECTION);
	if (off % 4 || off + 4 * MODEL_ACCEL_WORDS > len)
		WHY(ACCEL_MALFORMED);
	const volatile uint32_t *a = payload + off / 4;
	if (a[MODEL_ACCEL_W_GEOMETRY] != (pcore[PCORE_INFO] & 0xffffff))
		WHY(ACCEL_OTHER_GEOMETRY);
	if (a[MODEL_ACCEL_W_MEMORY] != pcore[PCORE_MEMINFO])
		WHY(ACCEL_OTHER_MEMORY);
	if (a[MODEL_ACCEL_W_MODEL_WINDOW] != (uint32_t)(uintptr_t)image)
		WHY(ACCEL_OTHER_WINDOW);
	const volatile uint32_t *end = payload + len / 4;
	uint32_t data = a[MODEL_ACCEL_W_DATA_BYTES];
	/* The arranged constants (weights in the kernels' order) the programs read. */
	if (data % 4 || data / 4 > (uint32_t)(end - a) - MODEL_ACCEL_WORDS)
		WHY(ACCEL_MALFORMED);
	const volatile uint32_t *r = a + MODEL_ACCEL_WORDS + data / 4;
	for (uint32_t i = 0; i < a[MODEL_ACCEL_W_N_PROGRAMS]; i++) {
		if (r + MODEL_ACCEL_REC_WORDS > end)
			WHY(ACCEL_MALFORMED);
		uint32_t n = r[MODEL_ACCEL_REC_W_CODE_WORDS] + r[MODEL_ACCEL_REC_W_TE_WORDS];
		if (n > (uint32_t)(end - r) - MODEL_ACCEL_REC_WORDS)
			WHY(ACCEL_MALFORMED);
		if (r[MODEL_ACCEL_REC_W_OP] == op) {
			if (r[MODEL_ACCEL_REC_W_CODE_WORDS] > pcore[PCORE_IMEMINFO])
				WHY(ACCEL_KERNEL_TOO_BIG);
			return r;
		}
		r += MODEL_ACCEL_REC_WORDS + n;
	}
	WHY(ACCEL_NO_PROGRAM);
#else
	(void)image;
	(void)op;
	WHY(ACCEL_NO_HARDWARE);
#endif
}

int accel_run(const volatile uint32_t *record, uint32_t layer)
{
#if HAVE_ACCEL
	uint32_t nc = record[MODEL_ACCEL_REC_W_CODE_WORDS], nte = record[MODEL_ACCEL_REC_W_TE_WORDS];
	const volatile uint32_t *code = record + MODEL_ACCEL_REC_WORDS, *te = code + nc;
	volatile uint32_t *imem = pcore + pcore[PCORE_IMEMINFO];
	int trace = (boot_flags() & BOOT_TE_TRACE) != 0;
	te_trace_state_t st;
	/* The previous program ended with its CALLBACK, after its last store:
	 * no kernel runs, the instruction memory is free. */
#if HAVE_FETCH
	(void)imem;
	if (nc) {
		fetch_start(code, nc, FETCH_TARGET_IMEM);
		while (fetch_busy())
			;
	}
#else
	for (uint32_t i = 0; i < nc; i++)
		imem[i] = code[i];
#endif
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
	dcache_flush();
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
