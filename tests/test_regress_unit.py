"""The regression's building blocks without a simulator: the YAML generator,
the test plan, the scoreboard's device/firmware model, coverage and reports."""

import json
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from tensorsoc.spec.config import SoCConfig
from tensorsoc.spec.host_protocol import CHUNK_SIZE, Cmd, ErrorCause, Status
from tensorsoc.verification.host.device_model import DeviceModel
from tensorsoc.verification.regress import plan as P
from tensorsoc.verification.regress import report
from tensorsoc.verification.uvm import coverage as C
from tensorsoc.verification.uvm import yaml_gen
from tensorsoc.verification.uvm.firmware_model import ServerFirmwareModel
from tensorsoc.verification.uvm.model_traffic import GoldenTable, golden_output, traffic_of


def test_generated_models_are_valid_and_reproducible():
    cfg = SoCConfig()
    texts = [yaml_gen.random_model(s, cfg) for s in range(25)]
    assert texts == [yaml_gen.random_model(s, cfg) for s in range(25)]          # same seed, same model
    assert len(set(texts)) == 25                                                 # seeds differ
    kinds = set()
    for t in texts:
        model = yaml_gen.check(t, cfg)                                           # sw.model's checks
        assert model.n_layers >= 1 and yaml_gen.macs(model) <= 20000
        kinds |= {op.kind for op in model.ops}
    assert {"conv", "lin", "maxpool", "stream"} <= kinds
    for s in range(10):
        m = yaml_gen.check(yaml_gen.layerless_model(s, cfg), cfg)
        assert m.n_layers == 0 and m.input_bytes > 0 and m.output_bytes > 0


def test_checker_refuses_a_broken_generated_model():
    """check() is the real checker: a generated model with one rule broken
    (a channel count not divisible by VW) is refused."""
    from tensorsoc.sw.model.yamlsrc import ModelError
    text = yaml_gen.layerless_model(3).replace("- 8\n", "- 7\n").replace(", 8]", ", 7]")
    with pytest.raises(ModelError, match="divisible"):
        yaml_gen.check(text)


def test_plan_is_derived_from_the_seed():
    a, b = P.plan(7, 10), P.plan(7, 10)
    assert a == b and P.plan(8, 10) != a
    assert {s.mode for s in a} == {"spi", "qpi", "spi-msb"} and {s.test for s in P.plan(7, 12)} == set(P.TEST_CLASSES)
    assert [s.test for s in P.plan(7, 4)] == list(P.TEST_CLASSES[:4])         # the short tier: one of the first four
    sweeps = [s for s in P.plan(7, 60) if s.test == "SweepTest"]
    assert [s.seed % C.SWEEP_SLICES for s in sweeps] == [k % C.SWEEP_SLICES for k in range(len(sweeps))]
    assert P.TestSpec.parse(a[3].key) == a[3]
    with pytest.raises(ValueError):
        P.TestSpec.parse("NoSuchTest/spi/1")
    with pytest.raises(ValueError):
        P.TestSpec.parse("ModelTest/spi/1/wires")


def test_plan_tiers_and_host_paths():
    """Protocol tests at pin level, model tests on the fast host path but
    every 4th of them at pin level too; the key re-runs the same path."""
    specs = P.plan(5, 40)
    assert all(s.tier == "protocol" and s.host_path == "pins" for s in specs if s.test in P.PROTOCOL_TESTS)
    model = [s for s in specs if s.test in P.MODEL_TESTS]
    assert [s.host_path for s in model] == ["pins" if k % 4 == 3 else "fast" for k in range(len(model))]
    assert {s.tier for s in model} == {"model"}
    pins = next(s for s in model if s.host_path == "pins")
    assert pins.key.endswith("/pins") and pins.name.endswith("-pins") and P.TestSpec.parse(pins.key) == pins
    assert P.TestSpec.parse("ModelTest/spi/9").host_path == "fast"
    assert P.TestSpec.parse("CornerTest/qpi/9").host_path == "pins"


