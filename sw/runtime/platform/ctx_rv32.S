/* ztam_platform_ctx_switch(ztam_ctx_t *from [a0], ztam_ctx_t *to [a1])
 * Saves ra, sp and the callee-saved s0-s11 of the running task in *from and resumes
 * *to; a fresh context (ztam_platform_ctx_init) "returns" into its entry function.
 * Layout matches ztam_ctx_t in ztam_platform.h: ra, sp, s0..s11 (14 words). */
    .text
    .globl ztam_platform_ctx_switch
    .type ztam_platform_ctx_switch, @function
ztam_platform_ctx_switch:
    sw ra, 0(a0)
    sw sp, 4(a0)
    sw s0, 8(a0)
    sw s1, 12(a0)
    sw s2, 16(a0)
    sw s3, 20(a0)
    sw s4, 24(a0)
    sw s5, 28(a0)
    sw s6, 32(a0)
    sw s7, 36(a0)
    sw s8, 40(a0)
    sw s9, 44(a0)
    sw s10, 48(a0)
    sw s11, 52(a0)
    lw ra, 0(a1)
    lw sp, 4(a1)
    lw s0, 8(a1)
    lw s1, 12(a1)
    lw s2, 16(a1)
    lw s3, 20(a1)
    lw s4, 24(a1)
    lw s5, 28(a1)
    lw s6, 32(a1)
    lw s7, 36(a1)
    lw s8, 40(a1)
    lw s9, 44(a1)
    lw s10, 48(a1)
    lw s11, 52(a1)
    ret
    .size ztam_platform_ctx_switch, . - ztam_platform_ctx_switch
