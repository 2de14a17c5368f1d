"""Generate the Verilog of a stand-alone PCORE array (cocotb top) and build
it with Verilator through cocotb's Python runner.

Build directories live under ``build/`` in the repository (gitignored).
"""

import hashlib
import json
from pathlib import Path

from migen.fhdl import verilog

from tensorsoc.cores.pcore.lane import generate_verilog
from tensorsoc.cores.pcore.pcore import TEPort
from tensorsoc.cores.pcore.soc import PCOREArray

REPO = Path(__file__).resolve().parents[2]
TOPLEVEL = "pcore_array_top"


def _ios(array):
    te = array.te
    bus = array.bus
    sigs = {bus.adr, bus.dat_w, bus.dat_r, bus.sel, bus.cyc, bus.stb, bus.ack, bus.we,
            *(getattr(te, n) for n in TEPort.OUT + TEPort.IN), array.busy,
            array.te_start_valid, array.te_start_ready, array.te_start_func, array.te_start_process,
            array.te_imem_we, array.te_imem_adr, array.te_imem_dat_w}
    return sigs


def _name_ports(array):
    te = array.te
    for n in TEPort.OUT + TEPort.IN:
        getattr(te, n).name_override = f"te_{n}"
    for n in ("adr", "dat_w", "dat_r", "sel", "cyc", "stb", "ack", "we"):
        getattr(array.bus, n).name_override = f"wb_{n}"
    array.busy.name_override = "busy"
    for n in ("te_start_valid", "te_start_ready", "te_start_func", "te_start_process",
              "te_imem_we", "te_imem_adr", "te_imem_dat_w"):
        getattr(array, n).name_override = n


def generate(config, build_dir, imem_words=None):
    """Write the array top and the lane Verilog; returns the source list."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    array = PCOREArray(config, imem_words)
    _name_ports(array)
    top = build_dir / f"{TOPLEVEL}.v"
    verilog.convert(array, ios=_ios(array), name=TOPLEVEL).write(str(top))
    return [str(generate_verilog(build_dir)), str(top)]


def build_dir_for(config, imem_words=None):
    imem_words = imem_words or config.pcore_imem_words
    key = json.dumps([config.np, config.nt, config.vw, config.pcore_private_words,
                      config.pcore_shared_words, imem_words])
    tag = f"np{config.np}_nt{config.nt}_vw{config.vw}_" + hashlib.sha1(key.encode()).hexdigest()[:6]
    return REPO / "build" / "pcore" / tag


def build(config, imem_words=None, waves=False, log_file=None):
    """Generate and Verilator-build the array; returns (runner, build_dir)."""
    from cocotb_tools.runner import get_runner
    from tensorsoc.soc.verilator import setup_env
    setup_env()
    bdir = build_dir_for(config, imem_words)
    sources = generate(config, bdir / "rtl", imem_words)
    runner = get_runner("verilator")
    runner.build(sources=sources, hdl_toplevel=TOPLEVEL, build_dir=str(bdir / "sim"),
                 build_args=["-Wno-fatal", "-Wno-WIDTH", "-Wno-COMBDLY", "-O2", "-j", "2"] + (["--trace-fst"] if waves else []),
                 waves=waves, always=False, log_file=log_file)
    return runner, bdir


def build_lane(width=16, acc_width=32):
    """Verilator-build the converted lane alone; returns (runner, build_dir, toplevel)."""
    from cocotb_tools.runner import get_runner
    from tensorsoc.cores.pcore.lane import module_name
    from tensorsoc.soc.verilator import setup_env
    setup_env()
    top = module_name(width, acc_width)
    bdir = REPO / "build" / "pcore" / f"lane_{width}_{acc_width}"
    src = generate_verilog(bdir / "rtl", width, acc_width)
    runner = get_runner("verilator")
    runner.build(sources=[str(src)], hdl_toplevel=top, build_dir=str(bdir / "sim"),
                 build_args=["-Wno-fatal", "-Wno-WIDTH"], always=False)
    return runner, bdir, top
