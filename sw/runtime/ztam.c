/* ztam runtime: tasks, message queues, printf and tensor-instruction issue.
 * The descriptor arithmetic here is mirrored exactly by sw/mcore/lower.py (SideBuilder). */
#include <stdarg.h>
#include <string.h>

#include "ztam.h"
#include "ztam_platform.h"

#ifndef ZTAM_CHILD_STACK_BYTES
#if defined(__riscv) && !defined(ZTAM_HOST)
#define ZTAM_CHILD_STACK_BYTES 4096
#else
#define ZTAM_CHILD_STACK_BYTES (64 * 1024)
#endif
#endif
#define ZTAM_CALLBACK_SLOTS 16

enum { TASK_NONE = 0, TASK_RUNNING = 1, TASK_DONE = 2 };

static struct {
    ztam_ctx_t ctx;
    int state;
    void (*func)(void *, int);
    void *parm;
} tasks[2] = {{.state = TASK_RUNNING}};
static int current;
static uint8_t child_stack[ZTAM_CHILD_STACK_BYTES] __attribute__((aligned(16)));
static uint32_t errors;
static struct { void (*func)(int); int32_t parm; } callbacks[ZTAM_CALLBACK_SLOTS];

uint32_t ztamErrors(void) { return errors; }
void ztamClearErrors(void) { errors = 0; }

/* ---- tasks ---- */

static void child_entry(void)
{
    tasks[1].func(tasks[1].parm, 1);
    tasks[1].state = TASK_DONE;
    current = 0;
    ztam_platform_ctx_switch(&tasks[1].ctx, &tasks[0].ctx);
    for (;;) {
    }
}

void ztamTaskSpawn(void (*func)(void *, int), void *parm, int pid)
{
    if (pid != 1 || tasks[1].state == TASK_RUNNING || current != 0) {
        errors |= ZTAM_ERR_SPEC;
        return;
    }
    tasks[1].func = func;
    tasks[1].parm = parm;
    tasks[1].state = TASK_RUNNING;
    ztam_platform_ctx_init(&tasks[1].ctx, child_stack, sizeof child_stack, child_entry);
}

int ztamTaskStatus(int pid)
{
    return (pid == 0 || pid == 1) && tasks[pid].state == TASK_RUNNING;
}

int ztamTaskPid(void) { return current; }

void ztamTaskYield(void)
{
    int prev = current, next = 1 - current;
    ztamPoll();
    if (tasks[next].state != TASK_RUNNING)
        return;
    current = next;
    ztam_platform_ctx_switch(&tasks[prev].ctx, &tasks[next].ctx);
}

/* ---- message queues ---- */

static uint32_t msgq_read(void)
{
    uint32_t v;
    ztamPoll();
    while (!ztam_platform_msgq_pop(&v))
        ztamTaskYield();
    return v;
}

void *ztamMsgqReadPointer(void) { return (void *)(uintptr_t)msgq_read(); }
int ztamMsgqReadInt(void) { return (int)msgq_read(); }
void ztamMsgqWritePointer(void *p) { ztam_platform_msgq_push((uint32_t)(uintptr_t)p); }
void ztamMsgqWriteInt(int v) { ztam_platform_msgq_push((uint32_t)v); }

/* ---- printf: %s, %d, %% ---- */

static void put_string(const char *s)
{
    if (!s)
        s = "(null)";
    while (*s)
        ztam_platform_putchar(*s++);
}

static void put_int(int v)
{
    char buf[12];
    int n = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    if (v < 0)
        ztam_platform_putchar('-');
    do {
        buf[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        ztam_platform_putchar(buf[--n]);
}

void ztamPrintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            ztam_platform_putchar(*fmt);
            continue;
        }
        fmt++;
        if (*fmt == 'd')
            put_int(va_arg(ap, int));
        else if (*fmt == 's')
            put_string(va_arg(ap, const char *));
        else if (*fmt == '%')
            ztam_platform_putchar('%');
        else {      /* unsupported conversion: print it as text */
            ztam_platform_putchar('%');
            if (!*fmt)
                break;
            ztam_platform_putchar(*fmt);
        }
    }
    va_end(ap);
}

/* ---- tensor instructions ---- */

