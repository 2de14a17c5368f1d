"""`tsoc model check | compile | golden | decode | header`."""

import json
from pathlib import Path

import numpy as np

from tensorsoc.spec.config import ConfigError, SoCConfig
from tensorsoc.spec.errors import UserError
from tensorsoc.spec import model_image as mi


def _user_error(msg):
    return UserError(msg)


def _config(args):
    try:
        return SoCConfig().with_settings(args.set)
    except ConfigError as e:
        raise _user_error(str(e)) from None


def _load(args):
    from tensorsoc.sw.model.frontend import load_model
    from tensorsoc.sw.model.yamlsrc import ModelError
    try:
        return load_model(args.file, _config(args))
    except ModelError as e:
        raise _user_error(str(e)) from None


def _compile(model, args):
    """(image, CompileReport); with --require-accel a layer left in software
    is an error (exit 1, naming the layer, the op and the rule)."""
    from tensorsoc.sw.model.compiler import compile_report
    from tensorsoc.sw.model.yamlsrc import ModelError
    try:
        return compile_report(model, require_accel=getattr(args, "require_accel", False),
                              portable=getattr(args, "portable", False))
    except ModelError as e:
        raise _user_error(str(e)) from None


def _loud(model, report):
    """Stderr too: a model whose accelerator section was dropped runs every
    layer in software, which must not pass unnoticed."""
    import sys
    if report.dropped:
        print(f"WARNING: {model.file}: {report.dropped}", file=sys.stderr)


def cmd_check(args):
    from tensorsoc.sw.model.compiler import summary
    model = _load(args)
    image, report = _compile(model, args)
    print(summary(model, image, report))
    _loud(model, report)
    print(f"{args.file}: OK")
    return 0


def cmd_compile(args):
    from tensorsoc.sw.model.compiler import placement_lines
    model = _load(args)
    image, report = _compile(model, args)
    Path(args.output).write_bytes(image)
    print(f"{args.output}: {len(image)} bytes, {model.n_layers} layer(s), input {model.input_bytes} B, "
          f"output {model.output_bytes} B")
    print("\n".join(placement_lines(model, report)))
    _loud(model, report)
    return 0


def _dataset(args, model):
    """(X, labels or None) of --input/--labels, checked against the model."""
    from tensorsoc.sw.model import dataset as D
    try:
        x = D.load_array(args.input, "--input")
        n = len(D.samples(model, x))
        y = D.load_array(args.labels, "--labels", "biu") if args.labels else None
        if y is not None:
            D.labels(y, n)
        return x, y
    except D.DatasetError as e:
        raise _user_error(str(e)) from None


def print_dataset(res, say=print, prefix=""):
    """The data-set report of ``tensorsoc.verification.golden.dataset.golden``."""
    n, f = res["images"], res["frac_bits"]
    say(f"{prefix}{n} image(s), output '{res['output']}' ({res['output_count']} values), Q{16 - f}.{f}")
    if "accuracy" in res:
        say(f"{prefix}  accuracy: float {100 * res['float_accuracy']:.2f}%, fixed point (golden) "
            f"{100 * res['accuracy']:.2f}%")
    say(f"{prefix}  agreement of the fixed-point and float predictions (argmax): {100 * res['agreement']:.2f}%")
    say(f"{prefix}  quantisation error of the outputs: max {res['error']['max_abs']:.4f}, rms {res['error']['rms']:.4f}")
    for lay in res.get("layers", []):
        say(f"{prefix}  layer {lay['layer']} {lay['op']:<13} {lay['res']:<16} max |error| {lay['max_abs_error']:.4f}, "
            f"rms {lay['rms_error']:.4f}" + (f", {lay['saturated']} saturated" if lay["saturated"] else ""))
    say(f"{prefix}  golden model: {res['seconds']:.3f} s, {res['images_per_second']:.0f} images/s "
        "(fixed point and float, vectorised across images)")


