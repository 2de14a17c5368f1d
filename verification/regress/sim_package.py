"""The built simulator of one configuration as a content-addressed package:
how it reaches the regression's workers.

Its key is a SHA-256 of the configuration and of every source the build
generated (Verilog, memory .init files, firmware images, headers, the
Verilator control file).  The package also names the simulator executable's
own digest.  A worker that sees the scheduler's build folder with the same
key and executable uses it in place (a shared filesystem).  Otherwise it
unpacks the tarball of the folder's run files that the scheduler ships with
the SimulatorPlugin into a cache of its machine (TSOC_REGRESS_CACHE, default
~/.cache/tsoc/regress-sims/KEY), or, with no tarball, builds the
configuration itself and checks that its sources give the same key.  Either
way the key is checked on the worker before a test runs."""

import contextlib
import fcntl
import hashlib
import io
import json
import logging
import os
import shutil
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace

from distributed.diagnostics.plugin import WorkerPlugin
from tensorsoc.verification.soc.runner import sim_dir
from tensorsoc.soc.builder import SimBuild
from tensorsoc.spec.config import SoCConfig
from tensorsoc.verification.soc.runner import cocotb_build

# Generated sources: the key.  Relative to the build folder.
SOURCES = ("public.vlt", "gateware/*.v", "gateware/*.init", "firmware/*.bin", "soc/csr.json", "soc/include/**/*.h")
# What a test run reads besides the sources: the source list (its absolute
# paths are rewritten on unpacking) and the executable.
SOURCE_LIST = "gateware/sources.json"
TOPLEVEL = "tensorsoc"
VERIFIED = ".tsoc-verified"            # written into a cache folder once its key was checked

log = logging.getLogger("tsoc.regress")


class SimulatorMismatch(RuntimeError):
    """A simulator folder whose content does not give the expected key."""


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _source_files(build_dir):
    build_dir = Path(build_dir)
    files = {p for pattern in SOURCES for p in build_dir.glob(pattern) if p.is_file()}
    return sorted(p.relative_to(build_dir).as_posix() for p in files)


def _executable(build_dir):
    return sim_dir(SimpleNamespace(build_dir=Path(build_dir))) / TOPLEVEL


def _executable_digest(build_dir):
    exe = _executable(build_dir)
    return _sha256(exe.read_bytes()) if exe.is_file() else None


