"""Regression outputs: JUnit XML, a self-contained HTML report, the results
as JSON, a coverage summary (text and merged JSON)."""

import html
import re
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from tensorsoc.verification.uvm.coverage import merge, summary


def verdict(result):
    """PASS, FAIL, or LOST (a failure: the workers running it died)."""
    return "PASS" if result["passed"] else "LOST" if result.get("lost") else "FAIL"


def rerun_command(result, fault=None):
    cmd = f".venv/bin/tsoc regress --rerun {result['key']}"
    return cmd + (f" --inject-fault {fault}" if fault else "")


def write_junit(path, results, duration):
    suite = ET.Element("testsuite", name="tsoc-regress", tests=str(len(results)),
                       failures=str(sum(not r["passed"] for r in results)), time=f"{duration:.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"regress.{r['test']}", name=r["name"],
                             time=f"{r['seconds']:.3f}")
        ET.SubElement(case, "properties")
        for k in ("seed", "mode", "tier", "host_path", "cycles", "attempts"):
            ET.SubElement(case.find("properties"), "property", name=k, value=str(r.get(k)))
        if not r["passed"]:
            f = ET.SubElement(case, "failure", message=r["message"][:500], type=verdict(r).lower())
            f.text = f"{r['message']}\nlog: {r['log']}\nre-run: {r['rerun']}"
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)


def coverage_text(doc):
    """The summary (a line per table), then per table the bins not hit and
    the excluded bins with their reason."""
    lines = ["Coverage summary", ""]
    summ = summary(doc)
    for name, (hit, total, extra, excluded) in summ.items():
        kind = doc["tables"][name]["kind"]
        pct = 100.0 * hit / total if total else 0.0
        lines.append(f"  {name:<34} [{kind}] {hit:>4}/{total:<4} bins hit ({pct:5.1f}%)"
                     + (f", {len(excluded)} excluded" if excluded else "")
                     + (f", {len(extra)} bin(s) outside the plan" if extra else ""))
        if kind == "model-op":
            sent = sum(1 for b in doc["tables"][name]["bins"] if b not in excluded
                       and doc["sent"].get(name, {}).get(b))
            lines.append(f"  {'':<34}            {sent:>4}/{total:<4} bins sent to the device in model images")
    lines += [""] + [f"  note: {n}" for n in doc["notes"]]
    for name, (hit, total, extra, excluded) in summ.items():
        hits = doc["hits"].get(name, {})
        missed = [b for b in doc["tables"][name]["bins"] if b not in excluded and not hits.get(b)]
        if missed or excluded or extra:
            lines += ["", f"  {name}:"]
        if missed:
            lines.append(f"    not hit ({len(missed)}): " + ", ".join(missed))
        for b in extra:
            lines.append(f"    hit outside the plan: {b}")
        for b, why in excluded.items():
            lines.append(f"    excluded {b}: {why}")
    return "\n".join(lines) + "\n"


CSS = """
body{font-family:sans-serif;margin:1.5em;color:#222} table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #bbb;padding:2px 8px;font-size:13px;text-align:left} th{background:#eee}
.pass{background:#d9f2d9} .fail{background:#f7d4d4} .hit{background:#d9f2d9} .miss{background:#f7e7c4}
.excl{background:#e4e4e4;color:#555}
code,pre{background:#f4f4f4;padding:2px 4px} .summary{font-size:18px;font-weight:bold}
"""


def _anchor(name):
    return "cov-" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def _rel(path, base):
    return os.path.relpath(path, base) if path else None


