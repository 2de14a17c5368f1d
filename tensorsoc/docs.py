"""`make docs` (`tsoc docs`): regenerate every generated section of the docs
and C headers from its one definition in Python; `--check` changes nothing
and fails, naming them, when sections are stale (tests/test_docs.py runs it).

Four kinds of section:

* a whole file (the tensor instruction set's page and C header);
* the files of a generated folder: docs/soc/, LiteX's documentation
  generator (``litex.soc.doc.generate_docs``) run on the default simulation
  SoC, i.e. every core's ``ModuleDoc`` and the CSR register map; a file of
  that folder the generator no longer writes is stale too (and removed);
* a marked block of a Markdown page, between ``<!-- generated: NAME -->``
  and ``<!-- end generated -->`` (NAME says where it comes from);
* the generated block of a hand-written C header (te_trace.h).
"""

import functools
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
END = "<!-- end generated -->"


def _generators():
    """NAME -> function giving the section's text (imported on use)."""
    from tensorsoc.cores.pcore.soc import register_table_markdown
    from tensorsoc.soc.bitstream import config_table_markdown
    from tensorsoc.soc.fpga_bench import budget_table_markdown
    from tensorsoc.spec.host_protocol import command_table_markdown
    from tensorsoc.spec.pcore_isa import vector_table_markdown
    return {
        "spec.pcore_isa.vector_table_markdown()": vector_table_markdown,
        "protocol.command_table_markdown()": command_table_markdown,
        "soc.fpga_bench.budget_table_markdown()": budget_table_markdown,
        "soc.bitstream.config_table_markdown()": config_table_markdown,
        "cores.pcore.soc.register_table_markdown()": register_table_markdown,
    }


@dataclass
class Section:
    path: str            # relative to the checkout
    name: str            # what it is generated from
    text: str            # the file with this section regenerated (None: the file must not exist)


SOC_DOCS = "docs/soc"
SOC_DOCS_NAME = "litex.soc.doc.generate_docs(default simulation SoC)"


@functools.lru_cache(maxsize=1)
def soc_docs():
    """LiteX's documentation generator on the default simulation SoC (what
    ``make sim`` builds): {file name: text} of the reStructuredText it
    writes, one page per CSR bank (the module's ModuleDocs, then its
    registers with addresses and fields), the interrupts and an index.
    Left out: its Sphinx conf.py (it holds the current year) and the
    WaveDrom scripts it copies from LiteX.  Nothing in the pages depends on
    the build folder or the time (the Verilog of the lanes is written to a
    temporary folder)."""
    import contextlib
    import io
    import tempfile
    from litex.soc.doc import generate_docs
    from tensorsoc.soc.builder import make_sim_soc
    from tensorsoc.spec.config import DEFAULT
    with tempfile.TemporaryDirectory() as tmp:
        soc = make_sim_soc(DEFAULT, gateware_dir=Path(tmp) / "gateware")
        soc.finalize()
        out = Path(tmp) / "doc"
        with contextlib.redirect_stdout(io.StringIO()):       # its notes on memories in CSR space
            generate_docs(soc, str(out), project_name="tensorsoc", author="tensorsoc", quiet=True)
        pages = {p.name: p.read_text() for p in sorted(out.iterdir()) if p.is_file() and p.suffix == ".rst"}
        others = sorted(p.name for p in out.iterdir() if p.is_file() and p.suffix not in (".rst", ".py"))
    if others:     # a Markdown ModuleDoc: LiteX names its file after hash(title), which varies per run
        raise ValueError(f"LiteX's documentation generator wrote {others}: only reStructuredText is kept")
    return pages


def _soc_docs_sections(root):
    pages = soc_docs()
    out = [Section(f"{SOC_DOCS}/{name}", SOC_DOCS_NAME, text) for name, text in pages.items()]
    folder = Path(root) / SOC_DOCS
    if folder.is_dir():
        out += [Section(f"{SOC_DOCS}/{p.name}", SOC_DOCS_NAME, None)
                for p in sorted(folder.iterdir()) if p.is_file() and p.name not in pages]
    return out


def _whole_files():
    from tensorsoc.spec import tensor_isa as isa
    return [("docs/tensor_isa.md", "tensorsoc.spec.tensor_isa.docs_markdown()", isa.docs_markdown),
            ("sw/runtime/ztam_isa.h", "tensorsoc.spec.tensor_isa.c_header()", isa.c_header)]


MARKED_PAGES = ["docs/host_protocol.md", "docs/fpga.md", "docs/pcore.md", "docs/pcore_isa.md"]


def _marked(path, text, generators):
    """Regenerate every marked block of one page: [(name, new text)]."""
    out = []
    pos = 0
    while True:
        start = text.find("<!-- generated: ", pos)
        if start < 0:
            return out
        head_end = text.index("-->\n", start) + len("-->\n")
        name = text[start + len("<!-- generated: "):head_end - len(" -->\n")]
        end = text.find(END, head_end)
        if end < 0:
            raise ValueError(f"{path}: '<!-- generated: {name} -->' has no '{END}'")
        if name not in generators:
            raise ValueError(f"{path}: unknown generated section '{name}' (known: {', '.join(generators)})")
        body = generators[name]()
        text = text[:head_end] + body + ("" if body.endswith("\n") else "\n") + text[end:]
        out.append((name, text))
        pos = head_end


def sections(root=REPO):
    """Every generated section, regenerated: [Section] (``text``: the whole
    file as it should be, with this section and the ones before it in the
    same file regenerated)."""
    from tensorsoc.sw import te_trace
    root = Path(root)
    out = [Section(p, name, f()) for p, name, f in _whole_files()]
    gens = _generators()
    for page in MARKED_PAGES:
        out += [Section(page, name, text) for name, text in _marked(page, (root / page).read_text(), gens)]
    header = "sw/runtime/te_trace.h"
    s = (root / header).read_text()
    a, b = s.index(te_trace.C_BEGIN), s.index(te_trace.C_END) + len(te_trace.C_END)
    out.append(Section(header, "tensorsoc.sw.te_trace.c_defines()", s[:a] + te_trace.c_defines() + s[b:]))
    out += _soc_docs_sections(root)
    return out


def regenerate(root=REPO, check=False):
    """Write every stale file (``check``: only report them).  Returns the
    list of (path, [section names]) that were (or would be) changed."""
    root = Path(root)
    final, names = {}, {}
    for sec in sections(root):
        final[sec.path] = sec.text             # a page's last section carries all of its regenerated blocks
        names.setdefault(sec.path, []).append(sec.name)
    stale = []
    for path, text in final.items():
        p = root / path
        current = p.read_text() if p.exists() else None
        if current != text:
            stale.append((path, names[path]))
            if check:
                continue
            if text is None:
                p.unlink()
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(text)
    return stale


def register(groups):
    p = groups["top"].add_parser(
        "docs", help="regenerate the generated sections of docs/ and the C headers (make docs)",
        description="Regenerate every generated section of the docs and C headers from its definition in "
                    "Python (the instruction set, host protocol, register maps, board configurations, FPGA "
                    "budgets, trace format) and docs/soc/ with LiteX's documentation generator (the cores' "
                    "module docs and the SoC's CSR register map). --check writes nothing and exits 1 when a section is stale.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 and name the stale sections")

    def run(args):
        stale = regenerate(check=args.check)
        for path, names in stale:
            print(f"{path}: {'stale' if args.check else 'regenerated'} ({', '.join(names)})")
        if not stale:
            print("every generated section is current")
        return 1 if stale and args.check else 0
    p.set_defaults(func=run)
