/* Host platform of the ztam runtime: runs MCORE programs on a PC for tests.
 *
 * - every instruction issued is written as one line "I <hex words...>" to the file
 *   named by $ZTAM_HOST_TRACE (nothing is recorded when it is unset);
 * - the host-to-MCORE message queue is read from $ZTAM_HOST_MSGQ (integers separated
 *   by spaces or commas); reading past its end stops the program with status 3;
 * - words the MCORE writes to the host are recorded as "M <decimal>" lines;
 * - the TensorEngine is taken to complete instantly: a CALLBACK marker is reported
 *   back as soon as it is issued;
 * - threads are ucontext contexts.
 */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>

#include "../ztam_isa.h"
#include "../ztam_platform.h"

static FILE *trace;
static int trace_opened;
static const char *msgq_in;
static int msgq_loaded;
static uint32_t done_tags[64];
static unsigned done_head, done_tail;

static FILE *trace_file(void)
{
    if (!trace_opened) {
        const char *path = getenv("ZTAM_HOST_TRACE");
        trace_opened = 1;
        trace = path ? fopen(path, "w") : NULL;
        if (path && !trace) {
            fprintf(stderr, "ztam host: cannot write %s\n", path);
            exit(2);
        }
    }
    return trace;
}

void ztam_platform_issue(const uint32_t *words, int n)
{
    FILE *f = trace_file();
    int i;
    if (f) {
        fputc('I', f);
        for (i = 0; i < n; i++)
            fprintf(f, " %08x", (unsigned)words[i]);
        fputc('\n', f);
        fflush(f);
    }
    if (((words[0] >> ZTAM_HDR_OPCODE_LSB) & ZTAM_HDR_OPCODE_MASK) == ZTAM_OP_CALLBACK) {
        done_tags[done_tail++ % 64] = words[ZTAM_CB_TAG_WORD];
    }
}

int ztam_platform_callback_pop(uint32_t *tag)
{
    if (done_head == done_tail)
        return 0;
    *tag = done_tags[done_head++ % 64];
    return 1;
}

int ztam_platform_msgq_pop(uint32_t *value)
{
    char *end;
    long long v;
    if (!msgq_loaded) {
        msgq_in = getenv("ZTAM_HOST_MSGQ");
        msgq_loaded = 1;
    }
    while (msgq_in && (*msgq_in == ' ' || *msgq_in == ','))
        msgq_in++;
    if (!msgq_in || !*msgq_in) {
        fprintf(stderr, "ztam host: the message queue from the host is empty\n");
        exit(3);
    }
    v = strtoll(msgq_in, &end, 0);
    if (end == msgq_in) {
        fprintf(stderr, "ztam host: bad ZTAM_HOST_MSGQ near '%s'\n", msgq_in);
        exit(2);
    }
    msgq_in = end;
    *value = (uint32_t)v;
    return 1;
}

void ztam_platform_msgq_push(uint32_t value)
{
    FILE *f = trace_file();
    if (f) {
        fprintf(f, "M %d\n", (int)value);
        fflush(f);
    }
}

void ztam_platform_putchar(int c)
{
    putchar(c);
}

void ztam_platform_ctx_init(ztam_ctx_t *ctx, void *stack, size_t size, void (*entry)(void))
{
    getcontext(&ctx->uc);
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    makecontext(&ctx->uc, entry, 0);
}

void ztam_platform_ctx_switch(ztam_ctx_t *from, ztam_ctx_t *to)
{
    swapcontext(&from->uc, &to->uc);
}
