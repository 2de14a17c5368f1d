"""The project's layers and the direction of its imports.

From the bottom: ``spec`` (the neutral definitions), ``sw`` (firmware,
compilers, host library), ``cores`` (gateware), ``soc`` (the SoC and its
builds), ``verification`` (golden models, testbenches, regression), and the
``tsoc`` command on top (``tensorsoc/``: the command line and the flows
that join the layers).  A module imports only from its own layer or the ones
below it, with no exception: where two layers need the same definition, it
moves down into ``spec/``.
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ["spec", "sw", "cores", "soc", "verification", "tensorsoc"]


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


def upward_imports(root=REPO):
    """{"file:line: module"} for every import from a higher layer."""
    found = set()
    for layer in LAYERS:
        folder = root / layer
        for path in sorted(folder.rglob("*.py")):
            for line, module in _imports(path):
                target = _layer_of(module)
                if target is not None and LAYERS.index(target) > LAYERS.index(layer):
                    found.add(f"{path.relative_to(root)}:{line}: {module}")
    return found


def test_no_upward_import():
    found = sorted(upward_imports())
    assert not found, ("imports from a higher layer (see this file's docstring; move the shared definition down, "
                       "e.g. into spec/):\n  " + "\n  ".join(found))


def test_upward_imports_are_found(tmp_path):
    """The check itself: a planted upward import (also a function-local one) is reported, a downward one is not."""
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "sw" / "a.py").write_text("from tensorsoc.spec import config\n"
                                          "def f():\n    from tensorsoc.soc.builder import SimBuild\n")
    (tmp_path / "cores" / "b.py").write_text("import tensorsoc.verification.golden.cnn\n")
    (tmp_path / "tensorsoc" / "c.py").write_text("from tensorsoc.verification import golden\n")
    assert upward_imports(tmp_path) == {"sw/a.py:3: tensorsoc.soc.builder",
                                        "cores/b.py:1: tensorsoc.verification.golden.cnn"}


def test_spec_imports_nothing_of_the_project():
    bad = [f"{p.relative_to(REPO)}:{line}: {m}" for p in (REPO / "spec").rglob("*.py")
           for line, m in _imports(p) if m.startswith("tensorsoc") and not m.startswith("tensorsoc.spec")]
    assert not bad, bad
