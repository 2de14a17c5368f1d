"""The project's layers and the direction of its imports.

From the bottom: ``spec`` (the neutral definitions), ``sw`` (firmware,
compilers, host library), ``cores`` (gateware), ``soc`` (the SoC and its
builds), ``verification`` (golden models, testbenches, regression), and the
``tsoc`` command on top.  A module imports only from its own layer or the
ones below it.  The imports that still go upward are listed in
tests/upward_imports.txt (to be removed, never added to): a new one fails
here, and so does an entry that no longer exists (remove it from the list).
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ["spec", "sw", "cores", "soc", "verification", "tensorsoc"]
ALLOWED = REPO / "tests" / "upward_imports.txt"


def _imports(path):
    """(line, module) of every import of a tensorsoc module in ``path`` (function-local ones too)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _layer_of(module):
    """The layer of a module; None outside the project, and for the bare
    ``tensorsoc`` package (its __init__ imports nothing)."""
    parts = module.split(".")
    if parts[0] != "tensorsoc" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in LAYERS[:-1] else "tensorsoc"


def upward_imports():
    """{"file: module"} for every import from a higher layer."""
    found = set()
    for layer in LAYERS:
        folder = REPO / layer
        for path in sorted(folder.rglob("*.py")):
            for _, module in _imports(path):
                target = _layer_of(module)
                if target is not None and LAYERS.index(target) > LAYERS.index(layer):
                    found.add(f"{path.relative_to(REPO)}: {module}")
    return found


def _allowed():
    return {line.strip() for line in ALLOWED.read_text().splitlines() if line.strip() and not line.startswith("#")}


def test_no_new_upward_import():
    new = sorted(upward_imports() - _allowed())
    assert not new, ("imports from a higher layer (see this file's docstring; move the shared definition down, "
                     "e.g. into spec/):\n  " + "\n  ".join(new))


def test_upward_import_list_is_current():
    stale = sorted(_allowed() - upward_imports())
    assert not stale, "tests/upward_imports.txt lists imports that are gone (remove them):\n  " + "\n  ".join(stale)


def test_spec_imports_nothing_of_the_project():
    bad = [f"{p.relative_to(REPO)}:{line}: {m}" for p in (REPO / "spec").rglob("*.py")
           for line, m in _imports(p) if m.startswith("tensorsoc") and not m.startswith("tensorsoc.spec")]
    assert not bad, bad