def content_key(build_dir, config):
    """SHA-256 of ``config`` (a dict) and of the generated sources in ``build_dir``."""
    h = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    files = _source_files(build_dir)
    if not files:
        raise SimulatorMismatch(f"{build_dir}: no generated sources (is it a tsoc simulation build?)")
    for rel in files:
        h.update(f"\0{rel}\0{_sha256((Path(build_dir) / rel).read_bytes())}".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class SimPackage:
    """What a worker needs to find, unpack or build one configuration's simulator."""
    key: str             # content_key() of the build
    config: dict         # SoCConfig.as_dict()
    build_dir: str       # where the scheduler built it
    executable: str      # SHA-256 of the simulator executable

    @property
    def short(self):
        return self.key[:12]

    @classmethod
    def of(cls, build):
        """The package of a finished cocotb_build(build)."""
        config = build.config.as_dict()
        return cls(content_key(build.build_dir, config), config, str(build.build_dir),
                   _executable_digest(build.build_dir))

    def as_dict(self):
        return asdict(self)

    def check(self, build_dir, executable=None):
        """Raises SimulatorMismatch unless ``build_dir`` holds this package's
        sources and the simulator whose digest is ``executable`` (default:
        the scheduler's)."""
        key = content_key(build_dir, self.config)
        if key != self.key:
            raise SimulatorMismatch(f"{build_dir}: sources give key {key[:12]}, expected {self.short}")
        if _executable_digest(build_dir) != (executable or self.executable):
            raise SimulatorMismatch(f"{_executable(build_dir)}: missing or not the simulator expected "
                                    f"for key {self.short}")

    def tarball(self):
        """The run files of the scheduler's build, as a gzip'd tar (bytes)."""
        root = Path(self.build_dir)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for rel in _source_files(root) + [SOURCE_LIST, _executable(root).relative_to(root).as_posix()]:
                tar.add(root / rel, arcname=rel)
        return buf.getvalue()


def cache_root():
    return Path(os.environ.get("TSOC_REGRESS_CACHE") or Path.home() / ".cache" / "tsoc" / "regress-sims")


@contextlib.contextmanager
def _locked(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _unpack(pkg, data, dest):
    """Unpacks the tarball into ``dest`` (next to it first, then renamed),
    rewrites the source list's paths and checks the key and executable."""
    tmp = dest.with_name(dest.name + ".unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(tmp, filter="data")
    sources = tmp / SOURCE_LIST
    doc = json.loads(sources.read_text())
    # A generated source the tarball carries points at its unpacked copy;
    # others (the CPU's Verilog in the venv) stay as they are.
    doc["verilog"] = [str(dest / "gateware" / Path(v).name) if (tmp / "gateware" / Path(v).name).is_file() else v
                      for v in doc["verilog"]]
    sources.write_text(json.dumps(doc, indent=1))
    pkg.check(tmp)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    (dest / VERIFIED).write_text(pkg.executable)


def _build_here(pkg, dest):
    """Builds the configuration on this machine and checks its sources give the key."""
    build = SimBuild(SoCConfig(**pkg.config), dest, log=log.info)
    cocotb_build(build)
    own = _executable_digest(dest)          # a build of the same sources: the executable is this machine's
    pkg.check(dest, own)
    (dest / VERIFIED).write_text(own)


def locate(pkg, tarball=None):
    """The folder of ``pkg``'s simulator on this machine, and how it got
    there: "shared" (the scheduler's folder, same key), "cached" (unpacked or
    built here before), "shipped" (unpacked from ``tarball`` now) or "built"
    (built here now, when there is no tarball)."""
    shared = Path(pkg.build_dir)
    if shared.is_dir():
        with contextlib.suppress(SimulatorMismatch, OSError):
            pkg.check(shared)
            return shared, "shared"
    dest = cache_root() / pkg.key
    with _locked(cache_root() / f"{pkg.key}.lock"):      # worker processes of one machine
        if (dest / VERIFIED).exists():
            pkg.check(dest, (dest / VERIFIED).read_text())
            return dest, "cached"
        if tarball is not None:
            if _sha256(tarball[1]) != tarball[0]:
                raise SimulatorMismatch(f"simulator {pkg.short}: the shipped tarball is corrupt (SHA-256 differs)")
            _unpack(pkg, tarball[1], dest)
            return dest, "shipped"
        _build_here(pkg, dest)
        return dest, "built"


class SimulatorPlugin(WorkerPlugin):
    """Ships one configuration's simulator to every worker of the cluster,
    those that join later included: Dask runs setup() on each.  It carries
    the run files' tarball (a few hundred KB); a worker that sees the
    scheduler's folder with the same key leaves it packed.  (Without a
    tarball, the first test a worker runs builds it: a build takes minutes,
    too long for setup(), which runs in the worker's event loop.)"""

    def __init__(self, pkg: SimPackage, run=None):
        self.pkg, self.run = pkg, run
        data = pkg.tarball()
        self.tarball = (_sha256(data), data)
        self.name = f"tsoc-sim-{pkg.short}"

    def setup(self, worker):
        folder, how = locate(self.pkg, self.tarball)
        message = describe(self.pkg, folder, how)
        log.info(message)
        worker.log_event("tsoc-regress", {"run": self.run, "worker": worker.address, "simulator": message})


def describe(pkg, folder, how):
    what = {"shared": "the scheduler's folder, same key (shared filesystem)",
            "cached": "this machine's cache, key checked",
            "shipped": "unpacked from the scheduler's tarball, key checked",
            "built": "built on this worker, key checked"}[how]
    return f"simulator {pkg.short} {how}: {folder} ({what})"
