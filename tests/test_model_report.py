"""No silent fallback, and the roofline per layer (issue 15), without a
simulation: where `tsoc model check / compile` say each layer runs and
--require-accel; the firmware's per-layer console lines as `tsoc sim` parses
them; the roofline arithmetic (sw/model/roofline.py) and the `tsoc sim` /
`tsoc bench layers` tables built on it."""

import re
from pathlib import Path

import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.sw.model import accel, roofline
from tensorsoc.sw.model.compiler import compile_model, compile_report
from tensorsoc.sw.model.frontend import load_model
from tensorsoc.sw.model.yamlsrc import ModelError

ROOT = Path(__file__).resolve().parents[1]
CNN = ROOT / "examples" / "cnn_instructions.yaml"
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "examples" / "bench").glob("*.yaml"))


def tsoc(monkeypatch, *argv):
    import tensorsoc.cli as cli
    if "tensorsoc.commands.model" not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + ["tensorsoc.commands.model"])
    return cli.main([str(a) for a in argv])


def lin_in_software(monkeypatch, reason="weights too large for the test"):
    """plan() leaves every TENS_LIN in software with ``reason``."""
    real = accel.plan

    def plan(model, *a, **kw):
        progs = real(model, *a, **kw)
        compute = [op for op in model.ops if op.kind != "stream"]
        for (index, _), op in zip(sorted(progs.items()), compute):
            if op.kind == "lin":
                progs[index] = reason
        return progs
    monkeypatch.setattr(accel, "plan", plan)


# -- tsoc model check / compile: where each layer runs -------------------------------------

def test_check_lists_every_layer_on_the_accelerator(monkeypatch, capsys):
    assert tsoc(monkeypatch, "model", "check", CNN, "--require-accel") == 0
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if re.match(r"\s+L\d", l) and "bound" in l]
    assert len(rows) == 3 and all("accelerator" in r and "pass(es)" in r for r in rows), out
    assert "convolution.pcore" in rows[0] and "maxpool.pcore" in rows[1] and "pass(es)" in rows[2]
    assert "3 of 3 layer(s) on the accelerator" in out and "SOFTWARE" not in out


def test_a_layer_left_in_software_is_named_with_its_rule(monkeypatch, tmp_path, capsys):
    lin_in_software(monkeypatch)
    for cmd in (("check",), ("compile", "-o", tmp_path / "m.bin")):
        assert tsoc(monkeypatch, "model", *cmd, CNN) == 0
        out = capsys.readouterr().out
        row = next(l for l in out.splitlines() if "TENS_LIN" in l and "bound" in l)
        assert "SOFTWARE" in row and "weights too large for the test" in row, out
        assert "2 of 3 layer(s) on the accelerator; 1 on the MCORE software path" in out
    # --require-accel: an error naming the layer, the op (sequence, index, type, line) and the rule.
    for cmd in (("check",), ("compile", "-o", tmp_path / "m2.bin")):
        assert tsoc(monkeypatch, "model", *cmd, CNN, "--require-accel") == 1
        captured = capsys.readouterr()
        err = captured.err
        assert re.search(rf"{re.escape(str(CNN))}:\d+: sequence 'inference', op 4 \(TENS_LIN\): layer 2 would run "
                         r"on the MCORE software path: weights too large for the test", err), err
        assert "1 of 3 layer(s) in software" in err and "Traceback" not in err
    assert not (tmp_path / "m2.bin").exists()


def test_require_accel_through_a_configuration_override(monkeypatch, capsys):
    """PCORE private memories of one vector (the smallest the configuration
    takes): no tiling fits a kernel row, a window row or a linear block, the
    planner's own rules keep every layer in software."""
    tiny = ("--set", "pcore_private_words=8")
    assert tsoc(monkeypatch, "model", "check", CNN, *tiny) == 0
    out = capsys.readouterr().out
    soft = [l for l in out.splitlines() if "SOFTWARE" in l]
    assert [t in l for l, t in zip(soft, ("TENS_CONV", "TENS_MAXPOOL", "TENS_LIN"))] == [True] * 3, out
    assert all("private" in l for l in soft)
    assert "0 of 3 layer(s) on the accelerator; 3 on the MCORE software path" in out
    assert tsoc(monkeypatch, "model", "check", CNN, *tiny, "--require-accel") == 1
    err = capsys.readouterr().err
    assert "op 2 (TENS_CONV): layer 0 would run on the MCORE software path" in err
    assert "also layer 1 (sequence 'inference', op 3 (TENS_MAXPOOL)" in err and "also layer 2" in err
    assert "3 of 3 layer(s) in software" in err


