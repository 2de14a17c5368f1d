/* Boot path (datasheet: "with" and "without a flash chip").
 *
 * The ROM holds the default server.  A server uploaded by the host lands in
 * the server window at the top of main RAM, with the header of
 * spec/server_image.py.  The running server checks it and jumps to it
 * (server.c); at reset the ROM also checks the window and runs a valid image
 * found there, else it runs the ROM server. */
#include <stdio.h>
#include <stdint.h>
#include <generated/soc.h>

#include "boot.h"
#include "crc32.h"
#include "platform.h"
#include "server_image.h"

#define HEADER ((const volatile uint32_t *)SERVER_WINDOW_BASE)
#define PAYLOAD ((const volatile uint8_t *)SERVER_WINDOW_BASE + SERVER_IMAGE_HEADER_SIZE)

const char *server_image_check(uint32_t *payload_length)
{
	uint32_t length = HEADER[SERVER_IMAGE_OFF_LENGTH / 4];
	if (HEADER[SERVER_IMAGE_OFF_MAGIC / 4] != SERVER_IMAGE_MAGIC)
		return "bad magic";
	if (length == 0 || length > SERVER_WINDOW_SIZE - SERVER_IMAGE_HEADER_SIZE)
		return "length out of range";
	if (crc32(PAYLOAD, length) != HEADER[SERVER_IMAGE_OFF_CRC32 / 4])
		return "CRC mismatch";
	*payload_length = length;
	return NULL;
}

void server_image_run(void)
{
	fflush(stdout);
	dcache_flush();
	icache_flush();
	((void (*)(void))PAYLOAD)();
	for (;;)
		;
}

void boot_uploaded_server(void)
{
	uint32_t length;
	if (HEADER[SERVER_IMAGE_OFF_MAGIC / 4] != SERVER_IMAGE_MAGIC)
		return;   /* no image: the usual case */
	const char *why = server_image_check(&length);
	if (why) {
		printf("boot: server image %s: running ROM server\n", why);
		return;
	}
	printf("boot: running uploaded server (%lu bytes)\n", (unsigned long)length);
	server_image_run();
}
