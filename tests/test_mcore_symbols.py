"""The PCORE symbol-table format of docs/pcore_symbols.md, as the PCORE assembler writes it."""

import pathlib

import numpy as np

from tensorsoc.spec import tensor_isa as isa

from tensorsoc.sw.mcore import api, symbols
from tensorsoc.verification.golden.tensor_exec import Machine

SYMS = symbols.load(str(pathlib.Path(__file__).parent / "data" / "mcore" / "brief_symbols.json"))


def test_loads_the_documented_example():
    assert SYMS.config == {"np": 4, "nt": 8, "vw": 8, "private_words": 512, "shared_words": 2048, "te_levels": 8,
                           "te_dst_levels": 8, "te_dst_overlap": 1, "te_ovl_bits": 48}
    v = SYMS.variables["convolution"]["exe.tmp"]
    assert (v.space, v.addr, v.dims) == ("private", 128, (8,))
    assert SYMS.functions["convolution"]["exe"] == 12


def test_all_three_spellings_resolve_function_scoped_variables():
    a, _ = api.instructions("PCORE[1].THREAD[2].convolution::exe.tmp[0:7] <= DDR(p)[0:7];", SYMS, {"p": 0})
    b, _ = api.instructions("PCORE[1].THREAD[2].convolution.exe.tmp[0:7] <= DDR(p)[0:7];", SYMS, {"p": 0})
    assert a == b
    # word address ((pcore * NT) + thread) * private_words + addr
    assert a[0].dst.base == (1 * 8 + 2) * 512 + 128


def test_private_and_shared_placement_in_memory():
    m = Machine.from_config(SYMS.config)
    m.ddr_write(0, np.arange(1, 65))
    ins, _ = api.instructions("PCORE[0:3].convolution::kernel[0:15] <= DDR(p)[0:63];\n"
                              "PCORE[3].THREAD[7].convolution::coef[15][0:7] <= DDR(p)[0:7];", SYMS, {"p": 0},
                              process=1)
    m.run(ins)
    assert [list(m.shared[1, pc, 0:16]) for pc in range(4)] == [list(range(1 + 16 * pc, 17 + 16 * pc)) for pc in range(4)]
    assert list(m.private[1, 3, 7, 120:128]) == list(range(1, 9))
    assert not m.private[0].any() and not m.shared[0].any()


def test_default_exe_uses_the_config():
    ins, _ = api.instructions("EXE_LOCKSTEP(convolution::exe);", SYMS)
    assert ins == [isa.Exe(func=isa.build_kernel_func(12, 4, 8))]
