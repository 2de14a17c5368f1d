"""Imported ONNX models on the simulated SoC, bit-exact: the shipped digits
CNN on 20 held-out images and the LeNet-class CNN and tanh MLP of
tests/onnx_graphs.py, each loaded once and run image after image through
the host port (verification/soc/test_datasets.py), in one simulation."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnx_graphs as G
from tensorsoc import onnx_import as OI

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits"
DIGITS_IMAGES = 20


def test_imported_models_bit_exact_on_the_soc(soc_build, tmp_path):
    from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test
    rng = np.random.default_rng(7)
    jobs = [{"model": str(DIGITS / "digits_cnn.yaml"), "input": str(DIGITS / "test_x.npy"),
             "labels": str(DIGITS / "test_y.npy"), "count": DIGITS_IMAGES}]
    for name, graph, samples in (("lenet", G.lenet(), rng.uniform(0, 1, (8, 1, 16, 16))),
                                 ("mlp_tanh", G.mlp_tanh(), rng.normal(0, 1, (8, 20)))):
        onnx.save(graph, str(tmp_path / f"{name}.onnx"))
        np.save(tmp_path / f"{name}_x.npy", samples)
        OI.import_onnx(tmp_path / f"{name}.onnx", tmp_path / f"{name}.yaml", soc_build.config, calibrate=samples)
        jobs.append({"model": str(tmp_path / f"{name}.yaml"), "input": str(tmp_path / f"{name}_x.npy"), "count": 3})
    for j in jobs:
        j["json"] = str(tmp_path / (Path(j["model"]).stem + "_result.json"))
    runner = cocotb_build(soc_build)
    results = Path(cocotb_test(runner, soc_build, "tensorsoc.verification.soc.test_datasets",
                               soc_build.build_dir / "datasets.xml",
                               extra_env={"TSOC_DATASETS": json.dumps(jobs), "TSOC_HOST_PATH": "fast"}))
    cases = ET.parse(results).getroot().findall(".//testcase")
    assert cases and not [c for c in cases if c.find("failure") is not None or c.find("error") is not None], \
        f"see {results}"
    digits = json.loads(Path(jobs[0]["json"]).read_text())["dataset"]
    assert digits["images"] == DIGITS_IMAGES and digits["bit_exact_images"] == DIGITS_IMAGES
    assert digits["accuracy"] == digits["golden_accuracy"]
    for j in jobs[1:]:
        assert json.loads(Path(j["json"]).read_text())["dataset"]["bit_exact_images"] == 3
