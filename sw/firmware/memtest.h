#ifndef TSOC_MEMTEST_H
#define TSOC_MEMTEST_H
#include <stdint.h>

/* Tests `size` bytes at `base`: data bus, address bus, byte lanes, then every
 * word with a pseudo-random pattern and its complement.  Returns the number
 * of errors; the first few are printed. */
unsigned memtest(volatile uint32_t *base, uint32_t size);

#endif