def test_dropped_accelerator_section_is_loud_and_an_error_when_required(monkeypatch, capsys):
    # 12 KiB holds relu_cnn3's image without its accelerator section, not with it.
    path = ROOT / "examples" / "relu_cnn3.yaml"
    assert tsoc(monkeypatch, "model", "check", path, "--set", "model_window_size=12288") == 0
    cap = capsys.readouterr()
    assert f"WARNING: {path}: the accelerator section would make the image" in cap.err
    assert "WARNING:" in cap.out and "0 of 3 layer(s) on the accelerator" in cap.out
    assert cap.out.count("does not fit the model window") == 3
    assert tsoc(monkeypatch, "model", "check", path, "--set", "model_window_size=12288", "--require-accel") == 1
    err = capsys.readouterr().err
    assert "the accelerator section does not fit the model window" in err and "3 of 3 layer(s)" in err


def test_configuration_without_accelerator(monkeypatch, capsys):
    assert tsoc(monkeypatch, "model", "check", CNN, "--set", "accelerator=0") == 0
    assert capsys.readouterr().out.count("no accelerator (accelerator=0)") == 3
    assert tsoc(monkeypatch, "model", "check", CNN, "--set", "accelerator=0", "--require-accel") == 1


def test_compile_report_api():
    model = load_model(CNN, SoCConfig())
    image, rep = compile_report(model, require_accel=True)
    assert image == compile_model(model)
    assert [p.engine for p in rep.layers] == ["accel"] * 3 and rep.dropped is None
    assert [p.layer for p in rep.layers] == [0, 1, 2] and rep.accelerated == 3
    _, plain = compile_report(model, accel=False)
    assert all(p.engine == "software" and "without the accelerator section" in p.reason for p in plain.layers)
    with pytest.raises(ModelError, match="without the accelerator section"):
        compile_report(model, accel=False, require_accel=True)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_shipped_examples_compile_with_every_layer_accelerated(path):
    """What `make sim` and the SoC tests run must pass --require-accel."""
    compile_model(load_model(path, SoCConfig()), require_accel=True)


# -- the firmware's per-layer lines, as tsoc sim reads them --------------------------------

def _c_strings(text):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', text)


def test_firmware_layer_lines_parse():
    """The printf formats of sw/firmware/server.c, filled in, are what
    model_job.LAYER_LINE reads; so is every reason text of accel.c."""
    from tensorsoc.verification.soc.model_job import LAYER_LINE, device_layers, software_lines
    server = (ROOT / "sw" / "firmware" / "server.c").read_text()
    fmts = [f for f in _c_strings(server) if f.startswith("server: layer ")]
    assert len(fmts) == 2, fmts
    accel_c = (ROOT / "sw" / "firmware" / "accel.c").read_text()
    table = accel_c[accel_c.index("why_text[ACCEL_N_WHY]"):]
    reasons = _c_strings(table[:table.index("};")])[1:]
    assert "image compiled for another PCORE geometry (NP, NT, VW)" in reasons

    def fill(fmt, why):
        vals = iter(["2", "4", "LIN", "64400", why])
        return re.sub(r"%(lu|u|s)", lambda m: next(vals), fmt).replace("\\n", "")
    on = next(f for f in fmts if "on the accelerator" in f)
    soft = next(f for f in fmts if "in software" in f)
    lines = ["server: ready", fill(on, None)] + [fill(soft, r) for r in reasons]
    for line, r in zip(lines[2:], reasons):
        m = LAYER_LINE.search(line)
        assert m and m.group(6) == r, line
    got = device_layers(lines[:3])
    assert got == {2: {"engine": "software", "cycles": 64400, "op": 4, "opcode": "LIN", "reason": reasons[0]}}
    assert device_layers(lines[:2])[2]["engine"] == "accel"
    assert len(software_lines(lines)) == len(reasons)


