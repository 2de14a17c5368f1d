/* SoC services the firmware uses: cycle counter, cache maintenance, exit. */
#ifndef TSOC_PLATFORM_H
#define TSOC_PLATFORM_H

#include <stdint.h>
#include <generated/soc.h>
#include <generated/csr.h>

/* 64-bit count of SoC clock cycles since reset (LiteX timer uptime). */
static inline uint64_t cycles_now(void)
{
	timer0_uptime_latch_write(1);
	return timer0_uptime_cycles_read();
}

/* VexRiscv data cache flush (custom instruction used by LiteX for VexRiscv).
 * Only where the CPU has a data cache (LiteX's soc.h says so): the variants
 * without one (lite, minimal) take the word as an illegal instruction, and
 * the firmware stopped at the host port's first message.  Elsewhere a
 * compiler barrier: memory is read again after it. */
static inline void dcache_flush(void)
{
#ifdef CONFIG_CPU_HAS_DCACHE
	__asm__ volatile(".word(0x500F)" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* fence.i, where the CPU has an instruction cache (not the minimal variant). */
static inline void icache_flush(void)
{
#ifdef CONFIG_CPU_HAS_ICACHE
	__asm__ volatile(".word 0x0000100f" ::: "memory"); /* fence.i */
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Boot flags a simulation testbench sets (cores/sim_control.py BOOT_FLAGS,
 * bit positions from the generated csr.h); 0 on hardware: test main RAM,
 * then serve the host. */
#ifdef CSR_SIM_CTRL_BASE
#define BOOT_SKIP_MEMTEST    (1u << CSR_SIM_CTRL_BOOT_FLAGS_SKIP_MEMTEST_OFFSET)
#define BOOT_EXIT_AFTER_BOOT (1u << CSR_SIM_CTRL_BOOT_FLAGS_EXIT_AFTER_BOOT_OFFSET)
#define BOOT_TE_TRACE        (1u << CSR_SIM_CTRL_BOOT_FLAGS_TE_TRACE_OFFSET)  /* print the TensorEngine activity trace of each accelerated layer */
#define BOOT_QUICK_MEMTEST   (1u << CSR_SIM_CTRL_BOOT_FLAGS_QUICK_MEMTEST_OFFSET)  /* memtest: bus checks, short random fill */
#else
#define BOOT_SKIP_MEMTEST    0u
#define BOOT_EXIT_AFTER_BOOT 0u
#define BOOT_TE_TRACE        0u
#define BOOT_QUICK_MEMTEST   0u
#endif
static inline uint32_t boot_flags(void)
{
#ifdef CSR_SIM_CTRL_BASE
	return sim_ctrl_boot_flags_read();
#else
	return 0;
#endif
}

/* Ends the simulation with `code` (no effect on hardware without SimControl). */
void platform_exit(int code) __attribute__((noreturn));

#endif
