#include <stdio.h>
#include <stdlib.h>
#include "platform.h"

void platform_exit(int code)
{
	(void)code;   /* only a simulation (SimControl) reports it */
	fflush(stdout);
	/* Let the UART drain before the simulation stops. */
	for (int i = 0; i < 64 && !uart_txempty_read(); i++)
		;
#ifdef CSR_SIM_CTRL_BASE
	sim_ctrl_finish_write((1u << CSR_SIM_CTRL_FINISH_VALID_OFFSET) | ((unsigned)code & 0xff));
#endif
	for (;;)
		;
}

/* picolibc calls _exit when main returns. */
void _exit(int code)
{
	platform_exit(code);
}
