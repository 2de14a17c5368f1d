/* Boot path (datasheet: "with" and "without a flash chip").
 *
 * The ROM holds the default server.  A server uploaded by the host lands in
 * the server window at the top of main RAM, with the header of
 * sw/server_image.py.  At reset the ROM checks that header and the payload's
 * CRC-32; if they hold it jumps to the payload, else it runs the ROM server. */
#include <stdio.h>
#include <stdint.h>
#include <generated/soc.h>

#include "boot.h"
#include "crc32.h"
#include "platform.h"
#include "server_image.h"

void boot_uploaded_server(void)
{
	volatile uint32_t *hdr = (volatile uint32_t *)SERVER_WINDOW_BASE;
	if (hdr[SERVER_IMAGE_OFF_MAGIC / 4] != SERVER_IMAGE_MAGIC)
		return;
	uint32_t length = hdr[SERVER_IMAGE_OFF_LENGTH / 4];
	uint32_t expected = hdr[SERVER_IMAGE_OFF_CRC32 / 4];
	const volatile uint8_t *payload = (const volatile uint8_t *)SERVER_WINDOW_BASE + SERVER_IMAGE_HEADER_SIZE;
	if (length == 0 || length > SERVER_WINDOW_SIZE - SERVER_IMAGE_HEADER_SIZE) {
		printf("boot: server image length %lu out of range: running ROM server\n", (unsigned long)length);
		return;
	}
	if (crc32(payload, length) != expected) {
		printf("boot: server image CRC mismatch: running ROM server\n");
		return;
	}
	printf("boot: running uploaded server (%lu bytes)\n", (unsigned long)length);
	fflush(stdout);
	dcache_flush();
	icache_flush();
	((void (*)(void))payload)();
}
