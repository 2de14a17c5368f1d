"""`make docs` (tensorsoc/docs.py): every generated section of the docs and
C headers is current on main, and a stale one is found and rewritten."""

import shutil

from tensorsoc import docs


def test_every_generated_section_is_current():
    stale = docs.regenerate(check=True)
    assert not stale, f"stale generated sections (run `make docs`): {stale}"


def _copy(tmp_path):
    paths = {s.path for s in docs.sections()}
    for p in paths:
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(docs.REPO / p, tmp_path / p)
    return paths


def test_a_stale_section_is_named_then_regenerated(tmp_path):
    paths = _copy(tmp_path)
    assert {"docs/host_protocol.md", "docs/fpga.md", "docs/pcore.md", "docs/tensor_isa.md",
            "sw/runtime/ztam_isa.h", "sw/runtime/te_trace.h"} <= paths
    page = tmp_path / "docs" / "fpga.md"
    text = page.read_text()
    page.write_text(text.replace("| peak MACs per clock (NP x VW) | 4 |", "| peak MACs per clock (NP x VW) | 5 |"))
    (tmp_path / "sw" / "runtime" / "te_trace.h").write_text(
        (tmp_path / "sw" / "runtime" / "te_trace.h").read_text().replace("#define TE_TRACE_RECORD_WORDS", "#define X"))
    stale = docs.regenerate(tmp_path, check=True)
    assert [p for p, _ in stale] == ["docs/fpga.md", "sw/runtime/te_trace.h"]
    assert "soc.bitstream.config_table_markdown()" in stale[0][1]
    assert page.read_text() != text                       # --check wrote nothing
    docs.regenerate(tmp_path)
    assert page.read_text() == text and docs.regenerate(tmp_path, check=True) == []
