"""Stand-alone cocotb top of the TensorEngine: the engine, LiteX's Wishbone
SRAM on a bursting bus as DDR (the SoC's main RAM in simulation, incremental
bursts accepted) and the PCORE array (its memory model by default).  Builds it with
Verilator through cocotb's Python runner."""

import hashlib
import json
from pathlib import Path

from migen import *
from migen.fhdl import verilog

from litex.soc.interconnect import wishbone

from tensorsoc.cores.tensor_engine.engine import TensorEngineCore
from tensorsoc.verification.te.models import PCOREMemoryModel

REPO = Path(__file__).resolve().parents[2]
TOPLEVEL = "te_top"
DDR_BYTES = 4096
BACKDOOR = ["te_ddr", "te_scratch", "te_spu", "te_pm_priv0", "te_pm_priv1", "te_pm_shr0", "te_pm_shr1"]


class TETop(Module):
    """``array``: "model" (PCOREMemoryModel, back-door memories), "real"
    (cores.pcore.array.PCOREArrayCore; its instruction memory write port is a
    top port: imem_we, imem_adr, imem_dat_w) or "classic-bus" (the model, and
    DDR on a non-bursting bus)."""

    def __init__(self, config, ddr_bytes=DDR_BYTES, array="model"):
        self.ddr_bytes = ddr_bytes
        self.submodules.engine = e = TensorEngineCore(config, ddr_base=0, ddr_size=ddr_bytes)
        ram_bus = e.bus
        if array == "classic-bus":
            # LiteX's SRAM on a bus without bursting (SoCCore's default bus_bursting=False): cti ignored
            ram_bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=False)
            self.comb += e.bus.connect(ram_bus)
        if array == "real":
            # The instruction fetch (cores/tensor_engine/fetch.py) shares DDR with the engine's
            # master, as both share main RAM in the SoC; idle unless fetch_start is pulsed.
            from tensorsoc.cores.tensor_engine.fetch import TEFetchCore
            self.submodules.fetch = f = TEFetchCore(config.pcore_imem_words)
            ram_bus = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
            self.submodules.ram_arbiter = wishbone.Arbiter([e.bus, f.bus], ram_bus)
        self.submodules.ram = wishbone.SRAM(Memory(32, ddr_bytes // 4, name="te_ddr"), bus=ram_bus)
        if array == "real":
            from tensorsoc.cores.pcore.array import PCOREArrayCore
            self.submodules.array = a = PCOREArrayCore(config)
        else:
            self.submodules.array = a = PCOREMemoryModel(config)
        self.comb += e.te.connect(a.te)
        self.comb += [a.start_valid.eq(e.start_valid), e.start_ready.eq(a.start_ready),
                      a.start_func.eq(e.start_func), a.start_process.eq(e.start_process), e.busy.eq(a.busy)]
        self.ios = set()
        for n in ("xfer_active", "xfer_vector"):
            getattr(e, n).name_override = n
            self.ios.add(getattr(e, n))
        e.bmode.name_override = "xfer_bcast"      # the vector path's one-write broadcast over PCOREs
        self.ios.add(e.bmode)
        if array == "real":
            # Top ports q_we/q_data/imem_* are the bench's; the fetch's pushes and writes join them.
            for n, w in (("q_we", 1), ("q_data", 32)):
                setattr(self, n, Signal(w, name_override=n))
                self.ios.add(getattr(self, n))
            self.comb += [e.q_we.eq(self.q_we | f.q_we), e.q_data.eq(Mux(f.q_we, f.q_data, self.q_data)),
                          f.q_space.eq(e.q_space)]
            for n in ("address", "length", "target", "start", "busy", "remaining"):
                s = getattr(f, n)
                s.name_override = f"fetch_{n}"
                self.ios.add(s)
        queue = ("q_space",) if array == "real" else ("q_we", "q_data", "q_space")
        for n in queue + ("idle", "errors", "errors_clear", "cb_valid", "cb_tag", "cb_pop",
                          "start_valid", "start_ready", "start_func", "start_process", "busy", "log_on",
                          "trace_word", "trace_pop", "trace_level"):
            s = getattr(e, n)
            s.name_override = n
            self.ios.add(s)
        if array == "real":
            imem = {}
            for n, w in (("imem_we", 1), ("imem_adr", len(a.imem_adr)), ("imem_dat_w", 32)):
                imem[n] = s = Signal(w, name_override=n)
                self.ios.add(s)
            self.comb += [
                a.imem_we.eq(imem["imem_we"] | f.imem_we),
                a.imem_adr.eq(Mux(f.imem_we, f.imem_adr, imem["imem_adr"])),
                a.imem_dat_w.eq(Mux(f.imem_we, f.imem_dat_w, imem["imem_dat_w"])),
            ]


def config_key(config, ddr_bytes, array="model"):
    """Every field of the configuration (a field the top ignores costs a
    second build, a missed one would share a build between two engines)."""
    key = [config.as_dict(), ddr_bytes]
    return json.dumps(key + ([array] if array != "model" else []), sort_keys=True)


def build_dir_for(config, ddr_bytes=DDR_BYTES, array="model"):
    h = hashlib.sha1(config_key(config, ddr_bytes, array).encode()).hexdigest()[:8]
    return REPO / "build" / "te" / (("top_" if array == "model" else f"top_{array}_") + h)


def generate(config, build_dir, ddr_bytes=DDR_BYTES, array="model"):
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    top = TETop(config, ddr_bytes, array)
    path = build_dir / f"{TOPLEVEL}.v"
    verilog.convert(top, ios=top.ios, name=TOPLEVEL).write(str(path))
    vlt = build_dir / "public.vlt"
    backdoor = BACKDOOR[:3] if array == "real" else BACKDOOR
    ports = sorted(s.name_override for s in top.ios) + ["sys_clk", "sys_rst"]
    vlt.write_text("`verilator_config\n" + "".join(
        f'public_flat_rw -module "{TOPLEVEL}" -var "{m}"\n' for m in backdoor + ports))
    sources = [str(vlt), str(path)]
    if array == "real":
        from tensorsoc.cores.pcore.lane import verilog_for
        sources.insert(1, str(verilog_for(config, build_dir)))
    return sources


def build(config, waves=False, log_file=None, ddr_bytes=DDR_BYTES, array="model"):
    """Generate and Verilator-build the top; returns (runner, build_dir)."""
    from tensorsoc.verification.soc.runner import _fast_verilator_runner, build_lock
    from tensorsoc.soc.verilator import setup_env
    setup_env()
    bdir = build_dir_for(config, ddr_bytes, array)
    with build_lock(bdir):
        sources = generate(config, bdir / "rtl", ddr_bytes, array)
        runner = _fast_verilator_runner()
        runner.build(sources=sources, hdl_toplevel=TOPLEVEL, build_dir=str(bdir / ("sim-waves" if waves else "sim")),
                     build_args=["-Wno-fatal", "-Wno-lint", "-Wno-style", "-O2", "-j", "2"]
                     + (["--trace-fst"] if waves else []),
                     waves=waves, always=False, log_file=log_file)
    return runner, bdir
