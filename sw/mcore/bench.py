"""`tsoc bench mcore`: preprocess a generated MCORE file and time it."""

import time

from . import symbols as symbols_mod

BENCH_SYMBOLS = {
    "format": "tensorsoc-pcore-symbols", "version": 1,
    "config": {"np": 8, "nt": 16, "vw": 8, "private_words": 512, "shared_words": 2048},
    "classes": {"conv": {
        "variables": {"coef": {"space": "private", "addr": 0, "dims": [16, 8]},
                      "bot": {"space": "private", "addr": 128, "dims": [64]},
                      "top": {"space": "shared", "addr": 0, "dims": [256]}},
        "functions": {"exe": {"addr": 12}}}},
}

_TEMPLATES = [
    ">PCORE(8)[0:7].THREAD[0:15].conv::bot[0:{a}] <= DDR(p{i},1000,64)[y:y+{b}][0:{a}];",
    ">SCRATCH(s{i},100,200)[0:dy-1][{a}:dx-1] <= DDR(p,1000,2000)[0:dy-1][{a}:dx-1];",
    ">FOR(K=0:3) FOR(I=0:1) PCORE[0:2].THREAD[I].conv::bot[K] <= (fmt)PAD({a}) DDR(q{i})[0:23];",
    ">$v{i} := PCORE(8)[:].conv::top[0:{a}]; $v{i} <= PROC(1) <= DDR(r,4,64)[n%4][0:{a}];",
    ">EXE_LOCKSTEP(conv::exe,{a}); CALLBACK(done, {i}); LOG_ON;",
    ">DDR(out{i},100,32,152(10,16))[:][:][:] <= SCRATCH({a},100,32,152(10,16))[:][:][:];",
]


def generate(lines):
    out = ["#include <stdint.h>", "void done(int x) { (void)x; }",
           "void kernel(uint32_t p, int dy, int dx, int y, int n, int fmt) {"]
    i = 0
    while len(out) < lines - 1:
        a, b = i % 7 + 1, i % 5
        if i % 3 == 2:
            out.append(_TEMPLATES[(i // 3) % len(_TEMPLATES)].format(i=i, a=a, b=b))
        else:
            out.append(f"    int v{i} = dx * {a} + dy; /* C line {i} */ n += v{i} > {b};")
        i += 1
    out.append("}")
    return "\n".join(out) + "\n"


def run(lines=10000, repeat=3):
    """Preprocess a generated file of ``lines`` lines ``repeat`` times; returns
    (lines, seconds of the fastest run).  The fastest of a few runs is the
    figure least disturbed by other work on a shared machine."""
    from .preprocessor import compile_source
    text = generate(lines)
    syms = symbols_mod.from_dict(BENCH_SYMBOLS, "<bench>")
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        compile_source(text, syms, "bench.c")
        best = min(best, time.perf_counter() - t0)
    return len(text.splitlines()), best
