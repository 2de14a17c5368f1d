#ifndef TSOC_CRC32_H
#define TSOC_CRC32_H
#include <stdint.h>
uint32_t crc32(const volatile uint8_t *data, uint32_t len);
#endif
