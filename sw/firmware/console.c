/* Console on the LiteX UART: picolibc's stdio goes through uart_putc. */
#include <stdio.h>
#include <generated/csr.h>

#include "console.h"

void uart_putc(char c)
{
	while (uart_txfull_read())
		;
	uart_rxtx_write((unsigned char)c);
}

static int console_putc(char c, FILE *file)
{
	(void)file;
	if (c == '\n')
		uart_putc('\r');
	uart_putc(c);
	return (unsigned char)c;
}

static int console_getc(FILE *file)
{
	(void)file;
	while (uart_rxempty_read())
		;
	int c = uart_rxtx_read();
	uart_ev_pending_write(1 << CSR_UART_EV_PENDING_RX_OFFSET);
	return c;
}

static FILE console_stream = FDEV_SETUP_STREAM(console_putc, console_getc, NULL, _FDEV_SETUP_RW);
FILE *const stdin = &console_stream;
FILE *const stdout = &console_stream;
FILE *const stderr = &console_stream;
