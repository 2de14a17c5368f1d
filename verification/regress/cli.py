"""`tsoc regress`: build the SoC simulator once, run N pyuvm tests (seeds
derived from --seed) in parallel, write JUnit XML, an HTML report and a
coverage summary.  Exit status 1 on any failure.  docs/verification.md."""

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from verification.regress import plan as P
from verification.regress import report

ROOT = Path(__file__).resolve().parents[2]


def _first_failure(result_dir, log):
    xml = Path(result_dir) / "results.xml"
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            for tag in ("failure", "error"):
                f = case.find(tag)
                if f is not None:
                    return (f.get("message") or f.text or tag).strip()
    stats = Path(result_dir) / "stats.json"
    if stats.exists():
        mism = json.loads(stats.read_text()).get("mismatches")
        if mism:
            return mism[0]
    tail = Path(log).read_text(errors="replace").splitlines()[-15:] if Path(log).exists() else []
    return "no result (simulator crashed?); log tail:\n" + "\n".join(tail)


def run_one(spec, build, out_dir, fault=None, waves=False):
    d = Path(out_dir) / "tests" / spec.name
    d.mkdir(parents=True, exist_ok=True)
    log = d / ("waves.log" if waves else "test.log")
    args = {"test": spec.test, "mode": spec.mode, "seed": spec.seed, "out": str(d), "fault": fault,
            "build_dir": str(build.build_dir), "config": build.config.as_dict(), "waves": waves}
    t0 = time.monotonic()
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, "-m", "verification.regress.worker", json.dumps(args)],
                              stdout=f, stderr=subprocess.STDOUT, cwd=ROOT,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    seconds = time.monotonic() - t0
    stats_file = d / "stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    passed = proc.returncode == 0
    r = {"name": spec.name, "key": spec.key, "test": spec.test, "mode": spec.mode, "seed": spec.seed,
         "passed": passed, "seconds": seconds, "dir": str(d), "log": str(log),
         "cycles": stats.get("cycles"), "transactions": stats.get("transactions"),
         "float_error": max(stats.get("float_errors", {}).values(), default=None),
         "message": "" if passed else _first_failure(d, log)}
    if waves and (d / "waves.fst").exists():
        r["waves"] = str(d / "waves.fst")
    r["rerun"] = report.rerun_command(r, fault)
    return r


class Progress:
    """One line per finished test, and a running tally."""

    def __init__(self, total):
        self.total, self.done, self.failed, self.t0 = total, 0, 0, time.monotonic()

    def update(self, r):
        self.done += 1
        self.failed += not r["passed"]
        mark = "PASS" if r["passed"] else "FAIL"
        print(f"[{self.done:>3}/{self.total}] {mark} {r['name']:<40} {r['seconds']:6.1f} s "
              f"{r['cycles'] or '-':>10} cycles  | {self.failed} failed, {time.monotonic() - self.t0:6.1f} s",
              flush=True)
        if not r["passed"]:
            print(f"        {r['message'].splitlines()[0] if r['message'] else ''}\n        re-run: {r['rerun']}",
                  flush=True)


def cmd_regress(args):
    from soc.builder import SimBuild
    from verification.soc.runner import cocotb_build
    from verification.uvm.firmware_model import expectation
    if args.rerun:
        try:
            specs = [P.TestSpec.parse(args.rerun)]
        except ValueError as e:
            from sw.cli import UserError
            raise UserError(str(e)) from None
    else:
        specs = P.plan(args.seed, args.n, tuple(args.tests) if args.tests else P.TEST_CLASSES)
    out = Path(args.out).resolve()     # the simulator runs in the gateware folder
    out.mkdir(parents=True, exist_ok=True)
    log = lambda m: print(m, flush=True)
    build = SimBuild(build_dir=Path(args.build_dir), log=log)
    # The MSB-first bit order is a build option: a second SoC, only if a test needs it.
    builds = {False: build}
    if any(s.msb_first for s in specs):
        builds[True] = SimBuild(build.config.with_overrides(host_msb_first=1),
                                Path(args.build_dir).with_name(Path(args.build_dir).name + "-msb"), log=log)
    t0 = time.monotonic()
    for b in builds.values():
        print(f"[regress] building the SoC simulator in {b.build_dir} (once)", flush=True)
        cocotb_build(b)
    print(f"[regress] built in {time.monotonic() - t0:.1f} s; running {len(specs)} test(s) with -j {args.jobs}",
          flush=True)
    progress = Progress(len(specs))
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, s, builds[s.msb_first], out, args.inject_fault) for s in specs]
        for fut in as_completed(futures):
            r = fut.result()
            results.append(r)
            progress.update(r)
    order = {s.name: i for i, s in enumerate(specs)}
    results.sort(key=lambda r: order[r["name"]])
    failed = [r for r in results if not r["passed"]]
    if failed and args.waves_on_fail:
        print(f"[regress] re-running {len(failed)} failure(s) with waveforms", flush=True)
        for r in failed:
            spec = P.TestSpec.parse(r["key"])
            cocotb_build(builds[spec.msb_first], waves=True)
            w = run_one(spec, builds[spec.msb_first], out, args.inject_fault, waves=True)
            r["waves"] = w.get("waves")
            r["waves_log"] = w["log"]
    meta = {"seed": args.seed, "jobs": args.jobs, "duration": time.monotonic() - t0,
            "config": json.dumps(build.config.as_dict()), "build_dir": str(build.build_dir),
            "expectation": expectation(), "fault": args.inject_fault}
    text = report.write_all(out, meta, results)
    print(text, end="")
    print(f"[regress] {len(results) - len(failed)}/{len(results)} passed in {meta['duration']:.1f} s; "
          f"report {out / 'report.html'}, JUnit {out / 'junit.xml'}, coverage {out / 'coverage.txt'}")
    for r in failed:
        print(f"[regress] FAILED {r['name']}: re-run with: {r['rerun']}")
    return 1 if failed else 0


def register(groups):
    p = groups["top"].add_parser("regress", help="UVM regression: N random tests in parallel, HTML/JUnit reports")
    p.add_argument("--seed", type=int, default=1, help="regression seed (every test's seed derives from it)")
    p.add_argument("-n", type=int, default=8, help="number of tests (default 8)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel simulations (default: cores)")
    p.add_argument("--out", default=str(ROOT / "build" / "regress"), help="report folder (default build/regress)")
    p.add_argument("--build-dir", default=str(ROOT / "build" / "regress" / "soc"), help="SoC build folder")
    p.add_argument("--tests", nargs="+", choices=P.TEST_CLASSES, metavar="TEST",
                   help=f"only these test classes ({', '.join(P.TEST_CLASSES)})")
    p.add_argument("--rerun", metavar="TEST/MODE/SEED", help="run one test again from its seed (as the report prints)")
    p.add_argument("--inject-fault", metavar="CMD:BIT[:N]",
                   help="flip BIT of the first predicted data byte of the N-th CMD read (proves the scoreboard fails)")
    p.add_argument("--waves-on-fail", action=argparse.BooleanOptionalAction, default=True,
                   help="re-run failures with an FST waveform (a second, tracing build; default on)")
    p.set_defaults(func=cmd_regress)
