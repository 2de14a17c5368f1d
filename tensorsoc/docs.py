"""`make docs` (`tsoc docs`): regenerate every generated section of the docs
and C headers from its one definition in Python; `--check` changes nothing
and fails, naming them, when sections are stale (tests/test_docs.py runs it).

Three kinds of section:

* a whole file (the tensor instruction set's page and C header);
* a marked block of a Markdown page, between ``<!-- generated: NAME -->``
  and ``<!-- end generated -->`` (NAME says where it comes from);
* the generated block of a hand-written C header (te_trace.h).
"""

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
    return {
        "protocol.command_table_markdown()": command_table_markdown,
        "soc.fpga_bench.budget_table_markdown()": budget_table_markdown,
        "soc.bitstream.config_table_markdown()": config_table_markdown,
        "cores.pcore.soc.register_table_markdown()": register_table_markdown,
    }


@dataclass
class Section:
    path: str            # relative to the checkout
    name: str            # what it is generated from
    text: str            # the file with this section regenerated


def _whole_files():
    from tensorsoc.spec import tensor_isa as isa
    return [("docs/tensor_isa.md", "tensorsoc.spec.tensor_isa.docs_markdown()", isa.docs_markdown),
            ("sw/runtime/ztam_isa.h", "tensorsoc.spec.tensor_isa.c_header()", isa.c_header)]


MARKED_PAGES = ["docs/host_protocol.md", "docs/fpga.md", "docs/pcore.md"]


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
        if p.read_text() != text:
            stale.append((path, names[path]))
            if not check:
                p.write_text(text)
    return stale


def register(groups):
    p = groups["top"].add_parser(
        "docs", help="regenerate the generated sections of docs/ and the C headers (make docs)",
        description="Regenerate every generated section of the docs and C headers from its definition in "
                    "Python (the instruction set, host protocol, register maps, board configurations, FPGA "
                    "budgets, trace format). --check writes nothing and exits 1 when a section is stale.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 and name the stale sections")

    def run(args):
        stale = regenerate(check=args.check)
        for path, names in stale:
            print(f"{path}: {'stale' if args.check else 'regenerated'} ({', '.join(names)})")
        if not stale:
            print("every generated section is current")
        return 1 if stale and args.check else 0
    p.set_defaults(func=run)
