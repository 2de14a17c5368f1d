/* RV32 MCORE platform of the ztam runtime on the tensorsoc SoC.
 *
 * Registers come from the SoC's generated CSR map (<generated/csr.h>), so the
 * firmware build always matches the gateware:
 *
 *   message queue from the host: the host port's message FIFO
 *       (cores/host_spi/core.py); each message reads as two words: its code
 *       (spec/host_protocol.py Msg) then its length word;
 *   message queue to the host: words go in (pointer, length) pairs and set
 *       what the host's next RTensor returns;
 *   debug output: the UART;
 *   TensorEngine queue and CALLBACK markers: the TensorEngine's CSRs when the
 *       SoC has one (CSR_TENSOR_ENGINE_BASE, cores/tensor_engine/core.py):
 *       queue (write a word), queue_space (free words), callback (bit 31 a
 *       marker reached, 30..0 its tag; the read removes it); without one,
 *       issuing an instruction is a fatal firmware error (reported on the
 *       console).
 */
#include <stdio.h>
#include <stdlib.h>
#include <generated/csr.h>

#include "../ztam_isa.h"
#include "../ztam_platform.h"

void ztam_platform_issue(const uint32_t *words, int n)
{
#ifdef CSR_TENSOR_ENGINE_BASE
    for (int i = 0; i < n; i++) {
        while (tensor_engine_queue_space_read() == 0) {
        }
        tensor_engine_queue_write(words[i]);
    }
#else
    (void)words;
    printf("ztam: fatal: %d-word tensor instruction issued but this SoC has no TensorEngine\n", n);
    abort();
#endif
}

int ztam_platform_callback_pop(uint32_t *tag)
{
#ifdef CSR_TENSOR_ENGINE_BASE
    uint32_t v = tensor_engine_callback_read();
    if (!(v >> 31))
        return 0;
    *tag = v & 0x7FFFFFFFu;
    return 1;
#else
    (void)tag;
    return 0;
#endif
}

int ztam_platform_msgq_pop(uint32_t *value)
{
#ifdef CSR_HOST_PORT_BASE
    static int have_length;
    static uint32_t length;
    if (have_length) {
        have_length = 0;
        *value = length;
        return 1;
    }
    if (!host_port_msg_valid_read())
        return 0;
    *value = host_port_msg_code_read();
    length = host_port_msg_length_read();
    host_port_msg_pop_write(1);
    have_length = 1;
    return 1;
#else
    (void)value;
    return 0;
#endif
}

void ztam_platform_msgq_push(uint32_t value)
{
#ifdef CSR_HOST_PORT_BASE
    static int have_pointer;
    static uint32_t pointer;
    if (!have_pointer) {
        pointer = value;
        have_pointer = 1;
        return;
    }
    have_pointer = 0;
    host_port_rtensor_addr_write(pointer);
    host_port_rtensor_len_write(value);
#else
    (void)value;
#endif
}

void ztam_platform_putchar(int c)
{
    while (uart_txfull_read()) {
    }
    uart_rxtx_write((uint32_t)c);
}

void ztam_platform_ctx_init(ztam_ctx_t *ctx, void *stack, size_t size, void (*entry)(void))
{
    int i;
    ctx->ra = (uint32_t)(uintptr_t)entry;
    ctx->sp = ((uint32_t)(uintptr_t)stack + (uint32_t)size) & ~15u;
    for (i = 0; i < 12; i++)
        ctx->s[i] = 0;
}
