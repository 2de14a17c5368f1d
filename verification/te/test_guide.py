"""cocotb: every transfer example of the programmer guide (sections 4, 5.1-5.12,
with SCATTER variants of 5.8), compiled by the MCORE preprocessor's API
(sw/mcore/api.py) for the guide's geometry (tests/data/mcore/guide_symbols.json),
run on the engine from random memory contents and compared with the executor."""

import os
import random
from pathlib import Path

import cocotb

from tensorsoc.spec import tensor_isa as isa

from tensorsoc.sw.mcore import api, symbols
from tensorsoc.verification.te.bfm import TEBench
from tensorsoc.verification.te.test_engine import _config, _machine, _randomise, _check, DDR_BYTES

SYMS = symbols.load(str(Path(__file__).resolve().parents[2] / "tests" / "data" / "mcore" / "guide_symbols.json"))
P = 0x100
S4 = """
> $coef_pcore := (weightfmt)PCORE(group,groupsz)[:][*].convolution::coef[0:kz-1][:];
> $coef_ddr := (weightfmt)MEM(coef,botcnt2,topcnt3)[$][rowi:rowi+gkz-1];
> $coef_pcore <= $coef_ddr[jj];
"""
EXAMPLES = [   # (guide section, statement, defines)
    ("4", S4, {"weightfmt": isa.dtype("INT16"), "group": 2, "groupsz": 4, "kz": 2, "botcnt2": 4, "topcnt3": 64,
               "rowi": 3, "gkz": 32, "jj": 1, "coef": P}),
    ("5.1", ">PCORE[0:1].THREAD[0:1].myclass::myfunc.var[0:1] <= DDR(p)[0:2*2*2-1];", {}),
    ("5.2", ">PCORE[0:1].myclass::myfunc.shared_var[0:1] <= DDR(p)[0:2*2-1];", {}),
    ("5.3", ">SCRATCH(0,100)[0:len-1] <= DDR(p,100)[0:len-1];", {"len": 4}),
    ("5.4", ">SCRATCH(0,100,200)[0:dy-1][0:dx-1] <= DDR(p,1000,2000)[0:dy-1][0:dx-1];", {"dx": 2, "dy": 4}),
    ("5.5", ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2,2)[0][0:2][0:3];", {}),
    ("5.6a", ">PCORE(8)[:].THREAD[0:15].myclass::myvar[0:15] <= DDR(p)[0:8*16*16-1];", {}),
    ("5.6b", ">PCORE(8)[:].THREAD(4,4)[0:3][0:3].myclass::myvar(4,4)[0:3][0:3] <= DDR(p)[0:8*16*16-1];", {}),
    ("5.7", ">FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].myclass::myvar[K] <= DDR(p)[0:2*3*4-1];", {}),
    ("5.8.3", ">FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= DDR(p)[0:8*16*8*8-1];", {}),
    ("5.8.3 SCATTER", ">SCATTER(0) FOR(I=0:7) PCORE(8)[0:7].THREAD[0:15].myclass::myvar(8,8)[:][I] <= "
                      "DDR(p)[0:8*16*8*8-1];", {}),
    ("5.8.4", ">FOR(I=0:7) FOR(J=0:7) PCORE(8)[0:7].THREAD(2,8)[:][:].myclass::myvar[J] <= DDR(p)[0:8*16*8*8-1];", {}),
    ("5.8.4 SCATTER", ">SCATTER(0) FOR(I=0:7) FOR(J=0:7) PCORE(8)[0:7].THREAD(2,8)[:][:].myclass::myvar[J] <= "
                      "DDR(p)[0:8*16*8*8-1];", {}),
    ("5.9", ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= DDR(p,100,2+,2+)[0][0:2][0:3];", {}),
    ("5.10.1", ">SCRATCH(0,20000)[:] <= DDR(p,1000(100,200))[:][:];", {}),
    ("5.10.2", ">SCRATCH(0,5120)[:] <= DDR(p,100,32,152(10,16))[:][:][:];", {}),
    ("5.11", ">PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];", {}),
    ("5.12 UINT8", ">(fmt)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= (fmt)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];",
     {"fmt": isa.dtype("UINT8")}),
    ("5.12 INT8", ">(DP_DATA_TYPE_INT8)PCORE[0].THREAD[0:2].myclass::myfunc.var[0:3] <= "
                  "(DP_DATA_TYPE_INT8)PAD(0xff) DDR(p,100,2,2)[0][0:2][0:3];", {}),
    ("5.12 pack", ">(DP_DATA_TYPE_UINT8)DDR(p)[0:3] <= (DP_DATA_TYPE_INT16)PCORE[0].THREAD[0].myclass::myfunc.var[0:3];",
     {}),
    ("5.x back to DDR", ">DDR(p)[0:8*16*16-1] <= PCORE(8)[:].THREAD[0:15].myclass::myvar[0:15];", {}),
]


@cocotb.test()
async def guide_examples(dut):
    config = _config()
    bench = TEBench(dut, config, DDR_BYTES)
    await bench.start()
    machine = _machine(config)
    _randomise(machine, random.Random(7))
    bench.load(machine)
    only = os.environ.get("TSOC_TE_GUIDE")          # one section (debugging)
    for section, stmt, defines in EXAMPLES:
        if only and section != only:
            continue
        for process in (0, 1):
            ins, err = api.instructions(stmt, SYMS, dict(defines, p=P), process=process)
            assert err == 0, f"guide {section}: the preprocessor reports error {err:#x}"
            words = api.words(ins)
            machine.run_words(words)
            before = dict(bench.paths)
            await bench.run(words)
            dut._log.info(f"guide {section} (process {process}): " + ", ".join(
                f"{bench.paths[k] - before[k]} {k}" for k in before))
            await _check(bench, machine, f"guide {section} (process {process})")
    dut._log.info(f"{len(EXAMPLES)} guide examples x 2 process spaces match the executor")
