#ifndef TSOC_MEMTEST_H
#define TSOC_MEMTEST_H
#include <stdint.h>

/* Tests `size` bytes at `base`: data bus (first word), address bus (every
 * power-of-two word offset below `size`: each address line of the whole
 * region), byte lanes, then the first `fill_size` bytes (0 or more than
 * `size`: all of them) word by word with a pseudo-random pattern and its
 * complement.  Returns the number of errors; the first few are printed. */
unsigned memtest(volatile uint32_t *base, uint32_t size, uint32_t fill_size);

#endif