def cmd_golden(args):
    from tensorsoc.sw.model import layout as L
    from tensorsoc.verification.golden.cnn import dequantize, run
    model = _load(args)
    if args.input:
        from tensorsoc.verification.golden import dataset as GD
        x, y = _dataset(args, model)
        res = GD.golden(model, x, y)
        print_dataset(res)
        if args.json:
            out = GD.summary_json(res)
            out.update(model=str(args.file), predictions=res["predictions"].tolist(),
                       float_predictions=res["float_predictions"].tolist(),
                       outputs=res["fixed"].tolist(), float_outputs=res["float"].tolist())
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
            print(f"{args.json}: written")
        return 0
    elif args.labels or args.json:
        raise _user_error("--labels and --json go with --input X.npy")
    g = run(model)
    out = Path(args.output or (Path(args.file).stem + "_golden"))
    (out / "tensors").mkdir(parents=True, exist_ok=True)
    (out / "input.bin").write_bytes(L.host_input(model, g.fixed))
    (out / "output.bin").write_bytes(L.host_output(model, g.fixed))
    report = {"model": str(args.file), "frac_bits": model.frac_bits, "input_bytes": model.input_bytes,
              "output_bytes": model.output_bytes, "inputs": [], "outputs": [], "layers": []}
    for op in model.inputs:
        t = op.h2c
        np.save(out / "tensors" / f"input_{t.name}.npy", g.fixed[t])
        report["inputs"].append({"name": t.name, "dims": list(t.dims), "offset": op.h2c_offset,
                                 "source": str(t.source)})
    for op, fixed, real in g.outputs:
        t = op.c2h
        np.save(out / "tensors" / f"output_{t.name}.npy", fixed)
        np.save(out / "tensors" / f"float_{t.name}.npy", real)
        err = dequantize(fixed, model.frac_bits) - real
        report["outputs"].append({"name": t.name, "dims": list(t.dims), "offset": op.c2h_offset,
                                  "max_abs_error": float(np.max(np.abs(err))),
                                  "rms_error": float(np.sqrt(np.mean(err ** 2))),
                                  "float_max_abs": float(np.max(np.abs(real)))})
    for op in model.ops:
        if op.kind != "stream":
            err = g.error(op.res)
            sat = int(np.sum(np.abs(g.fixed[op.res]) >= 32767))
            report["layers"].append({"layer": op.layer, "op": op.type_name, "res": op.res.name,
                                     "max_abs_error": float(np.max(np.abs(err))), "saturated": sat})
            if args.all:
                np.save(out / "tensors" / f"layer{op.layer}_{op.res.name}.npy", g.fixed[op.res])
    (out / "golden.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"{out}: input.bin ({model.input_bytes} B), output.bin ({model.output_bytes} B), golden.json")
    for o in report["outputs"]:
        print(f"  output {o['name']} {o['dims']}: float vs Q{16 - model.frac_bits}.{model.frac_bits} "
              f"max |error| {o['max_abs_error']:.5f}, rms {o['rms_error']:.5f} (float max |y| {o['float_max_abs']:.3f})")
    for lay in report["layers"]:
        if lay["saturated"]:
            print(f"  warning: layer {lay['layer']} ({lay['res']}): {lay['saturated']} saturated value(s)")
    return 0


def cmd_import(args):
    from tensorsoc import onnx_import as OI
    from tensorsoc.sw.model.compiler import compile_report, placement_lines
    from tensorsoc.sw.model.yamlsrc import ModelError
    cal = None
    if args.calibrate:
        from tensorsoc.sw.model.dataset import DatasetError, load_array
        try:
            cal = load_array(args.calibrate, "--calibrate")
        except DatasetError as e:
            raise _user_error(str(e)) from None
    try:
        r = OI.import_onnx(args.file, args.output, _config(args), calibrate=cal, frac_bits=args.frac_bits)
    except OI.OnnxImportError as e:
        raise _user_error(str(e)) from None
    m = r.model
    io = m.io
    print(f"{args.output}: {m.n_layers} layer(s) from {args.file}; constants in {Path(args.output).stem}_data/")
    print(f"  input '{io.tensor.name}' {list(io.tensor.dims)} (samples {list(io.sample_shape)}, {io.sample_layout}"
          + (f", {io.input.h2c_padding} padded lane(s) not sent" if io.input.h2c_padding else "") + ")")
    t = io.output.c2h
    print(f"  output '{t.name}' {list(t.dims)}: {io.output_count} real value(s)"
          + (f", the host reads {t.host_elements(io.output.c2h_padding)} and drops the padding"
             if t.host_elements(io.output.c2h_padding) > io.output_count else ""))
    print(f"  float model vs onnx.reference on {r.checked_samples} sample(s): max |difference| "
          f"{r.reference_error:.2e} (outputs up to {r.reference_scale:.3g})")
    if r.calibrated:
        print(f"  calibration: {len(r.candidates)} formats over the --calibrate samples; chosen: the smallest "
              "output error (rms, float vs fixed) among those whose values all stay below half the int16 range:")
        for c in r.candidates:
            mark = "  <- chosen" if c["frac_bits"] == r.frac_bits else ""
            print(f"    Q{16 - c['frac_bits']:>2}.{c['frac_bits']:<2}  max {c['max_abs']:10.4f}  rms {c['rms']:9.5f}  "
                  f"agreement {100 * c['agreement']:6.2f}%  saturated {c['saturated']:>6}  largest |raw| "
                  f"{c['peak']:>6}{'' if c['headroom'] else ' (no headroom)'}{mark}")
    else:
        print(f"  frac_bits {r.frac_bits} (no --calibrate: error below on random samples)")
    print(f"  per layer, float vs fixed Q{16 - r.frac_bits}.{r.frac_bits}"
          f"{' on the calibration samples' if r.calibrated else ''}:")
    for lay in r.layers:
        print(f"    layer {lay['layer']} {lay['op']:<13} {lay['res']:<12} max |error| {lay['max_abs_error']:.4f}, "
              f"rms {lay['rms_error']:.5f}" + (f", {lay['saturated']} saturated" if lay["saturated"] else ""))
    try:
        _, report = compile_report(m, require_accel=args.require_accel)
    except ModelError as e:
        raise _user_error(str(e)) from None
    print("\n".join(placement_lines(m, report)))
    return 0


def cmd_decode(args):
    try:
        d = mi.decode_image(Path(args.image).read_bytes())
    except (OSError, mi.ModelImageError) as e:
        raise _user_error(f"{args.image}: {e}") from None
    d["consts"] = f"{len(d['consts'])} bytes"
    if d["accel"]:
        d["accel"]["data"] = f"{len(d['accel']['data'])} bytes"
    print(json.dumps(d, indent=1))
    return 0


def cmd_header(args):
    text = mi.c_header()
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text, end="")
    return 0


