"""`tsoc regress`: build the SoC simulator once, run N pyuvm tests (seeds
derived from --seed) as tasks on Dask distributed (a local cluster, or
--scheduler ADDRESS), write JUnit XML, an HTML report, a JSON of the
results and a coverage summary.  Exit status 1 on any failure.
docs/verification.md."""

import argparse
import json
import os
import time
from pathlib import Path

from tensorsoc.verification.regress import cluster, report, testrun
from tensorsoc.verification.regress import plan as P
from tensorsoc.spec.errors import UserError

ROOT = testrun.ROOT


class Progress:
    """One line per finished test (its tier and host path), a running tally
    and an estimate of the time left: the elapsed time scaled by the
    relative cost (plan.RELATIVE_COST) of the tests still to finish against
    those finished, since the costliest tests start first (counting tests
    alone, the estimate was about five times too long early in a run)."""

    def __init__(self, specs):
        self.total, self.done, self.failed, self.t0 = len(specs), 0, 0, time.monotonic()
        self.cost_left = sum(P.RELATIVE_COST.get(s.test, 1) for s in specs)
        self.cost_done = 0

    def update(self, r):
        self.done += 1
        self.failed += not r["passed"]
        cost = P.RELATIVE_COST.get(r["test"], 1)
        self.cost_done, self.cost_left = self.cost_done + cost, self.cost_left - cost
        elapsed = time.monotonic() - self.t0
        left = elapsed / self.cost_done * max(self.cost_left, 0)
        mark = report.verdict(r)
        print(f"[{self.done:>3}/{self.total}] {mark:<4} {r['name']:<40} {r['tier']:>8}/{r['host_path']:<4} "
              f"{r['seconds']:6.1f} s {r['cycles'] or '-':>10} cycles  | {self.failed} failed, {elapsed:6.1f} s"
              + (f", ~{left:.0f} s left" if self.done < self.total else ""), flush=True)
        if not r["passed"]:
            print(f"        {r['message'].splitlines()[0] if r['message'] else ''}\n        re-run: {r['rerun']}",
                  flush=True)


def cmd_regress(args):
    from tensorsoc.soc.builder import SimBuild
    from tensorsoc.verification.regress.sim_package import SimPackage
    from tensorsoc.verification.soc.runner import cocotb_build
    from tensorsoc.verification.uvm.firmware_model import expectation
    if args.rerun:
        try:
            specs = [P.TestSpec.parse(args.rerun)]
        except ValueError as e:
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
    packages = {}
    for msb, b in builds.items():
        print(f"[regress] building the SoC simulator in {b.build_dir} (once)", flush=True)
        cocotb_build(b)
        packages[msb] = SimPackage.of(b)
        print(f"[regress] simulator {packages[msb].short}: key {packages[msb].key} (sources + configuration)",
              flush=True)
    where = args.scheduler or f"a LocalCluster of {args.jobs} worker process(es)"
    print(f"[regress] built in {time.monotonic() - t0:.1f} s; running {len(specs)} test(s) on {where}", flush=True)
    progress = Progress(specs)
    with cluster.connect(args.scheduler, min(args.jobs, len(specs))) as client:
        results = cluster.run_tests(client, specs, packages, out, args.inject_fault, ship=args.ship,
                                    on_result=progress.update)
        workers = len(client.scheduler_info()["workers"])
    failed = [r for r in results if not r["passed"]]
    if failed and args.waves_on_fail:
        print(f"[regress] re-running {len(failed)} failure(s) with waveforms, on this machine", flush=True)
        for r in failed:
            spec = P.TestSpec.parse(r["key"])
            b = builds[spec.msb_first]
            cocotb_build(b, waves=True)
            _, _, wlog = testrun.simulate(spec, b.build_dir, b.config.as_dict(), r["dir"], args.inject_fault,
                                          waves=True)
            waves = Path(r["dir"]) / "waves.fst"
            r["waves"] = str(waves) if waves.exists() else None
            r["waves_log"] = str(wlog)
    meta = {"seed": args.seed, "jobs": workers, "scheduler": args.scheduler or "LocalCluster",
            "duration": time.monotonic() - t0,
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
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes of the local Dask cluster, one simulation each (default: cores)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the tests on the Dask cluster at ADDRESS (e.g. tcp://host:8786) instead of a local one")
    p.add_argument("--ship", action=argparse.BooleanOptionalAction, default=True,
                   help="ship the built simulator to workers that do not see its folder (default); "
                        "--no-ship: they build it themselves")
    p.add_argument("--out", default=str(ROOT / "build" / "regress"), help="report folder (default build/regress)")
    p.add_argument("--build-dir", default=str(ROOT / "build" / "regress" / "soc"), help="SoC build folder")
    p.add_argument("--tests", nargs="+", choices=P.TEST_CLASSES, metavar="TEST",
                   help=f"only these test classes ({', '.join(P.TEST_CLASSES)})")
    p.add_argument("--rerun", metavar="TEST/MODE/SEED[/HOST_PATH]",
                   help="run one test again from its seed (as the report prints)")
    p.add_argument("--inject-fault", metavar="CMD:BIT[:N]",
                   help="flip BIT of the first predicted data byte of the N-th CMD read (proves the scoreboard fails)")
    p.add_argument("--waves-on-fail", action=argparse.BooleanOptionalAction, default=True,
                   help="re-run failures with an FST waveform (a second, tracing build; default on)")
    p.set_defaults(func=cmd_regress)
