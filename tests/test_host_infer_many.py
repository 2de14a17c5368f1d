"""Load once, infer many: Device.infer_many and `tsoc host infer-many`
against the behavioural device model, whose firmware runs the golden model
of the digits example on the tensor it receives."""

import argparse
import io
import json
from pathlib import Path

import numpy as np
import pytest

from tensorsoc.commands import host as cli
from tensorsoc.sw.host.device import SyncDevice
from tensorsoc.spec.host_protocol import Cmd, Window
from tensorsoc.sw.model import dataset as D
from tensorsoc.verification.golden import dataset as GD
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.verification.golden.cnn import run
from tensorsoc.verification.host.device_model import DeviceModel, ModelInfo, ModelTransport, ReferenceFirmware

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits"


@pytest.fixture(scope="module")
def digits():
    return load_model(DIGITS / "digits_cnn.yaml")


class GoldenFirmware(ReferenceFirmware):
    """The protocol's reference firmware with the golden model as its
    inference: the WTensor bytes in, the RTensor bytes out."""

    def __init__(self, model):
        self.loads = 0

        def load(image):
            self.loads += 1
            return ModelInfo(model.input_bytes, model.output_bytes, model.n_layers)

        def infer(image, tensor, info):
            t = model.io.tensor
            host = np.frombuffer(tensor[:t.host_elements(model.io.input.h2c_padding) * 2], "<i2").astype(np.int64)
            t.raw = L.host_to_device(host, t.dims, t.layout, model.io.input.h2c_padding)
            t.real = t.raw / float(1 << model.frac_bits)
            return L.host_output(model, run(model).fixed), [1] * model.n_layers
        super().__init__(load_model=load, infer=infer)


def device(model):
    fw = GoldenFirmware(load_model(model.file))
    dev = DeviceModel(fw, window_sizes={Window.MODEL: 1 << 16, Window.TENSOR: 1 << 12, Window.SERVER: 1 << 12})
    return fw, ModelTransport(dev)


def test_infer_many_loads_once(digits):
    fw, transport = device(digits)
    x = np.load(DIGITS / "test_x.npy")[:5]
    xs = D.samples(digits, x)
    inputs = [D.host_input(digits, np.floor(s * (1 << digits.frac_bits) + 0.5).astype(np.int64)) for s in xs]
    with SyncDevice(transport, timeout=1.0) as dev:
        results = dev.infer_many(b"\x01" * 300, inputs, digits.output_bytes, digits.n_layers)
    assert fw.loads == 1 and len(results) == 5
    assert sum(f.frame.cmd == Cmd.WTENSOR for f in transport.frames) == 5
    gold = GD.golden(digits, x)
    for (out, us), pred in zip(results, gold["predictions"]):
        assert int(np.argmax(D.host_values(digits, out))) == pred and us == [1] * digits.n_layers


def test_tsoc_host_infer_many(digits, monkeypatch, tmp_path):
    fw, transport = device(digits)
    monkeypatch.setattr(cli, "open_transport", lambda args: transport)
    parser = argparse.ArgumentParser()
    cli.register({"top": parser.add_subparsers()})
    args = parser.parse_args(["host", "--spidev", "/dev/spidev0.0", "infer-many", "--model",
                              str(DIGITS / "digits_cnn.yaml"), "--input", str(DIGITS / "test_x.npy"), "--labels",
                              str(DIGITS / "test_y.npy"), "--count", "6", "--json", str(tmp_path / "r.json")])
    out = io.StringIO()
    assert args.func(args, out) == 0
    text = out.getvalue()
    y = np.load(DIGITS / "test_y.npy")[:6]
    gold = GD.golden(digits, np.load(DIGITS / "test_x.npy")[:6], y)
    assert fw.loads == 1 and text.count("prediction") == 6
    assert f"accuracy {100 * gold['accuracy']:.2f}% on 6 image(s) (one WModel)" in text
    r = json.loads((tmp_path / "r.json").read_text())
    assert [i["prediction"] for i in r["images_detail"]] == gold["predictions"].tolist()