uint32_t ztamBuildKernelFunc(uint32_t addr, int np, int nt)
{
    return ztam_kernel_func(addr, (uint32_t)np, (uint32_t)nt);
}

static uint32_t element_units(const ztam_side_t *s)
{
    int bytes = s->space == ZTAM_SPACE_DDR || s->space == ZTAM_SPACE_SCRATCH;
    return (bytes && s->dtype == ZTAM_DTYPE_INT16) ? 2u : 1u;
}

void ztamXferInit(ztam_xfer_t *x, uint32_t scatter, uint32_t scatter_n, uint32_t proc_en, uint32_t proc, int32_t pad)
{
    memset(x, 0, sizeof *x);
    x->scatter = scatter;
    x->scatter_n = scatter_n & 7u;
    x->proc_en = proc_en;
    x->proc = proc & 3u;
    x->pad = (uint32_t)pad & 0xFFFFu;
}

void ztamSideInit(ztam_xfer_t *x, ztam_side_t *s, uint32_t space, int32_t dtype, uint32_t base)
{
    memset(s, 0, sizeof *s);
    if (dtype < 0 || dtype > ZTAM_DTYPE_INT16) {
        x->err |= ZTAM_ERR_SPEC;
        dtype = ZTAM_DTYPE_INT16;
    }
    s->space = space;
    s->dtype = (uint32_t)dtype;
    s->base = base;
}

void ztamSideDim(ztam_xfer_t *x, ztam_side_t *s, int level, int32_t begin, int32_t stride, int32_t end,
                 int32_t size, int32_t pitch, uint32_t flags)
{
    uint32_t units = element_units(s), off;
    int32_t count;
    ztam_level_t *lv;
    if (stride == 0 || level < 0 || level >= ZTAM_MAX_LEVELS) {
        x->err |= ZTAM_ERR_SPEC;
        return;
    }
    count = (end - begin) / stride + 1;
    if (count <= 0) {
        x->err |= ZTAM_ERR_SPEC;
        return;
    }
    lv = &s->levels[level];
    lv->count = (uint32_t)count;
    lv->step = (int32_t)((uint32_t)stride * (uint32_t)pitch * units);
    lv->start = begin;
    lv->stride = stride;
    lv->bound = (uint32_t)size;
    off = (uint32_t)begin * (uint32_t)pitch * units;
    if (flags & ZTAM_DIM_CHECK)
        s->check_mask |= 1u << level;
    if (flags & ZTAM_DIM_BCAST)
        s->bcast_mask |= 1u << level;
    if (flags & ZTAM_DIM_OVL) {
        s->ovl_mask |= 1u << level;
        s->ovl_start = (int32_t)((uint32_t)s->ovl_start + off);
    }
    s->base += off;
    if ((uint32_t)level + 1 > s->nlevels)
        s->nlevels = (uint32_t)level + 1;
}

void ztamSideOverlap(ztam_xfer_t *x, ztam_side_t *s, int32_t limit)
{
    (void)x;
    s->ovl_limit = (uint32_t)limit * element_units(s);
}

void ztamSideCast(ztam_xfer_t *x, int32_t cast_elements, int32_t declared_elements)
{
    if (cast_elements > declared_elements)
        x->err |= ZTAM_ERR_CAST;
}

uint32_t ztamSideCount(const ztam_side_t *s)
{
    uint32_t i, n = 1;
    for (i = 0; i < s->nlevels; i++)
        if (!((s->bcast_mask >> i) & 1u))
            n *= s->levels[i].count;
    return n;
}

/* A side's element count, or ZTAM_ELEMENT_COUNT_LIMIT once it reaches it:
 * each level's count is below 2**31 and the product stops at the limit, so
 * nothing wraps (ztamSideCount's 32 bits do: 65536 x 65536 is 0 there). */
static uint64_t side_count_limited(const ztam_side_t *s)
{
    uint32_t i;
    uint64_t n = 1;
    for (i = 0; i < s->nlevels; i++)
        if (!((s->bcast_mask >> i) & 1u)) {
            n *= s->levels[i].count;
            if (n >= ZTAM_ELEMENT_COUNT_LIMIT)
                return ZTAM_ELEMENT_COUNT_LIMIT;
        }
    return n;
}

