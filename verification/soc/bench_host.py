"""`tsoc bench host`: the host link measured in simulation.

For SPI and QPI at SCLK = 50 MHz (the datasheet's fastest), runs the SoC's
host-port tests (RID/RSpec, every protocol error, the WTensor rate) with the
SoC clock at several rates, and reports the sustained WTensor rate against
the link's and the lowest SoC:SCLK clock ratio at which everything passes.
With a build whose main RAM is a board's SDRAM (`--sdram`), the same without
the protocol-error test, which reads the integrated RAM's array."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from tensorsoc.soc.builder import SimBuild
from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test

SCLK_MHZ = 50.0
SYS_MHZ = [100.0, 75.0, 62.5, 50.0, 40.0, 33.3, 25.0]
TESTS = ["rid_and_spec", "protocol_errors", "wtensor_throughput"]
# protocol_errors compares main RAM around the windows by reading the
# integrated RAM's array: not with SDRAM (docs/fpga.md, --sdram).
SDRAM_TESTS = ["rid_and_spec", "wtensor_throughput"]
MODES = ("SPI", "QPI")


def run(build=None, sys_mhz=SYS_MHZ, log=print, modes=MODES):
    build = build or SimBuild(log=lambda *_: None)
    tests = TESTS if build.sdram is None else SDRAM_TESTS
    log(f"[bench host] building the SoC and its simulator in {build.build_dir} (only what changed)...")
    runner = cocotb_build(build)
    rows = []
    for mode in modes:
        for mhz in sys_mhz:
            tag = f"{mode.lower()}_{mhz:g}"
            xml = build.build_dir / f"bench_host_{tag}.xml"
            rate_json = build.build_dir / f"bench_host_{tag}.json"
            rate_json.unlink(missing_ok=True)
            env = {"TSOC_HOST_QPI": "1" if mode == "QPI" else "0", "TSOC_SIM_SYS_PERIOD_NS": str(1e3 / mhz),
                   "TSOC_RESULT_JSON": str(rate_json), "COCOTB_LOG_LEVEL": "WARNING", "GPI_LOG_LEVEL": "WARNING"}
            try:
                cocotb_test(runner, build, "tensorsoc.verification.soc.test_host", xml, extra_env=env, testcase=tests)
            except (SystemExit, RuntimeError):
                pass
            cases = ET.parse(xml).getroot().findall(".//testcase") if xml.exists() else []
            failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
            ok = len(cases) == len(tests) and not failed
            rate = json.loads(rate_json.read_text()) if rate_json.exists() else None
            row = {"mode": mode, "sys_mhz": mhz, "sclk_mhz": SCLK_MHZ, "ratio": mhz / SCLK_MHZ, "pass": ok,
                   "failed": failed if cases else tests,
                   "wtensor_mbit_s": rate and rate["bits_per_s"] / 1e6,
                   "link_mbit_s": rate and rate["link_bits_per_s"] / 1e6}
            rows.append(row)
            log(f"  {mode}  SoC {mhz:6.1f} MHz  ratio {mhz / SCLK_MHZ:4.2f}  "
                + (f"pass  WTensor {row['wtensor_mbit_s']:6.1f} of {row['link_mbit_s']:.0f} Mbit/s"
                   if ok else f"FAIL ({', '.join(row['failed'])})"))
    summary = {}
    for mode in modes:
        passing = [r for r in rows if r["mode"] == mode and r["pass"]]
        summary[mode] = {"min_ratio": min((r["ratio"] for r in passing), default=None),
                         "wtensor_mbit_s_at_100mhz": next((r["wtensor_mbit_s"] for r in passing
                                                            if r["sys_mhz"] == 100.0), None)}
    return {"rows": rows, "summary": summary}


def main(args, build=None, sys_mhz=SYS_MHZ, modes=MODES):
    log = print
    build = build or SimBuild(log=lambda *_: None)
    memory = build.sdram.describe() if build.sdram is not None else "integrated main RAM (one access per clock)"
    log(f"[bench host] SCLK {SCLK_MHZ:g} MHz; SoC clock swept over {', '.join(f'{m:g}' for m in sys_mhz)} MHz; "
        f"{memory}; in {build.build_dir}")
    if build.sdram is not None:
        log(f"[bench host] tests {', '.join(SDRAM_TESTS)} (protocol_errors reads the integrated RAM's array)")
    result = run(build=build, sys_mhz=sys_mhz, log=log, modes=modes)
    result["main_ram"] = memory
    for mode, s in result["summary"].items():
        ratio = "none (no SoC clock passed)" if s["min_ratio"] is None else f"{s['min_ratio']:.2f}"
        rate = s["wtensor_mbit_s_at_100mhz"]
        log(f"[bench host] {mode}: lowest passing SoC:SCLK ratio {ratio}"
            + (f", WTensor at 100 MHz {rate:.1f} Mbit/s" if rate is not None else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
        log(f"[bench host] wrote {args.json}")
    return 0 if all(s["min_ratio"] is not None for s in result["summary"].values()) else 1
