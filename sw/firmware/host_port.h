/* Driver of the SPI/QPI host port (cores/host_spi/core.py). */
#ifndef TSOC_HOST_PORT_H
#define TSOC_HOST_PORT_H
#include <stdint.h>

/* Messages from the host port are read with the ztam message-queue API
 * (sw/runtime/platform/litex.c). */
/* Status bits 0..2: the firmware clears them when a command is done, and
 * raises the command's error (an ErrorCause, 0 for none) in the same write,
 * so the host never sees the busy bit clear before the error appears. */
void host_port_finish(uint32_t bits, uint32_t cause);
/* What RTensor / RTimings return. */
void host_port_set_rtensor(const volatile void *addr, uint32_t length);
void host_port_set_rtimings(const volatile void *addr, uint32_t length);
/* Expected WTensor length and Acquire frame length (0: unchecked). */
void host_port_set_input_len(uint32_t length);
/* The 16 RSpec bytes. */
void host_port_set_spec(const uint8_t spec[16]);
int host_port_qpi(void);
#endif
