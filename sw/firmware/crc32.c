#include "crc32.h"

/* CRC-32 (IEEE 802.3, reflected, as zlib.crc32), four bits at a time: a
 * 16-entry table (64 bytes of ROM) instead of a 1 KiB one, and about a
 * quarter of the bitwise loop's cycles per byte.  Entry n is the CRC
 * register after shifting the 4-bit value n through the polynomial. */
static const uint32_t nibble[16] = {
	0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u, 0x4db26158u, 0x5005713cu,
	0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu, 0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu,
};

uint32_t crc32(const volatile uint8_t *data, uint32_t len)
{
	uint32_t crc = 0xffffffffu;
	for (uint32_t i = 0; i < len; i++) {
		crc ^= data[i];
		crc = (crc >> 4) ^ nibble[crc & 15];
		crc = (crc >> 4) ^ nibble[crc & 15];
	}
	return ~crc;
}
