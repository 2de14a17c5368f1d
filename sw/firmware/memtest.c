#include <stdio.h>
#include <stdint.h>

#include "memtest.h"
#include "platform.h"

#define MAX_REPORTED 8

static unsigned errors;

static void report(const char *test, volatile void *addr, uint32_t expected, uint32_t got)
{
	if (errors++ < MAX_REPORTED)
		printf("  %s: 0x%08lx: expected 0x%08lx, read 0x%08lx\n", test,
		       (unsigned long)(uintptr_t)addr, (unsigned long)expected, (unsigned long)got);
}

/* Walking one on the data bus, at the first word. */
static void test_data_bus(volatile uint32_t *base)
{
	for (uint32_t bit = 1; bit; bit <<= 1) {
		base[0] = bit;
		dcache_flush();
		uint32_t got = base[0];
		if (got != bit)
			report("data bus", base, bit, got);
	}
}

/* Power-of-two word offsets: each address line stuck high, low or shorted. */
static void test_address_bus(volatile uint32_t *base, uint32_t words)
{
	const uint32_t pattern = 0xaaaaaaaa, antipattern = 0x55555555;
	for (uint32_t off = 1; off < words; off <<= 1)
		base[off] = pattern;
	base[0] = antipattern;
	dcache_flush();
	for (uint32_t off = 1; off < words; off <<= 1)
		if (base[off] != pattern)
			report("address bus", &base[off], pattern, base[off]);
	base[0] = pattern;
	for (uint32_t test = 1; test < words; test <<= 1) {
		base[test] = antipattern;
		dcache_flush();
		for (uint32_t off = 1; off < words; off <<= 1)
			if (off != test && base[off] != pattern)
				report("address bus", &base[off], pattern, base[off]);
		base[test] = pattern;
	}
}

/* Byte and half-word writes land in the right lanes. */
static void test_byte_lanes(volatile uint32_t *base)
{
	volatile uint8_t *b = (volatile uint8_t *)base;
	volatile uint16_t *h = (volatile uint16_t *)base;
	base[0] = 0;
	b[0] = 0x11; b[1] = 0x22; b[2] = 0x33; b[3] = 0x44;
	dcache_flush();
	if (base[0] != 0x44332211)
		report("byte lanes", base, 0x44332211, base[0]);
	h[1] = 0xbeef;
	dcache_flush();
	if (base[0] != 0xbeef2211)
		report("byte lanes", base, 0xbeef2211, base[0]);
}

static inline uint32_t lfsr_next(uint32_t x)
{
	/* 32-bit LCG (Numerical Recipes constants): one multiply per word. */
	return x * 1664525u + 1013904223u;
}

static void test_all_words(volatile uint32_t *base, uint32_t words, uint32_t seed, uint32_t invert)
{
	uint32_t x = seed;
	for (uint32_t i = 0; i < words; i++) {
		x = lfsr_next(x);
		base[i] = x ^ invert;
	}
	dcache_flush();
	x = seed;
	for (uint32_t i = 0; i < words; i++) {
		x = lfsr_next(x);
		uint32_t got = base[i];
		if (got != (x ^ invert))
			report("random fill", &base[i], x ^ invert, got);
	}
}

unsigned memtest(volatile uint32_t *base, uint32_t size, uint32_t fill_size)
{
	uint32_t words = size / 4;
	uint32_t fill_words = fill_size && fill_size < size ? fill_size / 4 : words;
	errors = 0;
	test_data_bus(base);
	test_address_bus(base, words);
	test_byte_lanes(base);
	test_all_words(base, fill_words, 0x1234567u, 0);
	test_all_words(base, fill_words, 0x89abcdefu, 0xffffffffu);
	if (errors > MAX_REPORTED)
		printf("  ... %u errors in all\n", errors);
	return errors;
}
