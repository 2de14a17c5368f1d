"""`make sim`'s main job: boot the SoC, then talk to it only through its
SPI/QPI host port with the host library, as a host processor would.

Prints the console, RID and the decoded RSpec, and the simulation figures.
Run by tensorsoc/commands/soc.py (`tsoc sim`) through cocotb's runner; options come in
environment variables (TSOC_SIM_QPI, TSOC_SIM_BOOT_FLAGS, TSOC_SIM_MODEL,
TSOC_SIM_JSON, TSOC_SIM_REQUIRE_ACCEL, TSOC_SIM_SOFTWARE, TSOC_HOST_PATH; a data set:
TSOC_SIM_INPUT, TSOC_SIM_LABELS, TSOC_SIM_COUNT)."""

import os
import time

import cocotb
from cocotb.utils import get_sim_time

from tensorsoc.spec.host_protocol import DEVICE_ID, RSPEC_LAYOUT
from tensorsoc.verification.soc.host_env import boot, soc_config
from tensorsoc.verification.host.device_model import expected_rspec
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.soc.model_job import print_result, run_model
from tensorsoc.verification.soc.model_job import require_accel_failures
from tensorsoc.sw.model.dataset import load_array
from tensorsoc.verification.soc.model_job import print_dataset, run_dataset


# While the device is busy (the inference, the server's check of a model
# image) the host polls RERROR every 10 us, as a host processor would,
# rather than back to back: each poll is a Python step, and a busy wait of
# 1.4M cycles would otherwise be ~10,000 of them.  The first poll after a
# command is immediate, so a command that completes at once costs nothing.
POLL_INTERVAL_S = 10e-6


def say(text=""):
    print(text, flush=True)


@cocotb.test()
async def main(dut):
    qpi = os.environ.get("TSOC_SIM_QPI", "0") == "1"
    flags = int(os.environ.get("TSOC_SIM_BOOT_FLAGS", "0"), 0)
    wall0 = time.monotonic()
    cfg = soc_config()
    dev, console, _ = await boot(dut, qpi=qpi, flags=flags, echo=True)
    dev.poll_interval = POLL_INTERVAL_S
    mode = "QPI" if qpi else "SPI"
    path = "fast" if hasattr(dev.transport, "set_sys_period") else "pins"
    say(f"[host] {mode} at {1e6 / dev.transport.period_ps:.0f} MHz SCLK (SoC clock {cfg.sys_clk_freq / 1e6:.0f} MHz), "
        f"{path} host path, status polled every {POLL_INTERVAL_S * 1e6:g} us while busy")
    rid = await dev.id()
    say(f"[host] RID   = 0x{rid:08x} ({'tensorsoc' if rid == DEVICE_ID else 'UNEXPECTED'})")
    spec = await dev.spec()
    say("[host] RSpec =")
    labels = {"hw_type": "hardware type", "tiles": "tiles (PCOREs)", "internal_kib": "KiB internal per tile",
              "flash_kib": "KiB flash per tile", "external_kib": "KiB external per tile",
              "input_bytes": "input tensor (bytes)", "output_bytes": "output tensor (bytes)"}
    for _, size, name in RSPEC_LAYOUT:
        value = spec[name]
        extra = f" ('{chr(value)}': tensorsoc)" if name == "hw_type" and 32 <= value < 127 else ""
        say(f"         {labels[name]:<24} {value}{extra}")
    status = await dev.status()
    say(f"[host] status = {status}")
    result = None
    model_file = os.environ.get("TSOC_SIM_MODEL")
    require_accel = os.environ.get("TSOC_SIM_REQUIRE_ACCEL", "0") == "1"
    if model_file:
        model = load_model(model_file, cfg)
        say(f"[model] {model_file}: {model.n_layers} layers, input {model.input_bytes} B, "
            f"output {model.output_bytes} B")
        software = os.environ.get("TSOC_SIM_SOFTWARE", "1") == "1"
        if os.environ.get("TSOC_SIM_INPUT"):
            x = load_array(os.environ["TSOC_SIM_INPUT"], "--input")
            y = load_array(os.environ["TSOC_SIM_LABELS"], "--labels", "biu") if os.environ.get("TSOC_SIM_LABELS") \
                else None
            count = int(os.environ.get("TSOC_SIM_COUNT", "0"))
            if count:
                x, y = x[:count], (y[:count] if y is not None else None)
            say(f"[data] {os.environ['TSOC_SIM_INPUT']}: {len(x)} image(s); one WModel, then WTensor, Inference, "
                "RTensor, RTimings per image (the accelerated image only: no software-path baseline)")
            result = await run_dataset(dev, model, x, y, cfg.sys_clk_freq, cfg.peak_macs_per_clock, console=console,
                                       require_accel=require_accel, say=say)
            print_result(result, say, cfg)
            print_dataset(result, say)
        else:
            if not software:
                say("[model] --no-baseline: the accelerated image only (no software-path baseline)")
            result = await run_model(dev, model, cfg.sys_clk_freq, cfg.peak_macs_per_clock, console=console,
                                     require_accel=require_accel, software=software)
            print_result(result, say, cfg)
    cycles = round(get_sim_time(unit="ns") * cfg.sys_clk_freq / 1e9)
    wall = time.monotonic() - wall0
    say(f"[sim] {cycles} cycles ({cycles / cfg.sys_clk_freq * 1e3:.3f} ms at {cfg.sys_clk_freq / 1e6:.0f} MHz) "
        f"in {wall:.2f} s wall: {cycles / wall / 1e6:.3f} MHz simulated")
    if os.environ.get("TSOC_SIM_JSON"):
        import json
        from pathlib import Path
        Path(os.environ["TSOC_SIM_JSON"]).write_text(json.dumps(
            {"model": model_file, "cycles": cycles, "rid": rid, "spec": spec, **(result or {})}, indent=1) + "\n")
        say(f"[sim] results: {os.environ['TSOC_SIM_JSON']}")
    memtest_ok = flags & 1 or any(l.startswith("memtest: PASS") for l in console.lines)
    assert rid == DEVICE_ID, f"RID 0x{rid:08x}"
    rspec = expected_rspec(cfg)
    assert {k: spec[k] for k in rspec} == rspec, spec
    assert memtest_ok, "the boot memory test did not pass"
    assert result is None or result["bit_exact"], (
        "the model's outputs differ from the golden model"
        + (f" (images {result['mismatched_images']})" if result.get("mismatched_images") else ""))
    if require_accel and result is not None:
        soft = require_accel_failures(result)
        assert not soft, "--require-accel: layer(s) ran in software on the device: " + "; ".join(soft)
