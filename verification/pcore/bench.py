"""``tsoc bench pcore``: run each kernel on the Verilator model of the PCORE
array and report MACs per clock against the NP x VW peak.

Cycle, vector-op and MAC counts are the array's own counters (CYCLES, VOPS,
MACS registers), read after each kernel; every result is also checked
bit-exact against the reference and the ISS (a mismatch fails the bench).
"""

import json
import re
import tempfile
from pathlib import Path


def run_bench(config):
    """Returns the bench report (dict)."""
    from tensorsoc.verification.pcore.build import build_dir_for
    from tensorsoc.verification.pcore.run import run
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        tests, fails, _ = run(config, testcases=["bench"],
                              extra_env={"TSOC_PCORE_BENCH_JSON": str(out)}, quiet=True)
        data = json.loads(out.read_text()) if out.exists() else {
            "rows": [], "errors": [_why_no_result(build_dir_for(config) / "sim.log")]}
    peak = config.np * config.vw
    rows = []
    for r in data["rows"]:
        cyc = r["cycles"]
        rows.append(dict(
            kernel=r["name"], params=r["defines"], cycles=cyc, macs=r["macs"],
            useful_macs=r["useful_macs"],
            macs_per_clock=r["macs"] / cyc, peak_macs_per_clock=peak,
            efficiency=r["macs"] / cyc / peak,
            vector_ops_per_clock_per_pcore=r["vops"] / cyc,
        ))
    # Steady state: the difference between the two stream lengths.
    streams = sorted((r for r in rows if r["kernel"].startswith("mac_stream")), key=lambda r: r["macs"])
    steady = None
    if len(streams) == 2:
        a, b = streams
        d_cycles = b["cycles"] - a["cycles"]
        steady = dict(macs_per_clock=(b["macs"] - a["macs"]) / d_cycles,
                      vector_ops_per_clock_per_pcore=(b["macs"] - a["macs"]) / (config.np * config.vw) / d_cycles)
    return dict(steady_state=steady, config=dict(np=config.np, nt=config.nt, vw=config.vw,
                            private_words=config.pcore_private_words,
                            shared_words=config.pcore_shared_words,
                            round_share=config.pcore_round_share),
                peak_macs_per_clock=peak, kernels=rows,
                errors=data.get("errors", []) + ([] if not fails else [f"{fails} simulation test(s) failed"]))


def _why_no_result(log):
    """The bench wrote no figures: the last exception its simulation log
    names (an assembler error, say: a kernel that does not fit the
    configuration's memories), with the log's path."""
    last = None
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            m = re.search(r"\b(\w+(?:Error|Exception)): (.+)$", line)
            if m and m.group(1) != "AssertionError":
                last = f"{m.group(1)}: {m.group(2).strip()}"
    return f"the bench did not finish: {last or 'no exception in the log'} (log: {log})"


def format_report(rep):
    c = rep["config"]
    share = f", one rounding shifter per {c['round_share']} lanes" if c.get("round_share", 1) > 1 else ""
    lines = [f"PCORE array: NP={c['np']} NT={c['nt']} VW={c['vw']}{share}, "
             f"peak {rep['peak_macs_per_clock']} MACs/clock",
             f"{'kernel':<15} {'params':<46} {'cycles':>7} {'MACs/clk':>9} {'of peak':>8} {'vops/clk/PCORE':>15}"]
    for r in rep["kernels"]:
        params = ",".join(f"{k}={v}" for k, v in r["params"].items()
                          if k not in ("FRAC",))
        mac = f"{r['macs_per_clock']:9.2f}" if r["macs"] else f"{'-':>9}"
        eff = f"{100 * r['efficiency']:7.1f}%" if r["macs"] else f"{'-':>8}"
        lines.append(f"{r['kernel']:<15} {params[:46]:<46} {r['cycles']:>7} {mac} {eff} "
                     f"{r['vector_ops_per_clock_per_pcore']:>15.3f}")
    s = rep.get("steady_state")
    if s:
        lines.append(f"steady state (mac_stream2000 - mac_stream1000): {s['macs_per_clock']:.2f} MACs/clock = "
                     f"{s['vector_ops_per_clock_per_pcore']:.3f} vector ops per clock per PCORE")
    for e in rep["errors"]:
        lines.append(f"ERROR: {e}")
    return "\n".join(lines)
