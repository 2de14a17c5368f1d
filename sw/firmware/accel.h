/* The accelerated path of a model's compute ops: the PCORE kernel and the
 * TensorEngine program the model compiler put in the image's accelerator
 * section (sw/model/accel.py, sw/model_image.py ACCEL_FIELDS). */
#ifndef TSOC_ACCEL_H
#define TSOC_ACCEL_H

#include <stdint.h>

/* 1 when the SoC has the TensorEngine and the PCORE array. */
int accel_present(void);

/* The program record of op-table entry `op` of `image`, or 0 when the op
 * runs on the software path: no accelerator, no accelerator section, an
 * image compiled for another geometry or model window, or no program for
 * that op. */
const volatile uint32_t *accel_program(const volatile uint32_t *image, uint32_t op);

/* Runs a program record to its CALLBACK: loads the kernel code, streams the
 * TensorEngine words, waits.  Returns 0, or -1 after printing the
 * TensorEngine's error flags or a wrong callback tag. */
int accel_run(const volatile uint32_t *record, uint32_t layer);

#endif
