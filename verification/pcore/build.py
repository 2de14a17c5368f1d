"""Generate the Verilog of a stand-alone PCORE array (cocotb top) and build
it with Verilator through cocotb's Python runner.

The top is the ``PCOREArray`` with its CSR bank, made by LiteX's
``CSRBankArray`` as in a SoC: the testbench reaches the registers through
the bank's CSR bus (``csr_*`` ports, word addresses from ``csr_map``) and
the instruction memory through the array's Wishbone slave (``wb_*``).

Build directories live under ``build/`` in the repository (gitignored).
"""

import hashlib
import json
from pathlib import Path

from migen.fhdl import verilog

from tensorsoc.cores.pcore.lane import generate_verilog, verilog_for
from tensorsoc.cores.pcore.pcore import TEPort
from tensorsoc.cores.pcore.soc import PCOREArrayTop

REPO = Path(__file__).resolve().parents[2]
TOPLEVEL = "pcore_array_top"


def csr_map(config, imem_words=None):
    """CSR name (``info`` ... ``macs``) -> word address on the top's CSR bus."""
    return PCOREArrayTop(config, imem_words).csr_map


def _ios(top):
    array = top.pcore
    te = array.te
    bus = array.bus
    csr = top.csr
    sigs = {bus.adr, bus.dat_w, bus.dat_r, bus.sel, bus.cyc, bus.stb, bus.ack, bus.we,
            csr.adr, csr.re, csr.we, csr.dat_w, csr.dat_r,
            *(getattr(te, n) for n in TEPort.OUT + TEPort.IN), array.busy,
            array.te_start_valid, array.te_start_ready, array.te_start_func, array.te_start_process,
            array.te_imem_we, array.te_imem_adr, array.te_imem_dat_w}
    return sigs


def _name_ports(top):
    array = top.pcore
    te = array.te
    for n in TEPort.OUT + TEPort.IN:
        getattr(te, n).name_override = f"te_{n}"
    for n in ("adr", "dat_w", "dat_r", "sel", "cyc", "stb", "ack", "we"):
        getattr(array.bus, n).name_override = f"wb_{n}"
    for n in ("adr", "re", "we", "dat_w", "dat_r"):
        getattr(top.csr, n).name_override = f"csr_{n}"
    array.busy.name_override = "busy"
    for n in ("te_start_valid", "te_start_ready", "te_start_func", "te_start_process",
              "te_imem_we", "te_imem_adr", "te_imem_dat_w"):
        getattr(array, n).name_override = n


def generate(config, build_dir, imem_words=None):
    """Write the array top and the lane Verilog; returns the source list."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    top = PCOREArrayTop(config, imem_words)
    _name_ports(top)
    out = build_dir / f"{TOPLEVEL}.v"
    verilog.convert(top, ios=_ios(top), name=TOPLEVEL).write(str(out))
    return [str(verilog_for(config, build_dir)), str(out)]


def build_dir_for(config, imem_words=None):
    imem_words = imem_words or config.pcore_imem_words
    key = json.dumps([config.np, config.nt, config.vw, config.pcore_private_words,
                      config.pcore_shared_words, imem_words, config.pcore_shift_dsp, config.pcore_round_share])
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


def build_lane(width=16, acc_width=32, dsp_shift=False):
    """Verilator-build the converted lane alone (``dsp_shift``: the lane of
    ``SoCConfig.pcore_shift_dsp``); returns (runner, build_dir, toplevel)."""
    from cocotb_tools.runner import get_runner
    from tensorsoc.cores.pcore.lane import module_name
    from tensorsoc.soc.verilator import setup_env
    setup_env()
    top = module_name(width, acc_width, dsp_shift)
    bdir = REPO / "build" / "pcore" / f"lane_{width}_{acc_width}{'_dsp' if dsp_shift else ''}"
    src = generate_verilog(bdir / "rtl", width, acc_width, dsp_shift)
    runner = get_runner("verilator")
    runner.build(sources=[str(src)], hdl_toplevel=top, build_dir=str(bdir / "sim"),
                 build_args=["-Wno-fatal", "-Wno-WIDTH"], always=False)
    return runner, bdir, top