def test_costliest_tests_start_first():
    specs = P.plan(5, 24)
    started = [s for _, s in sorted(zip(P.priorities(specs), specs), key=lambda p: -p[0])]
    assert [s.test for s in started[:4]] == ["CornerTest"] * 4 and started[-1].test == "ModelTest"
    corners = [s for s in specs if s.test == "CornerTest"]
    assert started[:4] == corners                                   # plan order within a class


def _device(runs_layers=True, golden=None):
    fw = ServerFirmwareModel(SoCConfig(), runs_layers=runs_layers, golden=golden)
    return DeviceModel(fw), fw


def _write(dev, cmd, data):
    dev.transaction(bytes([cmd]) + data, 8 * (1 + len(data)))


def _chunks(image):
    """The chunk sequence of ``image``: full chunks, then a short or empty one."""
    chunks = [image[i:i + CHUNK_SIZE] for i in range(0, len(image), CHUNK_SIZE)]
    if len(image) % CHUNK_SIZE == 0:
        chunks.append(b"")
    return chunks


def _load(dev, image):
    for c in _chunks(image):
        _write(dev, Cmd.WMODEL, c)
        dev.run_pending()


def test_firmware_model_runs_layers_against_the_golden_model():
    t = traffic_of(yaml_gen.random_model(4), "m4", SoCConfig())
    golden = GoldenTable()
    golden.register(t)
    dev, fw = _device(golden=golden)
    _load(dev, t.image)
    assert not dev.error and fw.model["n_layers"] == t.n_layers
    assert 0 < t.float_error < 1.0                 # quantisation error of the Q8.8 model, reported
    _write(dev, Cmd.WTENSOR, t.input)
    dev.run_pending()
    _write(dev, Cmd.INFERENCE, b"")
    dev.run_pending()
    assert not dev.error and dev.read_data[Cmd.RTENSOR] == t.output
    assert len(dev.read_data[Cmd.RTIMINGS]) == 4 * t.n_layers
    other = bytes(reversed(t.input))              # any input: the golden model runs on it
    assert golden(t.image, other) == golden_output(t.model, other)


def test_firmware_model_without_runtime_expects_bad_model():
    t = traffic_of(yaml_gen.random_model(5), "m5", SoCConfig())
    dev, _ = _device(runs_layers=False)
    _load(dev, t.image)
    _write(dev, Cmd.WTENSOR, t.input)
    dev.run_pending()
    _write(dev, Cmd.INFERENCE, b"")
    dev.run_pending()
    assert dev.error and dev.cause == ErrorCause.BAD_MODEL


def test_firmware_model_rejects_corrupt_and_invalid_images():
    from tensorsoc.spec import model_image as mi
    t = traffic_of(yaml_gen.layerless_model(1), "l1", SoCConfig())
    bad = bytearray(t.image)
    bad[-1] ^= 4
    dev, fw = _device()
    _load(dev, bytes(bad))                                         # CRC
    assert dev.cause == ErrorCause.BAD_MODEL and fw.model is None
    dev, fw = _device()
    _load(dev, mi.build_image(bytes(64), 16, 0, 0))                # no op tables
    assert dev.cause == ErrorCause.BAD_MODEL
    dev, fw = _device(runs_layers=False)                           # a server that does not read the tables
    _load(dev, mi.build_image(bytes(64), 16, 0, 0))
    assert not dev.error and fw.model["input_bytes"] == 16


def test_firmware_error_is_atomic():
    """As server.c (host_port_finish): the busy bit clears in the same step
    as the error is raised; no state shows the one without the other."""
    dev, _ = _device()
    _write(dev, Cmd.INFERENCE, b"")
    assert dev.status == 1 << Status.WAIT_INFERENCE
    dev.step()
    assert dev.status == 1 << Status.ERROR and dev.cause == ErrorCause.NO_MODEL


