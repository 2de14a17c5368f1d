#ifndef TSOC_SERVER_H
#define TSOC_SERVER_H
/* The inference server: serves host commands forever. */
void server_run(void) __attribute__((noreturn));
#endif
