"""`make docs` (tensorsoc/docs.py): every generated section of the docs and
C headers is current on main, and a stale one is found and rewritten."""

import shutil

from tensorsoc import docs


def test_every_generated_section_is_current():
    stale = docs.regenerate(check=True)
    assert not stale, f"stale generated sections (run `make docs`): {stale}"


def _copy(tmp_path):
    paths = {s.path for s in docs.sections() if s.text is not None}
    for p in paths:
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(docs.REPO / p, tmp_path / p)
    return paths


def test_a_stale_section_is_named_then_regenerated(tmp_path):
    paths = _copy(tmp_path)
    assert {"docs/host_protocol.md", "docs/fpga.md", "docs/pcore.md", "docs/tensor_isa.md",
            "sw/runtime/ztam_isa.h", "sw/runtime/te_trace.h", "docs/soc/index.rst", "docs/soc/pcore.rst"} <= paths
    page = tmp_path / "docs" / "fpga.md"
    text = page.read_text()
    row = "| peak MACs per clock (NP x VW) | "
    assert row in text
    page.write_text(text.replace(row, row + "1", 1))     # the ULX3S's peak prefixed with a 1
    (tmp_path / "sw" / "runtime" / "te_trace.h").write_text(
        (tmp_path / "sw" / "runtime" / "te_trace.h").read_text().replace("#define TE_TRACE_RECORD_WORDS", "#define X"))
    stale = docs.regenerate(tmp_path, check=True)
    assert [p for p, _ in stale] == ["docs/fpga.md", "sw/runtime/te_trace.h"]
    assert "soc.bitstream.config_table_markdown()" in stale[0][1]
    assert page.read_text() != text                       # --check wrote nothing
    docs.regenerate(tmp_path)
    assert page.read_text() == text and docs.regenerate(tmp_path, check=True) == []


def test_the_rendered_register_map_is_checked(tmp_path):
    """docs/soc/ (LiteX's generate_docs on the default simulation SoC): a
    changed page, a page it no longer writes and a missing page are stale;
    regenerating restores the folder exactly."""
    _copy(tmp_path)
    soc = tmp_path / "docs" / "soc"
    pcore = (soc / "pcore.rst").read_text()
    assert "PCORE_STATUS" in pcore and "PCORE array" in pcore            # the CSRs and the module doc
    assert "PCORE_FUNC" in pcore and "THREADS" in pcore                  # a field
    (soc / "pcore.rst").write_text(pcore.replace("PCORE_STATUS", "PCORE_STATE"))
    (soc / "uart.rst").unlink()
    (soc / "old_core.rst").write_text("OLD\n")
    stale = dict(docs.regenerate(tmp_path, check=True))
    assert set(stale) == {"docs/soc/pcore.rst", "docs/soc/uart.rst", "docs/soc/old_core.rst"}
    assert stale["docs/soc/pcore.rst"] == [docs.SOC_DOCS_NAME]
    docs.regenerate(tmp_path)
    assert (soc / "pcore.rst").read_text() == pcore and (soc / "uart.rst").exists()
    assert not (soc / "old_core.rst").exists() and docs.regenerate(tmp_path, check=True) == []


def test_the_rendered_register_map_is_deterministic():
    """No time, no absolute path, no build folder in the pages."""
    import re
    pages = docs.soc_docs()
    assert {"index.rst", "pcore.rst", "tensor_engine.rst", "tensor_engine_fetch.rst", "host_port.rst"} <= set(pages)
    for name, text in pages.items():
        assert str(docs.REPO) not in text and "/tmp" not in text, name
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), name