def test_coverage_bins_merge_and_model_ops():
    t = traffic_of(yaml_gen.random_model(2), "m2", SoCConfig())
    a, b = C.Coverage(), C.Coverage()
    a.sample_outcome("RID", "OK", "SPI")
    b.sample_outcome("RID", "OK", "SPI")
    b.sample_outcome("WMODEL", "BAD_MODEL", "QPI")
    b.sample_model(t.image, executed=True)
    doc = C.merge([a.to_json(), b.to_json()])
    assert doc["hits"]["command x outcome x mode"]["RID|OK|SPI"] == 2
    summ = C.summary(doc)
    assert summ["command x outcome x mode"][0] == 2
    assert summ["op x activation"][0] >= 1
    assert ("RID", "BUSY", "SPI") in C.protocol_bins() and ("RSTATUS", "BUSY", "SPI") not in C.protocol_bins()


def test_reports(tmp_path):
    d = tmp_path / "tests" / "T-spi-1"
    d.mkdir(parents=True)
    cov = C.Coverage()
    cov.sample_outcome("RID", "OK", "SPI")
    cov.save(d / "coverage.json")
    (d / "test.log").write_text("log")
    results = [{"name": "T-spi-1", "key": "ModelTest/spi/1", "test": "ModelTest", "mode": "spi", "seed": 1,
                "passed": False, "seconds": 1.0, "dir": str(d), "log": str(d / "test.log"), "cycles": 10,
                "transactions": 3, "message": "1 mismatch(es)", "rerun": "tsoc regress --rerun ModelTest/spi/1",
                "tier": "model", "host_path": "fast"},
               {"name": "C-qpi-2", "key": "CornerTest/qpi/2", "test": "CornerTest", "mode": "qpi", "seed": 2,
                "passed": False, "lost": True, "seconds": 0.0, "dir": str(tmp_path / "tests" / "C-qpi-2"),
                "log": str(tmp_path / "tests" / "C-qpi-2" / "test.log"), "cycles": None, "transactions": None,
                "message": "lost: the workers running it died 2 times", "rerun": "r", "tier": "protocol",
                "host_path": "pins", "attempts": 2}]
    meta = {"seed": 3, "jobs": 2, "duration": 2.0, "config": "{}", "build_dir": "b", "expectation": "x"}
    text = report.write_all(tmp_path, meta, results)
    assert "command x outcome x mode" in text and "1/120" in text and "4 excluded" in text
    assert "excluded ACQUIRE|SENSOR|SPI: unreachable" in text and "not hit (119)" in text
    case, lost = ET.parse(tmp_path / "junit.xml").getroot().findall(".//testcase")
    assert case.find("failure") is not None
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["tier"] == "model" and props["host_path"] == "fast"
    assert lost.find("failure").get("type") == "lost" and "lost:" in lost.find("failure").get("message")
    assert [r["name"] for r in json.loads((tmp_path / "results.json").read_text())["results"]] == ["T-spi-1", "C-qpi-2"]
    html = (tmp_path / "report.html").read_text()
    assert "<td>LOST</td>" in html and "(1 lost: their workers died)" in html
    assert "<td class='tier'>model</td><td class='host-path'>fast</td>" in html
    assert "tsoc regress --rerun ModelTest/spi/1" in html and "tests/T-spi-1/test.log" in html
    assert html.count("<tr class='excl'>") == 4 + 6 and "excluded: forbidden by the model rules" in html
    assert json.loads((tmp_path / "coverage.json").read_text())["hits"]["command x outcome x mode"]["RID|OK|SPI"] == 1


