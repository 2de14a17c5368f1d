/* Generated from spec/tensor_isa.py by `tsoc mcore header`: do not edit. */
#ifndef ZTAM_ISA_H
#define ZTAM_ISA_H

#include <stdint.h>

#define ZTAM_MAX_LEVELS 8
#define ZTAM_XFER_HEADER_WORDS 2
#define ZTAM_SIDE_HEADER_WORDS 5
#define ZTAM_SIDE_SHORT_HEADER_WORDS 3
#define ZTAM_LEVEL_WORDS 5
#define ZTAM_LEVEL_SHORT_WORDS 2
#define ZTAM_XFER_MAX_WORDS 92
#define ZTAM_ELEMENT_COUNT_LIMIT 4294967296ull  /* a side's element count reaching it is COUNT */
#define ZTAM_EXE_WORDS 2
#define ZTAM_CALLBACK_WORDS 3
#define ZTAM_LOG_WORDS 1
#define ZTAM_SPU_PROGRAMS 4
#define ZTAM_SPU_LOOKUP_SIZE 64
#ifndef SPU_LOOKUP_SIZE
#define SPU_LOOKUP_SIZE ZTAM_SPU_LOOKUP_SIZE
#endif

#define ZTAM_OP_NOP 0  /* no operation (padding); length 1 */
#define ZTAM_OP_TRANSFER 1  /* tensor transfer from the source side to the destination side (an SPU load is a transfer whose destination space is SPU) */
#define ZTAM_OP_EXE 2  /* EXE_LOCKSTEP: run a PCORE kernel on the process space of the instruction */
#define ZTAM_OP_CALLBACK 3  /* CALLBACK marker: when the engine reaches it, it reports the tag to the MCORE */
#define ZTAM_OP_LOG 4  /* LOG_ON / LOG_OFF: enable or disable the activity trace */

#define ZTAM_SPACE_DDR 0  /* byte-addressed: external memory (the guide's DDR/MEM) */
#define ZTAM_SPACE_SCRATCH 1  /* byte-addressed: TensorEngine scratch-pad */
#define ZTAM_SPACE_PCORE_PRIVATE 2  /* 16-bit word-addressed: PCORE private memory: word address ((pcore*NT)+thread)*PRIVATE_WORDS + offset */
#define ZTAM_SPACE_PCORE_SHARED 3  /* 16-bit word-addressed: PCORE shared memory: word address pcore*SHARED_WORDS + offset */
#define ZTAM_SPACE_SPU 4  /* 16-bit word-addressed: stream-processor tables: word address program*SPU_LOOKUP_SIZE + entry (destination only) */

#define ZTAM_DTYPE_UINT8 0
#ifndef DP_DATA_TYPE_UINT8
#define DP_DATA_TYPE_UINT8 ZTAM_DTYPE_UINT8
#endif
#define ZTAM_DTYPE_INT8 1
#ifndef DP_DATA_TYPE_INT8
#define DP_DATA_TYPE_INT8 ZTAM_DTYPE_INT8
#endif
#define ZTAM_DTYPE_INT16 2
#ifndef DP_DATA_TYPE_INT16
#define DP_DATA_TYPE_INT16 ZTAM_DTYPE_INT16
#endif

#define ZTAM_ERR_COUNT (1u << 0)  /* source and destination element counts differ, or one reaches 2**32 (transfer not executed) */
#define ZTAM_ERR_RANGE (1u << 1)  /* an in-bound element addresses memory outside the physical space (treated as out of bound) */
#define ZTAM_ERR_DECODE (1u << 2)  /* malformed instruction: bad opcode, space, data type, level count (0, or more than the engine's `SoCConfig.te_levels`, at most 8) or length, or process 1 where the PCOREs have one process space (`SoCConfig.pcore_processes`) (instruction skipped) */
#define ZTAM_ERR_SPEC (1u << 3)  /* bad range at run time: stride 0, empty range or more than MAX_LEVELS levels (transfer not issued) */
#define ZTAM_ERR_CAST (1u << 4)  /* dimension cast holds more elements than the declared variable (transfer not issued) */
#define ZTAM_ERR_QUEUE (1u << 5)  /* the engine reported a CALLBACK tag the runtime did not allocate */

