"""`tsoc host` against the behavioural device model (the spidev transport is
replaced by the model's)."""

import argparse
import io

import pytest

from tensorsoc.spec.errors import UserError
from tensorsoc.commands import host as cli
from tensorsoc.spec.host_protocol import DEVICE_ID
from tensorsoc.verification.host.device_model import DeviceModel, ModelTransport, ReferenceFirmware


@pytest.fixture
def model(monkeypatch):
    model = DeviceModel(ReferenceFirmware(input_bytes=8, output_bytes=8, layers=2))
    monkeypatch.setattr(cli, "open_transport", lambda args: ModelTransport(model))
    return model


def tsoc(*argv):
    parser = argparse.ArgumentParser()
    cli.register({"top": parser.add_subparsers()})
    args = parser.parse_args(["host", "--spidev", "/dev/spidev0.0", *argv])
    out = io.StringIO()
    assert args.func(args, out) == 0
    return out.getvalue()


def test_status_id_spec(model):
    assert tsoc("status") == "status 0x00000000 [idle]\n"
    assert tsoc("id") == f"id 0x{DEVICE_ID:08x}\n"
    assert "hw_type       84\n" in tsoc("spec")


def test_full_flow(model, tmp_path):
    (tmp_path / "m.bin").write_bytes(bytes(range(40)))
    (tmp_path / "t.bin").write_bytes(bytes(8))
    tsoc("write-model", str(tmp_path / "m.bin"))
    tsoc("write-tensor", str(tmp_path / "t.bin"))
    tsoc("infer")
    assert tsoc("read-tensor", "8") == "00000000  00 01 02 03 04 05 06 07\n"
    tsoc("read-tensor", "8", "-o", str(tmp_path / "o.bin"))
    assert (tmp_path / "o.bin").read_bytes() == bytes(range(8))
    assert tsoc("timings", "2") == "layer   0         10 us\nlayer   1         20 us\n"


def test_user_errors(model, tmp_path):
    with pytest.raises(UserError, match="No such file"):
        tsoc("write-model", str(tmp_path / "missing.bin"))
    (tmp_path / "odd.bin").write_bytes(bytes(6))
    with pytest.raises(UserError, match="multiple of 4"):
        tsoc("write-tensor", str(tmp_path / "odd.bin"))
    with pytest.raises(UserError, match="INFERENCE failed: NO_MODEL"):
        tsoc("infer")


def test_missing_spidev_node_is_a_user_error():
    parser = argparse.ArgumentParser()
    cli.register({"top": parser.add_subparsers()})
    args = parser.parse_args(["host", "--spidev", "/nonexistent/spidev9.9", "status"])
    with pytest.raises(UserError, match="cannot open /nonexistent/spidev9.9"):
        args.func(args)
