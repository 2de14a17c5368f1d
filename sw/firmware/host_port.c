#include <generated/csr.h>
#include "host_port.h"

void host_port_finish(uint32_t bits, uint32_t cause)
{
	host_port_status_clear_write((bits & 7) | ((cause & 0xff) << CSR_HOST_PORT_STATUS_CLEAR_ERROR_OFFSET));
}

void host_port_set_rtensor(const volatile void *addr, uint32_t length)
{
	host_port_rtensor_addr_write((uint32_t)(uintptr_t)addr);
	host_port_rtensor_len_write(length);
}

void host_port_set_rtimings(const volatile void *addr, uint32_t length)
{
	host_port_rtimings_addr_write((uint32_t)(uintptr_t)addr);
	host_port_rtimings_len_write(length);
}

void host_port_set_input_len(uint32_t length) { host_port_input_len_write(length); }

void host_port_set_spec(const uint8_t spec[16])
{
	uint32_t w[4];
	for (int i = 0; i < 4; i++)
		w[i] = spec[4 * i] | (spec[4 * i + 1] << 8) | (spec[4 * i + 2] << 16) | ((uint32_t)spec[4 * i + 3] << 24);
	host_port_spec0_write(w[0]);
	host_port_spec1_write(w[1]);
	host_port_spec2_write(w[2]);
	host_port_spec3_write(w[3]);
}

int host_port_qpi(void) { return host_port_mode_read() & 1; }
