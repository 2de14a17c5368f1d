"""The LOG_ON activity trace writers (sw/te_trace.py): the guide's text report,
the Perfetto JSON, the C printer (sw/runtime/te_trace.c, host gcc) printing the
same text, the generated C header, and `tsoc te trace`.  The gateware side is
tested in cocotb (verification/te/test_trace.py)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorsoc.sw import te_trace
from tensorsoc.spec import tensor_isa as isa

REPO = Path(__file__).resolve().parents[1]
K = te_trace.KINDS
SP = {n: v[0] for n, v in isa.SPACES.items()}


def _records():
    R = te_trace.Record
    return [
        R(K["LOG_ON"], 1000),
        R(K["XFER_START"], 1000, dst=SP["PCORE_PRIVATE"], src=SP["DDR"], dst_v=3, src_v=3, vector=1),
        R(K["XFER_END"], 1134, dst=SP["PCORE_PRIVATE"], src=SP["DDR"], dst_v=3, src_v=3, vector=1),
        R(K["BUSY"], 1137, busy=0b01),
        R(K["XFER_START"], 1139, process=1, dst=SP["PCORE_SHARED"], src=SP["SCRATCH"], dst_v=2, src_v=2,
          dst_x2=1, src_x2=1, busy=0b01),
        R(K["BUSY"], 1150, busy=0b00),
        R(K["XFER_END"], 1160, process=1, dst=SP["PCORE_SHARED"], src=SP["SCRATCH"], dst_v=2, src_v=2,
          dst_x2=1, src_x2=1),
        R(K["XFER_START"], 1170, dst=SP["DDR"], src=SP["PCORE_PRIVATE"], scatter=1, lost=1),
        R(K["XFER_END"], 1180, dst=SP["DDR"], src=SP["PCORE_PRIVATE"], scatter=1),
        R(K["LOG_OFF"], 1181),
    ]


EXPECTED = """\
           XX PP SS PP SS DD
           01 WR WR WR WR WR
[       0]    +            +
[       0]    |            | PCORE V8 X1  <= DDR V8 X1
[     134]    +            +
[       3] +
[       2] |        +   +
[       0] |        |   |    PCORE V4 X2  <= SCRATCH V4 X2
[      11] +        |   |
[      10]          +   +
[      10]     +          +
[       0]     |          |  DDR V1 X1  <= PCORE V1 X1 SCATTER
[      10]     +          +
"""


def _words(records):
    return [w for r in records for w in r.words()] + [0]


def test_records_round_trip_through_words():
    recs = _records()
    assert te_trace.decode(_words(recs)) == recs


def test_text_report_has_the_guide_format():
    assert te_trace.text(_records()) == EXPECTED


def test_perfetto_trace_is_valid_json_with_one_track_per_process_space():
    doc = json.loads(json.dumps(te_trace.perfetto(_records(), clk_hz=100e6)))
    ev = doc["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    assert names == {name for _, name in te_trace.TRACKS.values()}
    slices = [e for e in ev if e["ph"] == "X"]
    kernels = [e for e in slices if e["name"] == "kernel"]
    assert len(kernels) == 1 and kernels[0]["tid"] == te_trace.TRACKS["kernel0"][0]
    assert kernels[0]["ts"] == pytest.approx(1.37) and kernels[0]["dur"] == pytest.approx(0.13)
    xfers = [e for e in slices if e["name"] != "kernel"]
    assert [(e["tid"], e["name"], e["args"]["cycles"]) for e in xfers] == [
        (te_trace.TRACKS["xfer0"][0], "PCORE V8 X1  <= DDR V8 X1", 134),
        (te_trace.TRACKS["xfer1"][0], "PCORE V4 X2  <= SCRATCH V4 X2", 21),
        (te_trace.TRACKS["xfer0"][0], "DDR V1 X1  <= PCORE V1 X1 SCATTER", 10),
    ]
    assert xfers[0]["args"]["path"] == "vector" and xfers[2]["args"]["path"] == "element"
    assert any(e["ph"] == "i" and e["name"] == "records lost" for e in ev)


def test_c_header_is_generated_from_the_format():
    header = (REPO / "sw" / "runtime" / "te_trace.h").read_text()
    assert te_trace.c_defines() in header, "run: python -m tensorsoc.sw.te_trace"


MAIN_C = r"""
#include <stdio.h>
#include "te_trace.h"
static uint32_t next(void) { unsigned v; return scanf("%x", &v) == 1 ? v : 0; }
static void put(int c) { putchar(c); }
int main(void) { te_trace_state_t st; te_trace_init(&st); return te_trace_print(&st, next, put) < 0; }
"""


@pytest.mark.skipif(not shutil.which("gcc"), reason="needs a host gcc")
def test_c_printer_prints_the_same_report(tmp_path):
    (tmp_path / "main.c").write_text(MAIN_C)
    exe = tmp_path / "te_trace_print"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "sw" / "runtime"),
                    str(tmp_path / "main.c"), str(REPO / "sw" / "runtime" / "te_trace.c"), "-o", str(exe)],
                   check=True)
    words = " ".join(f"{w:08x}" for w in _words(_records()))
    out = subprocess.run([str(exe)], input=words, capture_output=True, text=True, check=True).stdout
    assert out == EXPECTED


def test_cli_writes_perfetto_json_and_the_report(tmp_path, capsys):
    from tensorsoc.cli import main
    raw = tmp_path / "trace.txt"
    raw.write_text("# te_trace_raw() output\n" + "\n".join(
        f"{a:08x} {b:08x}" for r in _records() for a, b in [r.words()]) + "\n")
    assert main(["te", "trace", str(raw), "-o", str(tmp_path / "t.json"), "--text", "--clock-hz", "1e8"]) == 0
    out = capsys.readouterr().out
    assert EXPECTED in out and "ui.perfetto.dev" in out
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    (tmp_path / "bad.txt").write_text("zz\n")
    assert main(["te", "trace", str(tmp_path / "bad.txt")]) == 1


def test_docs_record_table_is_current():
    doc = (REPO / "docs" / "tensor_engine.md").read_text()
    assert te_trace.markdown_table() in doc, "docs/tensor_engine.md: paste sw.te_trace.markdown_table()"
