/* RV32 MCORE platform of the ztam runtime: memory-mapped registers of the SoC.
 *
 * The register addresses are macros so the SoC build can pass the values of its
 * generated CSR map (-DZTAM_TE_QUEUE_ADDR=... etc.); the defaults below are only
 * placeholders until the TensorEngine and message-queue CSRs exist.
 *
 *   ZTAM_TE_QUEUE_ADDR     write: one instruction word into the TensorEngine queue
 *   ZTAM_TE_SPACE_ADDR     read: free words in the queue (0 = full)
 *   ZTAM_TE_CALLBACK_ADDR  read: bit 31 = a CALLBACK marker was reached, bits 30:0 = its tag (pops)
 *   ZTAM_MSGQ_IN_ADDR      read: bit 31 = valid, pops; ZTAM_MSGQ_IN_DATA_ADDR: the word
 *   ZTAM_MSGQ_OUT_ADDR     write: one word to the host
 *   ZTAM_UART_ADDR         write: one character (LiteX uart_rxtx), ZTAM_UART_FULL_ADDR: TX full
 */
#include "../ztam_isa.h"
#include "../ztam_platform.h"

#ifndef ZTAM_TE_QUEUE_ADDR
#define ZTAM_TE_QUEUE_ADDR 0xF0008000u
#endif
#ifndef ZTAM_TE_SPACE_ADDR
#define ZTAM_TE_SPACE_ADDR 0xF0008004u
#endif
#ifndef ZTAM_TE_CALLBACK_ADDR
#define ZTAM_TE_CALLBACK_ADDR 0xF0008008u
#endif
#ifndef ZTAM_MSGQ_IN_ADDR
#define ZTAM_MSGQ_IN_ADDR 0xF0009000u
#endif
#ifndef ZTAM_MSGQ_IN_DATA_ADDR
#define ZTAM_MSGQ_IN_DATA_ADDR 0xF0009004u
#endif
#ifndef ZTAM_MSGQ_OUT_ADDR
#define ZTAM_MSGQ_OUT_ADDR 0xF0009008u
#endif
#ifndef ZTAM_UART_ADDR
#define ZTAM_UART_ADDR 0xF0001000u
#endif
#ifndef ZTAM_UART_FULL_ADDR
#define ZTAM_UART_FULL_ADDR 0xF0001004u
#endif

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

void ztam_platform_issue(const uint32_t *words, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        while (REG(ZTAM_TE_SPACE_ADDR) == 0) {
        }
        REG(ZTAM_TE_QUEUE_ADDR) = words[i];
    }
}

int ztam_platform_callback_pop(uint32_t *tag)
{
    uint32_t v = REG(ZTAM_TE_CALLBACK_ADDR);
    if (!(v >> 31))
        return 0;
    *tag = v & 0x7FFFFFFFu;
    return 1;
}

int ztam_platform_msgq_pop(uint32_t *value)
{
    if (!(REG(ZTAM_MSGQ_IN_ADDR) >> 31))
        return 0;
    *value = REG(ZTAM_MSGQ_IN_DATA_ADDR);
    return 1;
}

void ztam_platform_msgq_push(uint32_t value)
{
    REG(ZTAM_MSGQ_OUT_ADDR) = value;
}

void ztam_platform_putchar(int c)
{
    while (REG(ZTAM_UART_FULL_ADDR)) {
    }
    REG(ZTAM_UART_ADDR) = (uint32_t)c;
}

void ztam_platform_ctx_init(ztam_ctx_t *ctx, void *stack, size_t size, void (*entry)(void))
{
    int i;
    ctx->ra = (uint32_t)(uintptr_t)entry;
    ctx->sp = ((uint32_t)(uintptr_t)stack + (uint32_t)size) & ~15u;
    for (i = 0; i < 12; i++)
        ctx->s[i] = 0;
}