def _result(engines):
    """A `tsoc sim` result as model_job.run_model builds it, for the default model."""
    from tensorsoc.verification.soc.model_job import _row
    model = load_model(CNN, SoCConfig())
    _, rep = compile_report(model)
    progs = {p.layer: p.program for p in rep.layers}
    layers = []
    for op, engine in zip([o for o in model.ops if o.kind != "stream"], engines):
        where = {"engine": engine, "cycles": 10_000, "reason": None if engine == "accel" else "no program"}
        layers.append(dict(_row(op, 100, 100e6, 32, where, progs[op.layer], model.config),
                           software_cycles=50_000, speedup=5.0))
    return model, {"layers": layers, "output_bytes": 16, "bit_exact": True, "mismatched_bytes": 0,
                   "float_error": [], "path": "accelerated", "software": {"mismatched_bytes": 0, "cycles": 150_000,
                                                                    "inference_cycles": 160_000},
                   "speedup": 5.0, "layers_on_accelerator": engines.count("accel"), "inference_cycles": 40_000,
                   "layers_in_software": [i for i, e in enumerate(engines) if e != "accel"]}


def test_sim_report_per_layer_engine_and_roofline():
    from tensorsoc.verification.soc.model_job import print_result
    model, res = _result(["accel", "software", "accel"])
    out = []
    print_result(res, out.append, model.config)
    text = "\n".join(out)
    assert "ran on" in out[0]
    assert "accelerator" in out[1] and "SOFTWARE" in out[2]
    assert "layer 1 (TENS_MAXPOOL) ran in SOFTWARE on the MCORE: no program" in text
    assert "2 of 3 layer(s) ran on the accelerator" in text and "in software: layer(s) [1]" in text
    assert "whole inference (the server's cycle count" in text and "40000 cycles, 160000 on the software path: 4.0x" in text
    assert "MAC bound = useful MACs / 32 (NP 4 x VW 8" in text and "4 (bytes per clock" in text
    conv = next(l for l in out if l.startswith("[model] 0 ") and "MAC " in l)
    assert re.search(r"73728 .* 2304 +1368 +MAC +10000 +23\.0%", conv), conv
    assert res["layers"][0]["engine"] == "accel" and res["layers"][1]["software_reason"] == "no program"
    r = res["layers"][2]["roofline"]
    assert (r["bound"], r["macs"], r["min_ddr_bytes"]) == ("DDR", 2048, 4672)


def test_sim_require_accel_fails_on_a_software_layer():
    """`tsoc sim --require-accel`'s device check (sim_main.py)."""
    from tensorsoc.verification.soc.model_job import require_accel_failures
    assert require_accel_failures(_result(["accel"] * 3)[1]) == []
    got = require_accel_failures(_result(["accel", "software", "accel"])[1])
    assert got == ["layer 1 (TENS_MAXPOOL): no program"]
    res = _result(["accel"] * 3)[1]
    res["layers"][0]["engine"] = None                   # not known (no per-layer console line): fails too
    assert len(require_accel_failures(res)) == 1
    assert "require_accel_failures(result)" in (ROOT / "verification" / "soc" / "sim_main.py").read_text()


# -- roofline arithmetic -----------------------------------------------------------------------