def test_sweep_slices_cover_every_model_op_bin():
    """The sweep models of all slices together reach every model-op bin that
    is not excluded (read back from the compiled images, as the scoreboard
    samples them), and only the excluded ones are left."""
    from tensorsoc.spec import model_image as mi
    cfg = SoCConfig()
    cov = C.Coverage()
    for k in range(C.SWEEP_SLICES):
        t = traffic_of(yaml_gen.sweep_model(k, config=cfg, **C.sweep_slice(k)), f"sweep{k}", cfg)
        assert t.n_layers and yaml_gen.macs(t.model) <= 60000
        cov.sample_model(t.image, executed=True)
    for name, (hit, total, extra, excluded) in C.summary(cov.to_json()).items():
        if cov.tables[name]["kind"] == "model-op":
            assert hit == total and not extra, (name, hit, total, extra)
    assert len(C.summary(cov.to_json())["op x kernel x stride x padding"][3]) == 6
    with pytest.raises(ValueError):          # a 1x1 maxpool window cannot be padded
        yaml_gen.sweep_model(1, windows=[("maxpool", "1x1", "1x1", "symmetric")], config=cfg)


def _server_device(image):
    dev, fw = _device()
    for c in _chunks(image):
        _write(dev, Cmd.WSERVER, c)
        dev.step()
    return dev, fw


def test_firmware_model_server_upload():
    """A valid server image finishes without error and the new server starts
    as a later stage (it forgets the model); a corrupt or mis-sized one is
    BAD_SERVER."""
    from tensorsoc.spec import server_image as si
    image = si.build_image(bytes(range(256)) * 3 + b"abcd", SoCConfig().server_window_size)
    dev, fw = _server_device(image)
    assert not dev.error and dev.status == 0 and fw.server_starting and len(dev.jobs) == 1
    fw.model = {"input_bytes": 4}
    dev.run_pending()
    assert not fw.server_starting and fw.servers_started == 1 and fw.model is None
    bad = bytearray(image)
    bad[40] ^= 1
    for wrong in (bytes(bad), image[:-4]):
        dev, fw = _server_device(wrong)
        assert dev.cause == ErrorCause.BAD_SERVER and not fw.server_starting


def test_reset_with_cs_low_is_partial_byte():
    """After a reset inside a transaction the device sees only its tail: no
    command, PARTIAL_BYTE when CS_N rises, nothing driven."""
    dev, _ = _device()
    assert dev.end_after_reset(8 * 20) == [None] * 20
    assert dev.error and dev.cause == ErrorCause.PARTIAL_BYTE and dev.outcomes[-1].cmd is None


