#include "crc32.h"

/* CRC-32 (IEEE 802.3, reflected, as zlib.crc32), bitwise: no table in ROM. */
uint32_t crc32(const volatile uint8_t *data, uint32_t len)
{
	uint32_t crc = 0xffffffffu;
	for (uint32_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}