def register(groups):
    p = groups["top"].add_parser("model", help="YAML CNN models: check, compile, golden outputs")
    sub = p.add_subparsers(dest="model_command", metavar="COMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    def model_parser(name, help):
        q = sub.add_parser(name, help=help)
        q.add_argument("file", metavar="FILE.yaml")
        q.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                       help="override a spec/config.py field (vw, main_ram_size, tensor_window_size, ...)")
        return q

    def require_accel(q):
        q.add_argument("--require-accel", action="store_true",
                       help="fail (exit 1) when any TENS_CONV/TENS_LIN/TENS_MAXPOOL would run on the MCORE "
                            "software path instead of the accelerator, naming the layer, op and rule")
        return q

    require_accel(model_parser("check", "check every rule of a model, show its memory plan and where each "
                                        "layer runs")).set_defaults(func=cmd_check)
    c = require_accel(model_parser("compile", "compile a model into a model image (WModel)"))
    c.add_argument("-o", "--output", required=True, metavar="model.bin")
    c.add_argument("--portable", action="store_true",
                   help="also store, in memory layout, the constants only accelerated layers read (by default "
                        "they are stored once, arranged for the accelerator): the image then runs on any SoC, "
                        "layers without this accelerator on the MCORE software path")
    c.set_defaults(func=cmd_compile)
    g = model_parser("golden", "write the golden inputs, expected outputs and float outputs; with --input, "
                               "score a data set")
    g.add_argument("-o", "--output", metavar="DIR", help="output folder (default FILE_golden)")
    g.add_argument("--all", action="store_true", help="also save every layer's result")
    g.add_argument("--input", metavar="X.npy",
                   help="run the fixed-point and float models over a data set instead (N samples, as the model's "
                        "'io' says: e.g. [N, C, H, W] for an imported CNN), vectorised across images; prints "
                        "agreement, quantisation error per layer and images/s")
    g.add_argument("--labels", metavar="Y.npy", help="with --input: N integer labels; prints float and fixed accuracy")
    g.add_argument("--json", metavar="OUT.json", help="with --input: the report, predictions and outputs as JSON")
    g.set_defaults(func=cmd_golden)
    i = sub.add_parser("import", help="a trained ONNX network to a YAML model (+ .npy constants)",
                       description="Reads an ONNX graph (a chain of Conv, Gemm, MatMul (+Add), BatchNormalization, "
                                   "Relu, Tanh, MaxPool, Flatten/Reshape), converts NCHW to the project's layout, pads "
                                   "channels, features and outputs to the vector width (the model's 'io' records "
                                   "the real output count), writes the constants as .npy files in OUT_data/ and "
                                   "checks the float model against onnx.reference. --calibrate chooses frac_bits: "
                                   "the format with the smallest output error over the samples, with a per-layer "
                                   "float-vs-fixed report (docs/models.md, 'Importing ONNX').")
    i.add_argument("file", metavar="MODEL.onnx")
    i.add_argument("-o", "--output", required=True, metavar="MODEL.yaml")
    i.add_argument("--calibrate", metavar="X.npy",
                   help="samples [N, C, H, W] or [N, features] (as the network takes them) that choose the "
                        "fixed-point format; the first one becomes the YAML's input")
    i.add_argument("--frac-bits", type=int, choices=range(0, 16), metavar="F",
                   help="without --calibrate: fractional bits (default 8)")
    i.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a spec/config.py field (vw: the width channels are padded to)")
    require_accel(i)
    i.set_defaults(func=cmd_import)
    d = sub.add_parser("decode", help="print the header, tables and ops of a model image")
    d.add_argument("image", metavar="model.bin")
    d.set_defaults(func=cmd_decode)
    h = sub.add_parser("header", help="the C header of the model image format (model_image.h)")
    h.add_argument("-o", "--output", metavar="FILE")
    h.set_defaults(func=cmd_header)
