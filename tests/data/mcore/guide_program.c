/* MCORE program built from the programmer guide's examples (sections 4-11).
 * tests/test_mcore_e2e.py preprocesses it, builds it for the host, runs it and checks
 * the instruction words it issues. The host passes p (a DDR address) and len. */
#include <stdint.h>

static void done(int parm)
{
    ztamPrintf("callback parm=%d\n", parm);
}

static void child(void *parm, int pid)
{
    uint32_t p = (uint32_t)(uintptr_t)parm;
    ztamPrintf("child pid=%d\n", pid);
    /* 5.2, issued from pid 1: process space 1 */
    >PCORE[0:1].myclass::myfunc.shared_var[0:1] <= DDR(p)[0:2*2-1];
    ztamTaskYield();
    ztamPrintf("child ends\n");
}

int main(void)
{
    uint32_t p = (uint32_t)(uintptr_t)ztamMsgqReadPointer();
    int len = ztamMsgqReadInt();
    int dx = 2;
    int dy = 4;
    int np = 4, nt = 8, n = 5;
    int fmt = DP_DATA_TYPE_UINT8;
    int weightfmt = DP_DATA_TYPE_INT16, group = 2, groupsz = 4, kz = 2;
    int botcnt2 = 4, topcnt3 = 64, rowi = 3, gkz = 32, jj = 1;
    uint32_t coef = p, stream = p + 0x4000, pin = p, pout = p + 0x8000;
    uint32_t func;

    ztamPrintf("start %s len=%d\n", "guide", len);
    >PCORE[0:1].THREAD[0:1].myclass::myfunc.var[0:1] <= DDR(p)[0:2*2*2-1];
    >SCRATCH(0,100)[0:len-1] <= DDR(p,100)[0:len-1];
    >SCRATCH(0,100,200)[0:dy-1][0:dx-1] <= DDR(p,1000,2000)[0:dy-1][0:dx-1];
    >PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2,2)[0][0:2][0:3];
    >FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];
    >SCATTER(0) FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];
    >PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2+,2+)[0][0:2][0:3];
    >SCRATCH(0,5120)[:] <= DDR(p,100,32,152(10,16))[:][:][:];
    >(fmt)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= (fmt)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];

    /* 4: tensor variables */
    > $coef_pcore := (weightfmt)PCORE(group,groupsz)[:][*].convolution::coef[0:kz-1][:];
    > $coef_ddr := (weightfmt)MEM(coef,botcnt2,topcnt3)[$][rowi:rowi+gkz-1];
    > $coef_pcore <= $coef_ddr[jj];

    /* 6: EXE_LOCKSTEP, all forms */
    > EXE_LOCKSTEP(convolution::exe);
    > EXE_LOCKSTEP(convolution::exe,np);
    > EXE_LOCKSTEP(convolution::exe,np,nt);
    func = ztamBuildKernelFunc($convolution::exe,np,nt); // Assign function pointer
    > EXE_LOCKSTEP(func);

    /* 7: stream processing */
    > SPU <= (int)MEM(stream,SPU_LOOKUP_SIZE*2)[:];
    > PCORE(NP)[0:NP-1].THREAD[0:NT-1].convolution.input[0:7] <= PROC(0) <= DDR(pin)[0:NP*NT*8-1];
    > DDR(pout)[0:NP*NT*8-1] <= PROC(1) <= PCORE(NP)[0:NP-1].THREAD[0:NT-1].convolution.output[0:7];

    /* 8 and 11.2 */
    >CALLBACK(done, 42);
    >LOG_ON;
    >LOG_OFF;
    ztamPoll();

    /* element counts that only the run time knows: an error flag, nothing issued */
    >SCRATCH(0,100)[0:n-1] <= DDR(p,100)[0:n];
    ztamPrintf("errors=%d\n", (int)ztamErrors());
    ztamClearErrors();

    /* 10: threads */
    ztamTaskSpawn(child, (void *)(uintptr_t)p, 1);
    ztamPrintf("status=%d\n", ztamTaskStatus(1));
    ztamTaskYield();
    ztamPrintf("main again pid=%d status=%d\n", ztamTaskPid(), ztamTaskStatus(1));
    >LOG_ON;
    ztamTaskYield();
    ztamPrintf("status=%d\n", ztamTaskStatus(1));

    /* 9: answer the host */
    ztamMsgqWriteInt(len * 10);
    ztamMsgqWritePointer((void *)(uintptr_t)(p + 4));
    ztamPrintf("%d%% %s %d\n", -2147483647 - 1, "done", 0);
    return 0;
}