/* Header (word 0 of every instruction) */
#define ZTAM_HDR_OPCODE_WORD 0
#define ZTAM_HDR_OPCODE_LSB 0
#define ZTAM_HDR_OPCODE_MASK 0xFu
#define ZTAM_HDR_PROCESS_WORD 0
#define ZTAM_HDR_PROCESS_LSB 4
#define ZTAM_HDR_PROCESS_MASK 0x1u
#define ZTAM_HDR_LENGTH_WORD 0
#define ZTAM_HDR_LENGTH_LSB 8
#define ZTAM_HDR_LENGTH_MASK 0xFFu

/* TRANSFER header (words 0-1) */
#define ZTAM_XFER_SCATTER_WORD 0
#define ZTAM_XFER_SCATTER_LSB 16
#define ZTAM_XFER_SCATTER_MASK 0x1u
#define ZTAM_XFER_SCATTER_N_WORD 0
#define ZTAM_XFER_SCATTER_N_LSB 17
#define ZTAM_XFER_SCATTER_N_MASK 0x7u
#define ZTAM_XFER_PROC_EN_WORD 0
#define ZTAM_XFER_PROC_EN_LSB 20
#define ZTAM_XFER_PROC_EN_MASK 0x1u
#define ZTAM_XFER_PROC_WORD 0
#define ZTAM_XFER_PROC_LSB 21
#define ZTAM_XFER_PROC_MASK 0x3u
#define ZTAM_XFER_PAD_WORD 1
#define ZTAM_XFER_PAD_LSB 0
#define ZTAM_XFER_PAD_MASK 0xFFFFu

/* Side header (5 words, 3 without an overlap group: words 3-4 only when ovl_mask is not 0; dst side at word 2, src side right after the dst levels) */
#define ZTAM_SIDE_SPACE_WORD 0
#define ZTAM_SIDE_SPACE_LSB 0
#define ZTAM_SIDE_SPACE_MASK 0x7u
#define ZTAM_SIDE_DTYPE_WORD 0
#define ZTAM_SIDE_DTYPE_LSB 3
#define ZTAM_SIDE_DTYPE_MASK 0x3u
#define ZTAM_SIDE_NLEVELS_WORD 0
#define ZTAM_SIDE_NLEVELS_LSB 8
#define ZTAM_SIDE_NLEVELS_MASK 0xFu
#define ZTAM_SIDE_CHECK_MASK_WORD 1
#define ZTAM_SIDE_CHECK_MASK_LSB 0
#define ZTAM_SIDE_CHECK_MASK_MASK 0xFFu
#define ZTAM_SIDE_OVL_MASK_WORD 1
#define ZTAM_SIDE_OVL_MASK_LSB 8
#define ZTAM_SIDE_OVL_MASK_MASK 0xFFu
#define ZTAM_SIDE_BCAST_MASK_WORD 1
#define ZTAM_SIDE_BCAST_MASK_LSB 16
#define ZTAM_SIDE_BCAST_MASK_MASK 0xFFu
#define ZTAM_SIDE_BASE_WORD 2
#define ZTAM_SIDE_BASE_LSB 0
#define ZTAM_SIDE_BASE_MASK 0xFFFFFFFFu
#define ZTAM_SIDE_OVL_START_WORD 3
#define ZTAM_SIDE_OVL_START_LSB 0
#define ZTAM_SIDE_OVL_START_MASK 0xFFFFFFFFu
#define ZTAM_SIDE_OVL_LIMIT_WORD 4
#define ZTAM_SIDE_OVL_LIMIT_LSB 0
#define ZTAM_SIDE_OVL_LIMIT_MASK 0xFFFFFFFFu

