/* The accelerated path of a model's compute ops: the PCORE kernel and the
 * TensorEngine program the model compiler put in the image's accelerator
 * section (sw/model/accel.py, spec/model_image.py ACCEL_FIELDS). */
#ifndef TSOC_ACCEL_H
#define TSOC_ACCEL_H

#include <stdint.h>

/* 1 when the SoC has the TensorEngine and the PCORE array. */
int accel_present(void);

/* Why an op runs on the software path (accel_why() gives the text). */
enum accel_why {
	ACCEL_RAN = 0,            /* it did not: the accelerator ran it */
	ACCEL_NO_HARDWARE,
	ACCEL_NO_SECTION,
	ACCEL_MALFORMED,
	ACCEL_OTHER_GEOMETRY,
	ACCEL_OTHER_MEMORY,
	ACCEL_OTHER_WINDOW,
	ACCEL_NO_PROGRAM,
	ACCEL_KERNEL_TOO_BIG,
	ACCEL_N_WHY
};

/* The program record of op-table entry `op` of `image`, or 0 when the op
 * runs on the software path: no accelerator, no accelerator section, an
 * image compiled for another geometry or model window, or no program for
 * that op.  When it returns 0 and `why` is not null, *why says which. */
const volatile uint32_t *accel_program(const volatile uint32_t *image, uint32_t op, uint8_t *why);

/* The text of an accel_why code (what the server prints per layer). */
const char *accel_why(unsigned why);

/* Runs a program record to its CALLBACK: loads the kernel code (unless the
 * model's kernels are resident), streams the TensorEngine words (by the
 * instruction fetch's DMA when the SoC has it, else through the queue CSR),
 * waits.  Returns 0, or -1 after printing the TensorEngine's error flags or
 * a wrong callback tag.  The engine wrote main RAM by DMA: the caller
 * flushes the data cache before the CPU reads what it wrote. */
int accel_run(const volatile uint32_t *record, uint32_t layer);

/* The most programs accel_run_queued runs in one call. */
#define ACCEL_QUEUE_MAX 16

/* The program record of the k-th op of a run (k = 0, 1, ...) and, in
 * *layer, its layer; 0 where the run ends (the op is not a compute op or
 * has no program). */
typedef const volatile uint32_t *(*accel_next_t)(void *ctx, uint32_t k, uint32_t *layer);

/* Runs the programs next(ctx, 0), next(ctx, 1), ... one after the other,
 * up to the first 0 or `max` of them; layers[k] is program k's layer and
 * done_at[k] the cycle count (cycles_now) at which its CALLBACK was seen.
 * At most ACCEL_QUEUE_MAX.  With the instruction fetch and the model's
 * kernels resident (and no trace), program 0 starts as soon as it is
 * found, the others are looked up while it runs, and they are queued back
 * to back: no firmware between two layers; else accel_run one by one
 * (program k+1 looked up after program k).
 * Returns the number of programs run (0: next(ctx, 0) was 0), or -1 as
 * accel_run. */
int accel_run_queued(accel_next_t next, void *ctx, uint32_t max, uint32_t *layers, uint64_t *done_at);

/* Whether `image`'s kernels are all in the instruction memory (loaded when
 * the image is first used: accel_program, accel_kernels_resident). */
int accel_kernels_resident(const volatile uint32_t *image);

#endif