def _fake_build(root):
    """A folder shaped like a cocotb build of the SoC (sources + executable)."""
    for rel, data in (("public.vlt", "`verilator_config\n"), ("gateware/tensorsoc.v", "module tensorsoc; endmodule\n"),
                      ("gateware/tensorsoc_rom.init", "00000013\n"), ("firmware/firmware-ram.bin", "\x13\0\0\0"),
                      ("soc/csr.json", "{}"), ("soc/include/generated/soc.h", "#define X 1\n"),
                      ("cocotb/tensorsoc", "\x7fELF simulator")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(data)
    (root / "gateware" / "sources.json").write_text(json.dumps(
        {"top": "tensorsoc", "verilog": [str(root / "gateware" / "tensorsoc.v"), "/elsewhere/VexRiscv.v"]}))
    return SimpleNamespace(build_dir=root, config=SoCConfig())


def test_simulator_package_is_found_shipped_and_checked(tmp_path, monkeypatch):
    """The simulator's key covers the sources and the configuration; a worker
    uses the scheduler's folder when it sees it with the same key, unpacks
    the shipped tarball (key and executable checked) when it does not, and
    refuses a changed source or a corrupt tarball."""
    from tensorsoc.verification.regress import sim_package as S
    monkeypatch.setenv("TSOC_REGRESS_CACHE", str(tmp_path / "cache"))
    build = _fake_build(tmp_path / "soc")
    pkg = S.SimPackage.of(build)
    assert pkg.key != S.SimPackage(S.content_key(build.build_dir, {**pkg.config, "np": 2}), {}, "", "").key
    assert S.locate(pkg) == (build.build_dir, "shared")
    plugin = S.SimulatorPlugin(pkg)
    build.build_dir.rename(tmp_path / "elsewhere")           # a worker that does not see the scheduler's folder
    folder, how = S.locate(pkg, plugin.tarball)
    assert how == "shipped" and folder == tmp_path / "cache" / pkg.key
    assert (folder / "cocotb" / "tensorsoc").read_text() == "\x7fELF simulator"
    verilog = json.loads((folder / "gateware" / "sources.json").read_text())["verilog"]
    assert verilog == [str(folder / "gateware" / "tensorsoc.v"), "/elsewhere/VexRiscv.v"]
    assert S.locate(pkg) == (folder, "cached")
    (folder / "gateware" / "tensorsoc.v").write_text("module tensorsoc; wire changed; endmodule\n")
    with pytest.raises(S.SimulatorMismatch, match="expected " + pkg.short):
        S.locate(pkg)
    digest, data = plugin.tarball
    monkeypatch.setenv("TSOC_REGRESS_CACHE", str(tmp_path / "cache2"))
    with pytest.raises(S.SimulatorMismatch, match="corrupt"):
        S.locate(pkg, (digest, data[:-1] + bytes([data[-1] ^ 1])))


def test_progress_estimates_the_time_left_by_relative_cost(monkeypatch, capsys):
    """The costliest tests start first, so the estimate weighs the tests
    left by plan.RELATIVE_COST rather than counting them."""
    from tensorsoc.verification.regress import cli
    clock = [100.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    specs = [P.TestSpec("CornerTest", "spi", 1), P.TestSpec("ModelTest", "spi", 2), P.TestSpec("ModelTest", "qpi", 3)]
    progress = cli.Progress(specs)
    clock[0] += 50.0
    progress.update({"name": "CornerTest-spi-1", "test": "CornerTest", "tier": "protocol", "host_path": "pins",
                     "passed": True, "seconds": 50.0, "cycles": 1, "message": ""})
    cost = P.RELATIVE_COST
    left = 50.0 / cost["CornerTest"] * 2 * cost["ModelTest"]
    assert f"~{left:.0f} s left" in capsys.readouterr().out
    assert cost["CornerTest"] > cost["ModelTest"]          # counting tests alone would say 100 s


def test_rtimings_zero_only_for_a_layer_under_half_a_microsecond():
    """The scoreboard accepts a 0 us RTimings word only where the server's
    console line for that layer shows fewer cycles than round to 1 us
    (a 34-cycle maxpool at 100 MHz: 0.34 us)."""
    from tensorsoc.verification.uvm.scoreboard import layer_under_half_us
    lines = ["server: layer 1 op 2 CONV on the accelerator, 1199 cycles",
             "server: layer 2 op 3 MAXPOOL on the accelerator, 34 cycles",
             "server: layer 3 op 4 LIN in software, 49 cycles (no program for this op in the accelerator section)"]
    assert layer_under_half_us(lines, 2, 100_000_000)
    assert layer_under_half_us(lines, 3, 100_000_000)            # 49 cycles: 0.49 us
    assert not layer_under_half_us(lines, 1, 100_000_000)        # 11.99 us
    assert not layer_under_half_us(lines, 0, 100_000_000)        # no line: not accepted
    assert not layer_under_half_us(lines + ["server: layer 2 op 3 MAXPOOL on the accelerator, 50 cycles"],
                                   2, 100_000_000)               # the last line counts: 0.50 us rounds to 1
    assert not layer_under_half_us(lines, 2, 32_000_000)         # 34 cycles at 32 MHz: 1.06 us
    assert layer_under_half_us(["server: layer 0 op 1 MAXPOOL on the accelerator, 15 cycles"], 0, 32_000_000)