/* Loop level (level 0 = innermost, right after its side header): 5 words when the level is checked or overlapped, else count and step only (2 words) */
#define ZTAM_LEVEL_COUNT_WORD 0
#define ZTAM_LEVEL_COUNT_LSB 0
#define ZTAM_LEVEL_COUNT_MASK 0xFFFFFFFFu
#define ZTAM_LEVEL_STEP_WORD 1
#define ZTAM_LEVEL_STEP_LSB 0
#define ZTAM_LEVEL_STEP_MASK 0xFFFFFFFFu
#define ZTAM_LEVEL_START_WORD 2
#define ZTAM_LEVEL_START_LSB 0
#define ZTAM_LEVEL_START_MASK 0xFFFFFFFFu
#define ZTAM_LEVEL_STRIDE_WORD 3
#define ZTAM_LEVEL_STRIDE_LSB 0
#define ZTAM_LEVEL_STRIDE_MASK 0xFFFFFFFFu
#define ZTAM_LEVEL_BOUND_WORD 4
#define ZTAM_LEVEL_BOUND_LSB 0
#define ZTAM_LEVEL_BOUND_MASK 0xFFFFFFFFu

/* EXE instruction (2 words) */
#define ZTAM_EXE_FUNC_WORD 1
#define ZTAM_EXE_FUNC_LSB 0
#define ZTAM_EXE_FUNC_MASK 0xFFFFFFFFu

/* Kernel function word (EXE func field, ztamBuildKernelFunc) */
#define ZTAM_FUNC_ADDR_WORD 0
#define ZTAM_FUNC_ADDR_LSB 0
#define ZTAM_FUNC_ADDR_MASK 0xFFFFu
#define ZTAM_FUNC_NP_WORD 0
#define ZTAM_FUNC_NP_LSB 16
#define ZTAM_FUNC_NP_MASK 0xFFu
#define ZTAM_FUNC_NT_WORD 0
#define ZTAM_FUNC_NT_LSB 24
#define ZTAM_FUNC_NT_MASK 0xFFu

/* CALLBACK instruction (3 words) */
#define ZTAM_CB_TAG_WORD 1
#define ZTAM_CB_TAG_LSB 0
#define ZTAM_CB_TAG_MASK 0xFFFFFFFFu
#define ZTAM_CB_PARM_WORD 2
#define ZTAM_CB_PARM_LSB 0
#define ZTAM_CB_PARM_MASK 0xFFFFFFFFu

/* LOG instruction (1 word) */
#define ZTAM_LOG_ON_WORD 0
#define ZTAM_LOG_ON_LSB 16
#define ZTAM_LOG_ON_MASK 0x1u

typedef struct { uint32_t count; int32_t step; int32_t start; int32_t stride; uint32_t bound; } ztam_level_t;
typedef struct {
    uint32_t space, dtype, nlevels, check_mask, ovl_mask, bcast_mask;
    uint32_t base; int32_t ovl_start; uint32_t ovl_limit;
    ztam_level_t levels[ZTAM_MAX_LEVELS];
} ztam_side_t;
typedef struct {
    uint32_t scatter, scatter_n, proc_en, proc, pad;
    ztam_side_t dst, src;
    uint32_t err;  /* runtime only, not encoded: ZTAM_ERR_* found while building */
} ztam_xfer_t;

