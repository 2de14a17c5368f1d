"""``tsoc bench te``: elements per clock of each TensorEngine transfer kind
against its peak (Verilator, stand-alone engine with the default geometry)."""

import json
import tempfile
from pathlib import Path

BENCH_DDR_BYTES = 64 * 1024


def run_bench(config=None):
    from soc.config import SoCConfig
    from verification.te.run import run
    config = config or SoCConfig()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        tests, fails, results = run(config, module="verification.te.test_bench", ddr_bytes=BENCH_DDR_BYTES,
                                    extra_env={"TSOC_TE_BENCH_JSON": str(out)}, quiet=True)
        if fails or not out.exists():
            raise RuntimeError(f"the TensorEngine bench failed: see {results}")
        return json.loads(out.read_text())


def format_report(rep):
    c = rep["config"]
    lines = [f"TensorEngine transfers, NP={c['np']} NT={c['nt']} VW={c['vw']}, 32-bit DDR bus",
             f"{'transfer':<36} {'path':<7} {'elements':>8} {'clocks':>7} {'elem/clk':>8} {'peak':>5} {'of peak':>7} "
             f"{'target':>6}"]
    for r in rep["rows"]:
        ok = "ok" if r["of_peak"] >= r["target"] else "BELOW"
        lines.append(f"{r['kind']:<36} {r.get('path', '?'):<7} {r['elements']:>8} {r['clocks']:>7} {r['per_clock']:>8.2f} {r['peak']:>5g} "
                     f"{100 * r['of_peak']:>6.0f}% {100 * r['target']:>5.0f}% {ok}")
    return "\n".join(lines)


def cmd_bench(args):
    rep = run_bench()
    print(format_report(rep))
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    return 0


def register(groups):
    bench = groups["bench"].add_parser("te", help="TensorEngine elements per clock per transfer kind (Verilator)")
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    bench.set_defaults(func=cmd_bench)
