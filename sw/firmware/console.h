#ifndef TSOC_CONSOLE_H
#define TSOC_CONSOLE_H
void uart_putc(char c);
#endif
