/* The TensorEngine activity report of the programmer guide (section 11.2.1),
 * printed from the engine's trace records; the same text as sw/te_trace.py text().
 *
 *            XX PP SS PP SS DD
 *            01 WR WR WR WR WR
 * [      23]    +            +
 * [       0]    |            | PCORE V8 X2  <= DDR V8 X2
 *
 * Left: clocks since the previous line.  Columns: PCORE process 0/1 busy, then
 * write/read of PCORE and SCRATCH for process 0 and 1, and DDR write/read; '+' an
 * activity starts or ends on this line, '|' it goes on.  No printf: the MCORE
 * firmware prints through a putchar hook.
 */
#include "te_trace.h"

#define FIELD(info, name) (((info) >> TE_TRACE_##name##_LSB) & TE_TRACE_##name##_MASK)

enum { WIDTH = 17 };
/* Report columns (character positions after "[%8u] "). */
enum { COL_BUSY0 = 0, COL_BUSY1 = 1, COL_P0W = 3, COL_S0W = 6, COL_P1W = 9, COL_S1W = 12, COL_DW = 15 };

static const char *const HEADER[2] = {"           XX PP SS PP SS DD", "           01 WR WR WR WR WR"};

static void puts_(te_trace_put_fn put, const char *s)
{
    while (*s)
        put(*s++);
}

static void put_uint(te_trace_put_fn put, uint32_t v, int width)
{
    char buf[11];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (width-- > n)
        put(' ');
    while (n)
        put(buf[--n]);
}

static const char *space_name(uint32_t space)
{
    switch (space) {
    case TE_TRACE_SPACE_DDR: return "DDR";
    case TE_TRACE_SPACE_SCRATCH: return "SCRATCH";
    case TE_TRACE_SPACE_PCORE_PRIVATE:
    case TE_TRACE_SPACE_PCORE_SHARED: return "PCORE";
    default: return "SPU";
    }
}

/* Write column (read column = +1) of a space for a process, or -1 (the SPU has none). */
static int column(uint32_t space, uint32_t process)
{
    switch (space) {
    case TE_TRACE_SPACE_DDR: return COL_DW;
    case TE_TRACE_SPACE_SCRATCH: return process ? COL_S1W : COL_S0W;
    case TE_TRACE_SPACE_PCORE_PRIVATE:
    case TE_TRACE_SPACE_PCORE_SHARED: return process ? COL_P1W : COL_P0W;
    default: return -1;
    }
}

static uint32_t transfer_columns(uint32_t info)
{
    uint32_t cols = 0;
    int w = column(FIELD(info, DST), FIELD(info, PROCESS));
    int r = column(FIELD(info, SRC), FIELD(info, PROCESS));
    if (w >= 0)
        cols |= 1u << w;
    if (r >= 0)
        cols |= 1u << (r + 1);
    return cols;
}

static void put_side(te_trace_put_fn put, uint32_t space, uint32_t v, uint32_t x2)
{
    puts_(put, space_name(space));
    puts_(put, " V");
    put_uint(put, 1u << v, 0);
    puts_(put, x2 ? " X2" : " X1");
}

static void line(te_trace_state_t *st, uint32_t marks, uint32_t ts, uint32_t desc_info, int desc,
                 te_trace_put_fn put)
{
    char cells[WIDTH];
    int n = WIDTH;
    for (int c = 0; c < WIDTH; c++)
        cells[c] = (marks >> c & 1) ? '+' : (st->active >> c & 1) ? '|' : ' ';
    put('[');
    put_uint(put, st->have_last ? ts - st->last : 0, 8);
    puts_(put, "] ");
    st->have_last = 1;
    st->last = ts;
    if (!desc)
        while (n > 0 && cells[n - 1] == ' ')
            n--;
    for (int c = 0; c < n; c++)
        put(cells[c]);
    if (desc) {
        put(' ');
        put_side(put, FIELD(desc_info, DST), FIELD(desc_info, DST_V), FIELD(desc_info, DST_X2));
        puts_(put, "  <= ");
        put_side(put, FIELD(desc_info, SRC), FIELD(desc_info, SRC_V), FIELD(desc_info, SRC_X2));
        if (FIELD(desc_info, SCATTER))
            puts_(put, " SCATTER");
    }
    put('\n');
}

void te_trace_init(te_trace_state_t *st)
{
    st->have_last = 0;
    st->last = 0;
    st->active = 0;
}

void te_trace_print_record(te_trace_state_t *st, uint32_t info, uint32_t ts, te_trace_put_fn put)
{
    uint32_t busy = FIELD(info, BUSY);
    uint32_t busy_cols = (busy & 1u) << COL_BUSY0 | (busy >> 1 & 1u) << COL_BUSY1;
    uint32_t busy_mask = 1u << COL_BUSY0 | 1u << COL_BUSY1;
    uint32_t cols;

    switch (FIELD(info, KIND)) {
    case TE_TRACE_KIND_LOG_ON:
        puts_(put, HEADER[0]);
        put('\n');
        puts_(put, HEADER[1]);
        put('\n');
        st->active = busy_cols;
        st->have_last = 1;
        st->last = ts;
        break;
    case TE_TRACE_KIND_BUSY:
        cols = (st->active ^ busy_cols) & busy_mask;
        st->active = (st->active & ~busy_mask) | busy_cols;
        line(st, cols, ts, 0, 0, put);
        break;
    case TE_TRACE_KIND_XFER_START:
        cols = transfer_columns(info);
        line(st, cols, ts, 0, 0, put);
        st->active |= cols;
        line(st, 0, ts, info, 1, put);
        break;
    case TE_TRACE_KIND_XFER_END:
        cols = transfer_columns(info);
        st->active &= ~cols;
        line(st, cols, ts, 0, 0, put);
        break;
    case TE_TRACE_KIND_LOG_OFF:
        st->have_last = 0;
        break;
    default:
        break;
    }
}

int te_trace_print(te_trace_state_t *st, te_trace_read_fn read, te_trace_put_fn put)
{
    int n = 0;
    for (;;) {
        uint32_t info = read();
        if (!FIELD(info, VALID))
            return n;
        te_trace_print_record(st, info, read(), put);
        n++;
    }
}

static void put_hex(te_trace_put_fn put, uint32_t v)
{
    for (int s = 28; s >= 0; s -= 4)
        put("0123456789abcdef"[v >> s & 15]);
}

int te_trace_raw(te_trace_read_fn read, te_trace_put_fn put)
{
    int n = 0;
    for (;;) {
        uint32_t info = read();
        if (!FIELD(info, VALID))
            return n;
        put_hex(put, info);
        put(' ');
        put_hex(put, read());
        put('\n');
        n++;
    }
}