void ztamIssueXfer(ztam_xfer_t *x)
{
    uint32_t w[ZTAM_XFER_MAX_WORDS];
    uint64_t count;
    int n;
    if (x->err) {
        errors |= x->err;
        return;
    }
    /* COUNT as the TensorEngine sets it (spec/tensor_isa.py, Transfer.count_error) */
    count = side_count_limited(&x->dst);
    if (x->dst.space != ZTAM_SPACE_SPU
        && (count != side_count_limited(&x->src) || count >= ZTAM_ELEMENT_COUNT_LIMIT)) {
        errors |= ZTAM_ERR_COUNT;
        return;
    }
    n = ztam_encode_xfer(x, (uint32_t)current, w);
    ztam_platform_issue(w, n);
}

void ztamExe(uint32_t func, int32_t np, int32_t nt)
{
    uint32_t w[ZTAM_EXE_WORDS] = {0}, f = func;
    if (np >= 0)
        f = ztam_kernel_func(f & ZTAM_FUNC_ADDR_MASK, (uint32_t)np, (f >> ZTAM_FUNC_NT_LSB) & ZTAM_FUNC_NT_MASK);
    if (nt >= 0)
        f = ztam_kernel_func(f & ZTAM_FUNC_ADDR_MASK, (f >> ZTAM_FUNC_NP_LSB) & ZTAM_FUNC_NP_MASK, (uint32_t)nt);
    ZTAM_PUT(w, ZTAM_HDR_OPCODE, ZTAM_OP_EXE);
    ZTAM_PUT(w, ZTAM_HDR_PROCESS, current);
    ZTAM_PUT(w, ZTAM_HDR_LENGTH, ZTAM_EXE_WORDS);
    ZTAM_PUT(w, ZTAM_EXE_FUNC, f);
    ztam_platform_issue(w, ZTAM_EXE_WORDS);
}

void ztamCallback(void (*func)(int), int32_t parm)
{
    uint32_t w[ZTAM_CALLBACK_WORDS] = {0};
    int slot;
    for (;;) {
        for (slot = 0; slot < ZTAM_CALLBACK_SLOTS && callbacks[slot].func; slot++) {
        }
        if (slot < ZTAM_CALLBACK_SLOTS)
            break;
        ztamPoll();     /* all slots wait for the engine: let it catch up */
        for (slot = 0; slot < ZTAM_CALLBACK_SLOTS && callbacks[slot].func; slot++) {
        }
        if (slot < ZTAM_CALLBACK_SLOTS)
            break;
        ztamTaskYield();
    }
    callbacks[slot].func = func;
    callbacks[slot].parm = parm;
    ZTAM_PUT(w, ZTAM_HDR_OPCODE, ZTAM_OP_CALLBACK);
    ZTAM_PUT(w, ZTAM_HDR_PROCESS, current);
    ZTAM_PUT(w, ZTAM_HDR_LENGTH, ZTAM_CALLBACK_WORDS);
    ZTAM_PUT(w, ZTAM_CB_TAG, slot);
    ZTAM_PUT(w, ZTAM_CB_PARM, parm);
    ztam_platform_issue(w, ZTAM_CALLBACK_WORDS);
}

void ztamPoll(void)
{
    uint32_t tag;
    while (ztam_platform_callback_pop(&tag)) {
        void (*f)(int);
        if (tag >= ZTAM_CALLBACK_SLOTS || !callbacks[tag].func) {
            errors |= ZTAM_ERR_QUEUE;
            continue;
        }
        f = callbacks[tag].func;
        callbacks[tag].func = 0;
        f(callbacks[tag].parm);
    }
}

void ztamLog(int on)
{
    uint32_t w[ZTAM_LOG_WORDS] = {0};
    ZTAM_PUT(w, ZTAM_HDR_OPCODE, ZTAM_OP_LOG);
    ZTAM_PUT(w, ZTAM_HDR_PROCESS, current);
    ZTAM_PUT(w, ZTAM_HDR_LENGTH, ZTAM_LOG_WORDS);
    ZTAM_PUT(w, ZTAM_LOG_ON, on ? 1 : 0);
    ztam_platform_issue(w, ZTAM_LOG_WORDS);
}