def write_html(path, meta, results, cov):
    base = Path(path).parent
    e = html.escape
    failed = [r for r in results if not r["passed"]]
    lost = [r for r in failed if r.get("lost")]
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>tsoc regression seed {meta['seed']}</title>",
           f"<style>{CSS}</style></head><body>",
           "<h1>tensorsoc UVM regression</h1>",
           f"<p class='summary' id='summary'>{'FAIL' if failed else 'PASS'}: {len(results) - len(failed)} of "
           f"{len(results)} tests passed"
           + (f" ({len(lost)} lost: their workers died)" if lost else "") + "</p>",
           f"<p>Regression seed <b id='seed'>{meta['seed']}</b>, {len(results)} tests, "
           f"{meta['jobs']} worker(s) on {e(meta.get('scheduler', 'LocalCluster'))}, "
           f"{meta['duration']:.1f} s wall; SoC {e(meta['config'])}; built in {e(meta['build_dir'])}.</p>",
           f"<p>Firmware expectation: {e(meta['expectation'])}.</p>"]
    if meta.get("fault"):
        out.append(f"<p><b>Deliberate prediction fault injected: {e(meta['fault'])}</b> (this run must fail).</p>")
    if failed:
        out.append("<h2 id='failures'>Failures</h2>")
        for r in failed:
            wave = _rel(r.get("waves"), base)
            out.append(f"<h3>{e(r['name'])} ({verdict(r)})</h3><pre>{e(r['message'])}</pre>"
                       f"<p>Re-run: <code class='rerun'>{e(r['rerun'])}</code></p>"
                       f"<p><a href='{e(_rel(r['log'], base))}'>log</a>"
                       + (f" &middot; <a href='{e(wave)}'>waveform (FST)</a>" if wave else
                          " &middot; no waveform (run with --waves-on-fail)") + "</p>")
    out.append("<h2>Tests</h2><table id='tests'><tr><th>result</th><th>test</th><th>tier</th><th>host path</th>"
               "<th>mode</th><th>seed</th><th>cycles</th><th>transactions</th><th>float model max |error|</th>"
               "<th>seconds</th><th>attempts</th><th>log</th></tr>")
    for r in results:
        cls = "pass" if r["passed"] else "fail"
        out.append(f"<tr class='{cls}'><td>{verdict(r)}</td><td>{e(r['test'])}</td>"
                   f"<td class='tier'>{e(r.get('tier', '-'))}</td>"
                   f"<td class='host-path'>{e(r.get('host_path', '-'))}</td>"
                   f"<td>{r['mode'].upper()}</td><td>{r['seed']}</td><td>{r.get('cycles') or '-'}</td>"
                   f"<td>{r.get('transactions') or '-'}</td>"
                   f"<td>{'-' if r.get('float_error') is None else format(r['float_error'], '.5f')}</td>"
                   f"<td>{r['seconds']:.1f}</td><td>{r.get('attempts', 1)}</td>"
                   f"<td><a href='{e(_rel(r['log'], base))}'>log</a></td></tr>")
    out.append("</table><h2>Coverage</h2><table id='coverage-summary'><tr><th>table</th><th>kind</th>"
               "<th>bins hit</th><th>bins</th><th>excluded</th></tr>")
    summ = summary(cov)
    for name, (hit, total, _, excluded) in summ.items():
        out.append(f"<tr><td><a href='#{_anchor(name)}'>{e(name)}</a></td><td>{cov['tables'][name]['kind']}</td>"
                   f"<td>{hit}</td><td>{total}</td><td>{len(excluded)}</td></tr>")
    out.append("</table>")
    for n in cov["notes"]:
        out.append(f"<p class='note'>{e(n)}</p>")
    for name, t in cov["tables"].items():
        hits, sent = cov["hits"].get(name, {}), cov["sent"].get(name, {})
        excluded = summ[name][3]
        model_op = t["kind"] == "model-op"
        out.append(f"<h3 id='{_anchor(name)}'>{e(name)}</h3><table class='cov'><tr>"
                   + "".join(f"<th>{e(c)}</th>" for c in t["columns"]) + "<th>hits</th>"
                   + ("<th>sent in models</th>" if model_op else "") + "<th>status</th></tr>")
        for b in t["bins"]:
            n = hits.get(b, 0)
            if b in excluded:
                cls, status = ("fail", "excluded, but hit") if n else ("excl", f"excluded: {e(excluded[b])}")
            else:
                cls, status = ("hit", "hit") if n else ("miss", "not hit")
            out.append(f"<tr class='{cls}'>" + "".join(f"<td>{e(x)}</td>" for x in b.split("|"))
                       + f"<td>{n}</td>" + (f"<td>{sent.get(b, 0)}</td>" if model_op else "")
                       + f"<td>{status}</td></tr>")
        out.append("</table>")
    out.append("</body></html>")
    Path(path).write_text("\n".join(out))


def write_all(out_dir, meta, results):
    out_dir = Path(out_dir)
    docs = []
    for r in results:
        f = Path(r["dir"]) / "coverage.json"
        if f.exists():
            docs.append(json.loads(f.read_text()))
    cov = merge(docs)
    if meta.get("expectation") and not any(meta["expectation"] in n for n in cov["notes"]):
        cov["notes"].append(f"firmware expectation: {meta['expectation']}")
    (out_dir / "coverage.json").write_text(json.dumps(cov, indent=1))
    text = coverage_text(cov)
    (out_dir / "coverage.txt").write_text(text)
    write_junit(out_dir / "junit.xml", results, meta["duration"])
    (out_dir / "results.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    write_html(out_dir / "report.html", meta, results, cov)
    return text
