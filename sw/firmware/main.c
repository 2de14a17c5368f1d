/* tensorsoc MCORE firmware: banner, main-RAM test. */
#include <stdio.h>
#include <stdint.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include "boot.h"
#include "memtest.h"
#include "platform.h"
#include "server.h"
#include "tensorsoc_config.h"

/* The random fill of the quick memory test (boot flag quick_memtest). */
#define QUICK_MEMTEST_FILL 4096u

static unsigned memtest_errors;
static void run_memtest(int quick);

static void banner(void)
{
	printf("\n");
	printf("tensorsoc MCORE firmware (%s)\n", TSOC_FIRMWARE_ORIGIN);
	printf("  config : NP=%d NT=%d VW=%d, peak %d MACs/clock\n",
	       TSOC_NP, TSOC_NT, TSOC_VW, TSOC_PEAK_MACS_PER_CLOCK);
	printf("  memory : main RAM %d KiB @ 0x%08lx, scratch %d KiB, "
	       "PCORE private %d words/thread, shared %d words/PCORE\n",
	       TSOC_MAIN_RAM_SIZE / 1024, (unsigned long)MAIN_RAM_BASE, TSOC_SCRATCH_SIZE / 1024,
	       TSOC_PCORE_PRIVATE_WORDS, TSOC_PCORE_SHARED_WORDS);
	printf("  clock  : %d MHz\n", TSOC_SYS_CLK_FREQ / 1000000);
}

int main(void)
{
#ifndef TSOC_FIRMWARE_IN_RAM
	boot_uploaded_server();
#endif
	banner();

	uint32_t flags = boot_flags();
	if (flags & BOOT_SKIP_MEMTEST) {
		printf("memtest: skipped\n");
	} else {
		run_memtest((flags & BOOT_QUICK_MEMTEST) != 0);
	}
	if (flags & BOOT_EXIT_AFTER_BOOT)
		platform_exit(memtest_errors ? 1 : 0);
	server_run();
}

static void run_memtest(int quick)
{
#ifdef TSOC_FIRMWARE_IN_RAM
	/* Running from the server window: test the RAM below the host windows. */
	uint32_t size = MODEL_WINDOW_BASE - MAIN_RAM_BASE;
#else
	uint32_t size = MAIN_RAM_SIZE;
#endif
	/* Address lines over all of `size`; the random fill over the first
	 * TSOC_MEMTEST_SIZE bytes only (spec/config.py memtest_size, 0: all), so
	 * that a large main RAM boots as fast as a small one. */
	uint32_t fill = TSOC_MEMTEST_SIZE && TSOC_MEMTEST_SIZE < size ? TSOC_MEMTEST_SIZE : size;
	/* Quick: memtest()'s bus checks still cover every address and data
	 * line of `size`; only the random fill is shortened, and says so. */
	uint32_t full = fill;
	if (quick && fill > QUICK_MEMTEST_FILL)
		fill = QUICK_MEMTEST_FILL;
	printf("memtest: main RAM 0x%08lx..0x%08lx (%lu KiB), random fill of 0x%08lx..0x%08lx (%lu KiB)",
	       (unsigned long)MAIN_RAM_BASE, (unsigned long)(MAIN_RAM_BASE + size - 1), (unsigned long)(size / 1024),
	       (unsigned long)MAIN_RAM_BASE, (unsigned long)(MAIN_RAM_BASE + fill - 1), (unsigned long)(fill / 1024));
	if (fill < full)
		printf(", quick: not the full test's %lu KiB", (unsigned long)(full / 1024));
	printf("\n");
	uint64_t t0 = cycles_now();
	memtest_errors = memtest((volatile uint32_t *)MAIN_RAM_BASE, size, fill);
	uint64_t t1 = cycles_now();
	printf("memtest: %s (%u errors, %lu cycles)\n", memtest_errors ? "FAIL" : "PASS", memtest_errors,
	       (unsigned long)(t1 - t0));
}
