/* Runs a loaded model image (sw/model_image.py, version 2) in plain C on the
 * MCORE: the software path, bit-exact with verification/golden/cnn.py. */
#ifndef TSOC_MODEL_RUN_H
#define TSOC_MODEL_RUN_H
#include <stdint.h>

/* Checks the payload of the image at `image` (header already checked):
 * table sizes, indices, regions.  Returns 0 or prints why and returns -1. */
int model_validate(const volatile uint32_t *image);

/* Executes the op table.  Per-layer times (microseconds, from the cycle
 * counter) go to timings_us[layer].  Returns 0, or -1 after printing why. */
/* Returns the number of compute ops the accelerator ran, or -1. */
int model_execute(const volatile uint32_t *image, uint32_t *timings_us, uint32_t max_layers);

/* Where the outputs are after model_execute (RTensor data). */
const volatile void *model_output(const volatile uint32_t *image);
#endif