#define ZTAM_PUT(w, prefix_field, v) \
    ((w)[prefix_field##_WORD] |= (((uint32_t)(v)) & prefix_field##_MASK) << prefix_field##_LSB)

static inline uint32_t ztam_kernel_func(uint32_t addr, uint32_t np, uint32_t nt) {
    uint32_t w[1] = {0};
    ZTAM_PUT(w, ZTAM_FUNC_ADDR, addr); ZTAM_PUT(w, ZTAM_FUNC_NP, np); ZTAM_PUT(w, ZTAM_FUNC_NT, nt);
    return w[0];
}

/* Every index of the level (start + stride * i, i < count) is in [0, bound). */
static inline int ztam_level_in_bound(const ztam_level_t *l) {
    int64_t first = l->start, last = (int64_t)l->start + (int64_t)l->stride * ((int64_t)l->count - 1);
    return (first < last ? first : last) >= 0 && (first > last ? first : last) < (int64_t)l->bound;
}

/* Encode a side at w (cleared by the caller); returns the words used.  As the
   Python encoder: a check that cannot fail is cleared; no overlap words without
   an overlap group; count and step only for a level neither checked nor overlapped. */
static inline int ztam_encode_side(const ztam_side_t *s, uint32_t *w) {
    uint32_t i, chk = 0;
    int n;
    for (i = 0; i < s->nlevels; i++)
        if (((s->check_mask >> i) & 1) && !ztam_level_in_bound(&s->levels[i]))
            chk |= 1u << i;
    ZTAM_PUT(w, ZTAM_SIDE_SPACE, s->space);
    ZTAM_PUT(w, ZTAM_SIDE_DTYPE, s->dtype);
    ZTAM_PUT(w, ZTAM_SIDE_NLEVELS, s->nlevels);
    ZTAM_PUT(w, ZTAM_SIDE_CHECK_MASK, chk);
    ZTAM_PUT(w, ZTAM_SIDE_OVL_MASK, s->ovl_mask);
    ZTAM_PUT(w, ZTAM_SIDE_BCAST_MASK, s->bcast_mask);
    ZTAM_PUT(w, ZTAM_SIDE_BASE, s->base);
    n = ZTAM_SIDE_SHORT_HEADER_WORDS;
    if (s->ovl_mask) {
        ZTAM_PUT(w, ZTAM_SIDE_OVL_START, s->ovl_start);
        ZTAM_PUT(w, ZTAM_SIDE_OVL_LIMIT, s->ovl_limit);
        n = ZTAM_SIDE_HEADER_WORDS;
    }
    for (i = 0; i < s->nlevels; i++) {
        uint32_t *lw = w + n;
        ZTAM_PUT(lw, ZTAM_LEVEL_COUNT, s->levels[i].count);
        ZTAM_PUT(lw, ZTAM_LEVEL_STEP, s->levels[i].step);
        if (((chk | s->ovl_mask) >> i) & 1) {
            ZTAM_PUT(lw, ZTAM_LEVEL_START, s->levels[i].start);
            ZTAM_PUT(lw, ZTAM_LEVEL_STRIDE, s->levels[i].stride);
            ZTAM_PUT(lw, ZTAM_LEVEL_BOUND, s->levels[i].bound);
            n += ZTAM_LEVEL_WORDS;
        } else {
            n += ZTAM_LEVEL_SHORT_WORDS;
        }
    }
    return n;
}

/* Encode a transfer into w[ZTAM_XFER_MAX_WORDS]; returns its length in words. */
static inline int ztam_encode_xfer(const ztam_xfer_t *x, uint32_t process, uint32_t *w) {
    int i, n = ZTAM_XFER_HEADER_WORDS;
    for (i = 0; i < ZTAM_XFER_MAX_WORDS; i++) w[i] = 0;
    n += ztam_encode_side(&x->dst, w + n);
    n += ztam_encode_side(&x->src, w + n);
    ZTAM_PUT(w, ZTAM_HDR_OPCODE, ZTAM_OP_TRANSFER); ZTAM_PUT(w, ZTAM_HDR_PROCESS, process); ZTAM_PUT(w, ZTAM_HDR_LENGTH, n);
    ZTAM_PUT(w, ZTAM_XFER_SCATTER, x->scatter);
    ZTAM_PUT(w, ZTAM_XFER_SCATTER_N, x->scatter_n);
    ZTAM_PUT(w, ZTAM_XFER_PROC_EN, x->proc_en);
    ZTAM_PUT(w, ZTAM_XFER_PROC, x->proc);
    ZTAM_PUT(w, ZTAM_XFER_PAD, x->pad);
    return n;
}

#endif /* ZTAM_ISA_H */
