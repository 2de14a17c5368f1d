/* The hardware the ztam runtime needs, as a handful of functions.
 *
 * platform/host.c implements them on a PC (records the instruction words, scripted
 * message queue, ucontext threads); platform/litex.c on the RV32 MCORE (memory-mapped
 * TensorEngine queue, message queue, UART; context switch in platform/ctx_rv32.S).
 */
#ifndef ZTAM_PLATFORM_H
#define ZTAM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Issue one instruction (n words) to the TensorEngine queue. */
void ztam_platform_issue(const uint32_t *words, int n);
/* Message queue from the host: 1 and *value if a word was available, else 0. */
int ztam_platform_msgq_pop(uint32_t *value);
/* Message queue to the host. */
void ztam_platform_msgq_push(uint32_t value);
/* One character of debug output. */
void ztam_platform_putchar(int c);
/* CALLBACK markers the engine has reached: 1 and *tag if one is pending, else 0. */
int ztam_platform_callback_pop(uint32_t *tag);

/* Task contexts. ctx_init prepares ctx to start entry() on the given stack the first
 * time it is switched to; ctx_switch saves the running context in from, resumes to. */
#if defined(__riscv) && !defined(ZTAM_HOST)
typedef struct { uint32_t ra, sp, s[12]; } ztam_ctx_t;
#else
#include <ucontext.h>
typedef struct { ucontext_t uc; } ztam_ctx_t;
#endif
void ztam_platform_ctx_init(ztam_ctx_t *ctx, void *stack, size_t size, void (*entry)(void));
void ztam_platform_ctx_switch(ztam_ctx_t *from, ztam_ctx_t *to);

#endif /* ZTAM_PLATFORM_H */
