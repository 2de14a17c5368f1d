"""cocotb bench of the TensorEngine: elements per clock of long transfers of
each kind (broadcasts to every PCORE included: elements of the source per
clock), timed by the engine's ``xfer_active`` (decode excluded), every
transfer checked against the reference executor.  Writes TSOC_TE_BENCH_JSON."""

import json
import os

import cocotb
from cocotb.triggers import RisingEdge, FallingEdge
from cocotb.utils import get_sim_time

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.verification.te.test_engine import _config, _machine, _randomise, _check, DDR_BYTES
from tensorsoc.verification.te.bfm import TEBench

BUS_BYTES = 4    # the SoC bus: 32-bit Wishbone


def _contig(space, dtype, base, n):
    es = isa.element_bytes(isa.space(space), isa.dtype(dtype))
    return isa.Side(space=isa.space(space), dtype=isa.dtype(dtype), base=base, check_mask=1,
                    levels=[isa.Level(count=n, step=es, bound=n)])


def pairs(config, n):
    """(src, src base, dst, dst base, label) of the bench's transfers of ``n``
    elements: DDR, scratch-pad and PCORE memories in both directions, and
    PCORE to PCORE within one PCORE and from PCORE 0 to PCORE 1."""
    out = [(s, 0, d, 0 if d != "DDR" else DDR_BYTES // 2, "") for s, d in (
        ("DDR", "SCRATCH"), ("SCRATCH", "DDR"), ("DDR", "PCORE_PRIVATE"), ("PCORE_PRIVATE", "DDR"),
        ("SCRATCH", "PCORE_PRIVATE"), ("PCORE_PRIVATE", "SCRATCH"),
        ("PCORE_PRIVATE", "PCORE_SHARED"), ("PCORE_SHARED", "PCORE_PRIVATE"))]
    per_pcore = config.nt * config.pcore_private_words        # private elements of one PCORE
    if 2 * n <= per_pcore:
        out.append(("PCORE_PRIVATE", 0, "PCORE_PRIVATE", n, " (same PCORE)"))
    if config.np > 1 and n <= per_pcore:
        out.append(("PCORE_PRIVATE", 0, "PCORE_PRIVATE", per_pcore, " (other PCORE)"))
    if config.np > 1 and n <= config.pcore_shared_words:
        out.append(("PCORE_SHARED", 0, "PCORE_SHARED", config.pcore_shared_words, " (other PCORE)"))
    return out


def kinds(config):
    n = min(2048, config.np * config.nt * config.pcore_private_words // 2, config.scratch_size // 4)
    out = []
    for dt in ("INT16", "UINT8"):
        for src, sbase, dst, dbase, label in pairs(config, n):
            t = isa.Transfer(dst=_contig(dst, dt, dbase, n), src=_contig(src, dt, sbase, n))
            es = isa.element_bytes(isa.space("DDR"), isa.dtype(dt))
            if "DDR" in (src, dst):
                peak = BUS_BYTES / es
                target = 0.8
            else:
                peak = config.vw
                target = 0.9
            out.append({"kind": f"{dst} <= {src} {dt}{label}", "elements": n, "transfer": t, "peak": peak,
                        "target": target})
        # PCORE(NP)[*].var <= ...: every word to all PCOREs in one write
        if config.np > 1 and n <= config.pcore_shared_words:
            for src in ("SCRATCH", "DDR"):
                dst = _contig("PCORE_SHARED", dt, 0, n)
                dst.levels.append(isa.Level(count=config.np, step=config.pcore_shared_words, bound=config.np))
                dst.check_mask, dst.bcast_mask = 0b11, 0b10
                t = isa.Transfer(dst=dst, src=_contig(src, dt, 0, n))
                es = isa.element_bytes(isa.space("DDR"), isa.dtype(dt))
                peak, target = (BUS_BYTES / es, 0.8) if src == "DDR" else (config.vw, 0.9)
                out.append({"kind": f"PCORE_SHARED <= {src} {dt} (broadcast to {config.np} PCOREs)", "elements": n,
                            "transfer": t, "peak": peak, "target": target})
    return out


@cocotb.test()
async def bench(dut):
    config = _config()
    tb = TEBench(dut, config, DDR_BYTES)
    await tb.start()
    machine = _machine(config)
    import random
    _randomise(machine, random.Random(3))
    tb.load(machine)
    rows = []
    for k in kinds(config):
        t = k.pop("transfer")
        machine.run([t])
        times = []

        async def timer():
            await RisingEdge(dut.xfer_active)
            t0 = get_sim_time("ns")
            await RisingEdge(dut.sys_clk)
            k["path"] = "vector" if int(dut.xfer_vector.value) else "element"
            await FallingEdge(dut.xfer_active)
            times.append(int((get_sim_time("ns") - t0) // 10))
        task = cocotb.start_soon(timer())
        await tb.run(isa.encode(t))
        await task
        await _check(tb, machine, k["kind"])
        k["clocks"] = times[0]
        k["per_clock"] = k["elements"] / times[0]
        k["of_peak"] = k["per_clock"] / k["peak"]
        rows.append(k)
        dut._log.info(f"{k['kind']}: {k['per_clock']:.2f} elements/clock ({100 * k['of_peak']:.0f}% of {k['peak']:g})")
    path = os.environ.get("TSOC_TE_BENCH_JSON")
    if path:
        with open(path, "w") as f:
            json.dump({"config": {n: getattr(config, n) for n in ("np", "nt", "vw")}, "rows": rows}, f, indent=1)
