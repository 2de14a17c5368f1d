/* SoC services the firmware uses: cycle counter, cache maintenance, exit. */
#ifndef TSOC_PLATFORM_H
#define TSOC_PLATFORM_H

#include <stdint.h>
#include <generated/csr.h>

/* 64-bit count of SoC clock cycles since reset (LiteX timer uptime). */
static inline uint64_t cycles_now(void)
{
	timer0_uptime_latch_write(1);
	return timer0_uptime_cycles_read();
}

/* VexRiscv data cache flush (custom instruction used by LiteX for VexRiscv). */
static inline void dcache_flush(void)
{
	__asm__ volatile(".word(0x500F)" ::: "memory");
}

static inline void icache_flush(void)
{
	__asm__ volatile(".word 0x0000100f" ::: "memory"); /* fence.i */
}

/* Ends the simulation with `code` (no effect on hardware without SimControl). */
void platform_exit(int code) __attribute__((noreturn));

#endif