def test_roofline_bounds_of_the_default_model():
    cfg = SoCConfig()
    model = load_model(CNN, cfg)
    conv, pool, lin = [op for op in model.ops if op.kind != "stream"]
    # conv 8x8x8 -> 8x8x16, 3x3 pad 1: int16 weights 3*3*8*16, input 8*8*8, bias 16, batch norm 16*2,
    # output 8*8*16.
    r = roofline.layer(conv, cfg, cycles=4608)
    assert r.macs == 8 * 8 * 16 * 3 * 3 * 8 == 73728
    assert r.min_ddr_bytes == 2 * (1152 + 512 + 16 + 32 + 1024)
    assert (r.mac_cycles, r.ddr_cycles) == (73728 // 32, r.min_ddr_bytes // 4)
    assert r.bound == "MAC" and r.bound_cycles == 2304 and r.of_bound == 0.5 and r.of_peak == 0.5
    # maxpool: no MACs, DDR bound (input once + output once).
    p = roofline.layer(pool, cfg, cycles=1280)
    assert p.macs == 0 and p.min_ddr_bytes == 2 * (8 * 8 * 16 + 4 * 4 * 16) and p.bound == "DDR"
    assert p.of_bound == 640 / 1280 and p.of_peak == 0
    # linear 256 -> 8 with bias and batch norm, one column: weights dominate, DDR bound.
    l_ = roofline.layer(lin, cfg)
    assert l_.macs == 2048 and l_.min_ddr_bytes == 2 * (8 * 256 + 256 + 8 + 8 * 2 + 8)
    assert l_.bound == "DDR" and l_.bound_cycles == l_.min_ddr_bytes // 4 and l_.of_bound is None


def test_roofline_definitions():
    r = roofline.Roofline(macs=33, padded_macs=64, min_ddr_bytes=10, ddr_bytes=40, peak=32, bus_bytes=4, cycles=4)
    assert (r.mac_cycles, r.ddr_cycles) == (2, 3)            # both round up
    assert r.bound == "DDR" and r.bound_cycles == 3 and r.of_bound == 0.75
    assert r.lane_use == 33 / 64
    tie = roofline.Roofline(macs=64, padded_macs=None, min_ddr_bytes=8, ddr_bytes=None, peak=32, bus_bytes=4)
    assert tie.bound == "MAC" and tie.of_bound is None and tie.lane_use is None
    assert roofline.Roofline.from_dict(r.as_dict()) == r
    row = roofline.row(tie)
    assert len(row) == len(roofline.header()) and row.count(" - ") >= 2
    # The program's figures, when the LayerProgram has them.
    prog = type("P", (), {"padded_macs": 96, "ddr_bytes": 1234})()
    model = load_model(CNN, SoCConfig())
    lin = [op for op in model.ops if op.kind == "lin"][0]
    got = roofline.layer(lin, SoCConfig(), cycles=100, program=prog)
    assert (got.padded_macs, got.ddr_bytes) == (96, 1234)
    assert roofline.layer(lin, SoCConfig(), program="a reason").padded_macs is None


def test_bus_width_is_the_tensor_engines():
    """BUS_BYTES_PER_CLOCK is the width of the TensorEngine's main-RAM masters."""
    for f in ("engine.py", "vector.py"):
        src = (ROOT / "cores" / "tensor_engine" / f).read_text()
        widths = set(re.findall(r"(?:self|m)\.bus = (?:bus = )?wishbone\.Interface\(data_width=(\d+)", src))
        assert widths == {str(8 * roofline.BUS_BYTES_PER_CLOCK)}, (f, widths)


def test_bench_layers_table():
    from tensorsoc.verification.te.cli import format_layers, software_layers
    cfg = SoCConfig()
    model = load_model(CNN, cfg)
    conv, pool, _ = [op for op in model.ops if op.kind != "stream"]
    rows = [{"layer": 0, "kind": "conv", "macs": 73728, "clocks": 4608, "macs_per_clock": 16.0, "of_peak": 0.5,
             "passes": 2, "transfers": 10, "vector_transfers": 10, "bit_exact": True, "errors": 0,
             "roofline": roofline.layer(conv, cfg, cycles=4608).as_dict()},
            {"layer": 1, "kind": "maxpool", "software": "too big", "roofline": roofline.layer(pool, cfg).as_dict()}]
    rep = {"np": 4, "nt": 8, "vw": 8, "peak": 32, "models": [{"model": "examples/cnn_instructions.yaml",
                                                                "layers": rows}]}
    text = format_layers(rep)
    assert "SOFTWARE (no accelerator program): too big" in text
    assert "MAC bound = useful MACs / 32" in text
    conv_row = [l for l in text.splitlines() if l.startswith("cnn_instructions.yaml") and " MAC " in l]
    assert conv_row and "50.0%" in conv_row[0]
    assert software_layers(rep) == [("examples/cnn_instructions.yaml", 1, "maxpool", "too big")]


def test_tsoc_sim_require_accel_fails_before_building(monkeypatch, tmp_path, capsys):
    """`tsoc sim --require-accel` refuses a model the compiler leaves in
    software before building anything; without it the run warns and goes on."""
    import tensorsoc.verification.soc.runner as runner
    builds = []

    def no_build(*a, **kw):
        builds.append(a)
        raise RuntimeError("not building in this test")
    monkeypatch.setattr(runner, "cocotb_build", no_build)
    args = ["sim", "--model", CNN, "--set", "pcore_private_words=8", "--build-dir", tmp_path / "sim"]
    assert tsoc(monkeypatch, *args, "--require-accel") == 1
    err = capsys.readouterr().err
    assert "layer 0 would run on the MCORE software path" in err and "--require-accel" in err
    assert not builds
    assert tsoc(monkeypatch, *args) == 1            # the (stubbed) build fails, after the warnings
    out = capsys.readouterr().out
    assert len(builds) == 1
    assert out.count("[sim] WARNING: layer") == 3 and "compiled for the MCORE software path" in out
    assert out.index("[sim] WARNING") < out.index("[sim] building")
    assert tsoc(monkeypatch, "sim", "--require-accel", "--build-dir", tmp_path / "sim") == 1
    assert "--require-accel needs --model" in capsys.readouterr().err
