"""Data sets through the SoC's host port: each model of TSOC_DATASETS (a
JSON list of {"model", "input", "labels", "count"}) is loaded once (one
WModel) and every sample runs through WTensor, Inference, RTensor and
RTimings (verification/soc/model_job.py, run_dataset: the host library's
Device.infer_many); every output must equal the golden model's bit for
bit, every layer must run on the accelerator, and the SoC's accuracy must
equal the golden model's.  Run by tests/test_model_onnx_soc.py."""

import json
import os

import cocotb

from tensorsoc.sw.model.dataset import load_array
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.soc.host_env import boot, soc_config
from tensorsoc.verification.soc.model_job import print_dataset, run_dataset


@cocotb.test()
async def datasets_bit_exact(dut):
    cfg = soc_config()
    dev, console, _ = await boot(dut)
    for job in json.loads(os.environ["TSOC_DATASETS"]):
        model = load_model(job["model"], cfg)
        x = load_array(job["input"], "input")[:job.get("count") or None]
        y = load_array(job["labels"], "labels", "biu")[:len(x)] if job.get("labels") else None
        result = await run_dataset(dev, model, x, y, cfg.sys_clk_freq, cfg.peak_macs_per_clock, console=console,
                                   require_accel=True)
        print_dataset(result, cocotb.log.info)
        ds = result["dataset"]
        assert ds["model_loads"] == 1 and ds["images"] == len(x)
        assert result["bit_exact"] and ds["bit_exact_images"] == len(x), \
            f"{job['model']}: images {result['mismatched_images']} differ from the golden model"
        assert result["layers_on_accelerator"] == model.n_layers and not result["layers_in_software"], result
        assert ds["soc_equals_golden"] == len(x)
        if y is not None:
            assert ds["accuracy"] == ds["golden_accuracy"], ds
        with open(job["json"], "w") as f:
            json.dump({k: v for k, v in result.items() if k != "layers"}, f, indent=1, default=str)
