"""End to end: guide examples preprocessed, built with host gcc against the ztam runtime,
run; the instruction words it issued are decoded, compared with the Python compiler's
and executed by the reference executor. Also: the RV32 MCORE build compiles."""

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import test_mcore_guide as guide
from tensorsoc.cli import main as tsoc
from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.mcore import api
from tensorsoc.verification.golden.tensor_exec import Machine

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "sw" / "runtime"
DATA = ROOT / "tests" / "data" / "mcore"
P, LEN = 0x100, 4
RV_GCC = "riscv64-unknown-elf-gcc"

MAIN_STATEMENTS = """
>PCORE[0:1].THREAD[0:1].myclass::myfunc.var[0:1] <= DDR(p)[0:2*2*2-1];
>SCRATCH(0,100)[0:len-1] <= DDR(p,100)[0:len-1];
>SCRATCH(0,100,200)[0:dy-1][0:dx-1] <= DDR(p,1000,2000)[0:dy-1][0:dx-1];
>PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2,2)[0][0:2][0:3];
>FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];
>SCATTER(0) FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];
>PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2+,2+)[0][0:2][0:3];
>SCRATCH(0,5120)[:] <= DDR(p,100,32,152(10,16))[:][:][:];
>(fmt)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= (fmt)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];
""" + guide.S4 + """
> EXE_LOCKSTEP(convolution::exe);
> EXE_LOCKSTEP(convolution::exe,np);
> EXE_LOCKSTEP(convolution::exe,np,nt);
> EXE_LOCKSTEP(func);
> SPU <= (int)MEM(stream,SPU_LOOKUP_SIZE*2)[:];
> PCORE(NP)[0:NP-1].THREAD[0:NT-1].convolution.input[0:7] <= PROC(0) <= DDR(pin)[0:NP*NT*8-1];
> DDR(pout)[0:NP*NT*8-1] <= PROC(1) <= PCORE(NP)[0:NP-1].THREAD[0:NT-1].convolution.output[0:7];
>CALLBACK(done, 42);
>LOG_ON;
>LOG_OFF;
"""
VALUES = dict(guide.S4_VALUES, p=P, len=LEN, dx=2, dy=4, np=4, nt=8, fmt=isa.dtype("UINT8"),
              func=isa.build_kernel_func(12, 4, 8), stream=P + 0x4000, pin=P, pout=P + 0x8000)

EXPECTED_STDOUT = """start guide len=4
callback parm=42
errors=1
status=1
child pid=1
main again pid=0 status=1
child ends
status=0
-2147483648% done 0
"""


def expected_instructions():
    main, err = api.instructions(MAIN_STATEMENTS, guide.SYMS, VALUES, process=0)
    child, _ = api.instructions(guide.S52, guide.SYMS, VALUES, process=1)
    log, _ = api.instructions(">LOG_ON;", guide.SYMS, VALUES, process=0)
    assert err == 0
    return main + child + log


