/* Runs a loaded model image (spec/model_image.py, version 2) in plain C on the
 * MCORE: the software path, bit-exact with verification/golden/cnn.py. */
#ifndef TSOC_MODEL_RUN_H
#define TSOC_MODEL_RUN_H
#include <stdint.h>

/* Checks the payload of the image at `image` (header already checked):
 * table sizes, indices, regions.  Returns 0 or prints why and returns -1. */
int model_validate(const volatile uint32_t *image);

/* Where and how long one compute op ran (the server prints it per layer). */
typedef struct {
	uint32_t cycles;      /* SoC clock cycles, from the cycle counter */
	uint16_t op;          /* op-table index */
	uint8_t opcode;       /* MODEL_OPCODE_CONV, _LIN, _MAXPOOL */
	uint8_t why;          /* accel.h enum accel_why: ACCEL_RAN, or why it ran in software */
} model_layer_t;

/* Executes the op table.  Per-layer times (microseconds, from the cycle
 * counter) go to timings_us[layer], where each layer ran to layers[layer]
 * (layers may be 0).  Returns the number of compute ops the accelerator
 * ran, or -1 after printing why. */
int model_execute(const volatile uint32_t *image, uint32_t *timings_us, model_layer_t *layers, uint32_t max_layers);

/* Where the outputs are after model_execute (RTensor data). */
const volatile void *model_output(const volatile uint32_t *image);
#endif
