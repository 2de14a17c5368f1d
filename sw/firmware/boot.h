#ifndef TSOC_BOOT_H
#define TSOC_BOOT_H
#include <stdint.h>

/* Checks the server image in the server window (spec/server_image.py: magic,
 * length, CRC-32).  Returns NULL and its payload length when it is valid,
 * else why it is not. */
const char *server_image_check(uint32_t *payload_length);

/* Jumps to the payload of the server image (never returns). */
void server_image_run(void) __attribute__((noreturn));

/* At reset: runs a valid server image found in the server window (uploaded
 * by the host with WServer, then the device reset); returns when there is
 * none. */
void boot_uploaded_server(void);
#endif