@pytest.fixture(scope="module")
def run_host(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("host gcc not installed")
    d = tmp_path_factory.mktemp("e2e")
    out_c = d / "guide_program.c"
    assert tsoc(["mcore", "compile", str(DATA / "guide_program.c"), "--symbols", guide.SYMS_PATH, "-o", str(out_c)]) == 0
    exe = d / "guide_program"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", f"-I{RUNTIME}", str(out_c),
                    str(RUNTIME / "ztam.c"), str(RUNTIME / "platform" / "host.c"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    trace = d / "trace.txt"
    env = dict(os.environ, ZTAM_HOST_TRACE=str(trace), ZTAM_HOST_MSGQ=f"{P} {LEN}")
    r = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    issued, host_msgs = [], []
    for line in trace.read_text().splitlines():
        kind, *rest = line.split()
        if kind == "I":
            issued.append([int(w, 16) for w in rest])
        else:
            host_msgs.append(int(rest[0]))
    return r.stdout, issued, host_msgs, out_c


def test_output_of_printf_tasks_callbacks(run_host):
    stdout, _, _, _ = run_host
    assert stdout == EXPECTED_STDOUT


def test_message_queue_to_host(run_host):
    _, _, msgs, _ = run_host
    assert msgs == [LEN * 10, P + 4]


def test_words_equal_the_python_compiler(run_host):
    _, issued, _, _ = run_host
    flat = [w for instr in issued for w in instr]
    got = isa.decode(flat)
    want = expected_instructions()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == isa.normalize(w)
    assert [w for i in want for w in isa.encode(i)] == flat


def test_process_space_follows_the_task(run_host):
    _, issued, _, _ = run_host
    got = isa.decode([w for instr in issued for w in instr])
    child = [i for i in got if i.process == 1]
    assert len(child) == 1 and child[0].dst.space == isa.space("PCORE_SHARED")
    m = Machine.from_config(guide.SYMS.config)
    m.ddr_write(P, 1000 + np.arange(4))
    m.execute(child[0])
    guide.check_52(m, process=1)
    assert not m.shared[0].any()


def test_exe_function_words(run_host):
    _, issued, _, _ = run_host
    exes = [i for i in isa.decode([w for x in issued for w in x]) if isinstance(i, isa.Exe)]
    assert [(e.addr, e.np, e.nt) for e in exes] == [(12, 8, 16), (12, 4, 16), (12, 4, 8), (12, 4, 8)]
    def kernel(mach, e):            # stands in for the PCORE array: records np in shared memory
        mach.shared[e.process, 0, 0] = e.np

    m = Machine.from_config(guide.SYMS.config, kernel=kernel)
    m.run(exes)
    assert m.exe_calls[0] == (0, 12, 8, 16) and m.shared[0, 0, 0] == 4


def test_guide_tables_from_the_c_words(run_host):
    _, issued, _, _ = run_host
    instrs = isa.decode([w for x in issued for w in x])
    checks = [guide.check_51, guide.check_53, guide.check_54, guide.check_55]
    for instr, check in zip(instrs[:4], checks):
        m = Machine.from_config(guide.SYMS.config)
        m.ddr_write(P, 1000 + np.arange(8000))
        m.execute(instr)
        assert m.errors == 0
        check(m)
    # 5.12 (UINT8 + PAD 0xff)
    m = Machine.from_config(guide.SYMS.config)
    m.ddr_write(P, 200 + np.arange(400), "UINT8")
    m.execute(instrs[8])
    guide.check_55(m, pad=255, value=lambda a, b, c: (200 + a * 4 + b * 2 + c) & 0xFF)


def spu_ref(table, v):
    """The documented SPU rule, in plain integers."""
    u = v + 32768
    k, f = u >> 10, u & 1023
    y0 = table[k]
    y1 = table[min(k + 1, 63)]
    return y0 + (((y1 - y0) * f) >> 10)


def test_stream_processing(run_host):
    _, issued, _, _ = run_host
    instrs = isa.decode([w for x in issued for w in x])
    spu_load, proc0, proc1 = [i for i in instrs if isinstance(i, isa.Transfer)][10:13]
    assert spu_load.dst.space == isa.space("SPU") and (proc0.proc_en, proc0.proc) == (1, 0) and proc1.proc == 1
    identity = [-32768 + 1024 * k for k in range(64)]
    square = [((k - 32) * (k - 32) * 29) - 10000 for k in range(64)]
    m = Machine.from_config(guide.SYMS.config)
    m.ddr_write(VALUES["stream"], identity + square)
    m.execute(spu_load)
    rng = np.random.default_rng(7)
    vin = rng.integers(-32768, 32767, 1024)
    vin[:4] = [-32768, 32767, 0, 31744]
    m.ddr_write(P, vin)
    m.execute(proc0)
    got = m.private[0, :, :, 0:8].reshape(-1)
    assert [int(x) for x in got] == [spu_ref(identity, int(v)) for v in vin]
    assert got[1] == 31744 and got[0] == -32768 and got[2] == 0        # flat last segment
    m.private[0, :, :, 8:16] = vin.reshape(8, 16, 8)
    m.execute(proc1)
    assert [int(x) for x in m.ddr_read(VALUES["pout"], 1024)] == [spu_ref(square, int(v)) for v in vin]


def test_log_and_callback_instructions(run_host):
    _, issued, _, _ = run_host
    instrs = isa.decode([w for x in issued for w in x])
    cbs = [i for i in instrs if isinstance(i, isa.Callback)]
    logs = [(i.on, i.process) for i in instrs if isinstance(i, isa.Log)]
    assert [(c.tag, c.parm) for c in cbs] == [(0, 42)]
    assert logs == [(1, 0), (0, 0), (1, 0)]
    m = Machine.from_config(guide.SYMS.config)
    m.ddr_write(P, 1000 + np.arange(8))
    m.run([isa.Log(on=1), instrs[0], isa.Log(on=0), instrs[0]] + cbs)
    assert m.trace == ["PCORE V2 X2  <= DDR V8 X2"] and m.callbacks == [(0, 42)]


def test_line_directives_point_at_the_source(run_host, tmp_path):
    _, _, _, out_c = run_host
    text = out_c.read_text().splitlines()
    src = (DATA / "guide_program.c").read_text().splitlines()
    assert text[1] == f'#line 1 "{DATA / "guide_program.c"}"'
    assert len(text) == len(src) + 2
    for a, b in zip(text[2:], src):
        if not b.lstrip().startswith(">") and "$" not in b:
            assert a == b
    bad = tmp_path / "bad.c"
    bad.write_text("int f(int x) {\n  >SCRATCH(0,100)[0:x] <= DDR(q,100)[0:x];\n  return x;\n}\n")
    out = tmp_path / "bad_out.c"
    assert tsoc(["mcore", "compile", str(bad), "-o", str(out)]) == 0
    r = subprocess.run(["gcc", "-std=c99", f"-I{RUNTIME}", "-c", str(out), "-o", str(tmp_path / "bad.o")],
                       capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    assert r.returncode != 0 and f"{bad}:2:" in r.stderr and "'q' undeclared" in r.stderr


def test_rv32_build_compiles(tmp_path, run_host, soc_build):
    if not shutil.which(RV_GCC):
        pytest.skip(f"{RV_GCC} is not installed: the RV32 MCORE build cannot be checked")
    _, _, _, out_c = run_host
    # platform/litex.c reads the SoC's generated CSR map.
    cc = [RV_GCC, "-march=rv32im", "-mabi=ilp32", "--specs=picolibc.specs", "-Os", "-Wall", "-Wextra", "-Werror",
          f"-I{RUNTIME}"] + [f"-I{d}" for d in soc_build.firmware_include_dirs()]
    objs = []
    for src in (out_c, RUNTIME / "ztam.c", RUNTIME / "platform" / "litex.c", RUNTIME / "platform" / "ctx_rv32.S"):
        obj = tmp_path / (pathlib.Path(src).stem + ".o")
        r = subprocess.run(cc + ["-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        objs.append(obj)
    r = subprocess.run(["riscv64-unknown-elf-nm", str(tmp_path / "ctx_rv32.o")], capture_output=True, text=True)
    assert "T ztam_platform_ctx_switch" in r.stdout


COUNT_PROGRAM = r"""
#include <stdio.h>
#include "ztam.h"

/* 1 when the runtime flags COUNT for DDR[0:n0-1][0:n1-1] -> SCRATCH[0:m0-1][0:m1-1] */
static int count_error(int32_t n0, int32_t n1, int32_t m0, int32_t m1)
{
    ztam_xfer_t x;
    ztamClearErrors();
    ztamXferInit(&x, 0, 0, 0, 0, 0);
    ztamSideInit(&x, &x.dst, ZTAM_SPACE_SCRATCH, ZTAM_DTYPE_UINT8, 0);
    ztamSideDim(&x, &x.dst, 0, 0, 1, m0 - 1, m0, 1, 0);
    ztamSideDim(&x, &x.dst, 1, 0, 1, m1 - 1, m1, m0, 0);
    ztamSideInit(&x, &x.src, ZTAM_SPACE_DDR, ZTAM_DTYPE_UINT8, 0);
    ztamSideDim(&x, &x.src, 0, 0, 1, n0 - 1, n0, 1, 0);
    ztamSideDim(&x, &x.src, 1, 0, 1, n1 - 1, n1, n0, 0);
    ztamIssueXfer(&x);
    return (ztamErrors() & ZTAM_ERR_COUNT) != 0;
}

int main(void)
{
    printf("%d %d %d %d %d\n", count_error(65536, 65536, 65536, 65536), count_error(65536, 65535, 65536, 65535),
           count_error(65536, 65536, 1, 1), count_error(2, 3, 3, 2), count_error(2, 3, 2, 2));
    return 0;
}
"""


def test_runtime_count_error_as_the_engine(tmp_path):
    """The runtime flags COUNT as the TensorEngine and the executor do
    (spec/tensor_isa.py, Transfer.count_error): counts that differ, or a
    count of 2**32 or more, which 32-bit arithmetic would wrap to 0 on both
    sides (65536 x 65536) and let through."""
    if not shutil.which("gcc"):
        pytest.skip("host gcc not installed")
    src, exe = tmp_path / "count.c", tmp_path / "count"
    src.write_text(COUNT_PROGRAM)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", f"-I{RUNTIME}", str(src),
                    str(RUNTIME / "ztam.c"), str(RUNTIME / "platform" / "host.c"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    flagged = [int(v) for v in r.stdout.split()]
    big = isa.Side(space=0, dtype=0, base=0, levels=[isa.Level(count=65536), isa.Level(count=65536)])
    assert isa.Transfer(dst=big, src=big).count_error()
    assert flagged == [1, 0, 1, 0, 1]
