"""docs/host_protocol.md carries the command table generated from protocol.py."""

from pathlib import Path

from tensorsoc.spec.host_protocol import COMMANDS, command_table_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "host_protocol.md"
BEGIN = "<!-- generated: protocol.command_table_markdown() -->\n"
END = "<!-- end generated -->"


def test_committed_command_table_is_current():
    text = DOC.read_text()
    assert BEGIN in text and END in text, f"{DOC}: generated-table markers missing"
    committed = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert committed == command_table_markdown(), (
        f"{DOC}: the command table differs from protocol.COMMANDS; regenerate it with "
        "tensorsoc.spec.host_protocol.command_table_markdown()")


def test_table_has_one_row_per_command():
    rows = [l for l in command_table_markdown().splitlines()[2:] if l.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows] == [c.name for c in COMMANDS]
