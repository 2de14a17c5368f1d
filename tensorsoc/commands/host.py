"""`tsoc host`: talk to a tensorsoc device over Linux spidev.

    tsoc host --spidev /dev/spidev0.0 [--qpi] [--msb-first] [--speed HZ] status
    tsoc host --spidev /dev/spidev0.0 write-model model.bin
    tsoc host --spidev /dev/spidev0.0 read-tensor 16 > out.bin
    tsoc host --spidev /dev/spidev0.0 infer-many --model m.yaml --input x.npy --labels y.npy
"""

import sys
from pathlib import Path

from tensorsoc.sw.host.device import DeviceError, DeviceTimeout, ProtocolUsageError, SyncDevice
from tensorsoc.sw.host.transport import TransportError
from tensorsoc.spec.errors import UserError


def open_transport(args):
    """The transport named by the arguments (replaced in tests)."""
    from tensorsoc.sw.host.spidev_transport import SpidevTransport
    return SpidevTransport(args.spidev, qpi=args.qpi, msb_first=args.msb_first, speed_hz=args.speed)


def _read_file(path):
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}") from None


def _hexdump(data, out):
    for off in range(0, len(data), 16):
        out.write(f"{off:08x}  {data[off:off + 16].hex(' ')}\n")


ACTIONS = {
    "status": lambda dev, a, out: out.write(f"status {dev.status()}\n"),
    "id": lambda dev, a, out: out.write(f"id 0x{dev.id():08x}\n"),
    "spec": lambda dev, a, out: out.write("".join(f"{k:13} {v}\n" for k, v in dev.spec().items())),
    "write-model": lambda dev, a, out: dev.write_model(_read_file(a.file), timeout=a.timeout),
    "write-server": lambda dev, a, out: dev.write_server(_read_file(a.file), timeout=a.timeout),
    "write-tensor": lambda dev, a, out: dev.write_tensor(_read_file(a.file), timeout=a.timeout),
    "infer": lambda dev, a, out: dev.infer(timeout=a.timeout),
    "read-tensor": lambda dev, a, out: _write_tensor_out(dev.read_tensor(a.nbytes), a, out),
    "infer-many": lambda dev, a, out: _infer_many(dev, a, out),
    "timings": lambda dev, a, out: out.write("".join(f"layer {i:3} {t:10} us\n"
                                                     for i, t in enumerate(dev.timings(a.nlayers)))),
}


def _infer_many(dev, args, out):
    """Load once, infer many: the YAML model compiled to its image (one
    WModel), then every sample of --input (Device.infer_many); prints each
    prediction (argmax of the model's real outputs) and the accuracy."""
    import json
    import numpy as np
    from tensorsoc.sw.model import dataset as D
    from tensorsoc.sw.model.compiler import compile_model
    from tensorsoc.sw.model.frontend import load_model
    from tensorsoc.sw.model.yamlsrc import ModelError
    from tensorsoc.sw.model.quant import quantize
    try:
        model = load_model(args.model)
        x = D.load_array(args.input, "--input")
        xs = D.samples(model, x)[:args.count or None]
        y = D.labels(D.load_array(args.labels, "--labels", "biu"), len(D.samples(model, x)))[:len(xs)] \
            if args.labels else None
    except (ModelError, D.DatasetError) as e:
        raise UserError(str(e)) from None
    inputs = [D.host_input(model, quantize(s, model.frac_bits)) for s in xs]
    results = dev.infer_many(compile_model(model), inputs, model.output_bytes, model.n_layers, timeout=args.timeout,
                             model_timeout=args.timeout)
    rows = []
    for i, (data, us) in enumerate(results):
        values = D.host_values(model, data)
        rows.append({"image": i, "prediction": int(np.argmax(values)), "outputs": values.tolist(), "layer_us": us,
                     **({"label": int(y[i])} if y is not None else {})})
        out.write(f"image {i:5}: prediction {rows[-1]['prediction']}" + (f", label {y[i]}" if y is not None else "")
                  + f", {sum(us)} us\n")
    summary = {"images": len(rows), "model_loads": 1}
    if y is not None and rows:
        summary["accuracy"] = float(np.mean([r["prediction"] == r["label"] for r in rows]))
        out.write(f"accuracy {100 * summary['accuracy']:.2f}% on {len(rows)} image(s) (one WModel)\n")
    if args.json:
        Path(args.json).write_text(json.dumps({**summary, "images_detail": rows}, indent=1) + "\n")


def _write_tensor_out(data, args, out):
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        _hexdump(data, out)


def run(args, out=None):
    out = out or sys.stdout
    try:
        transport = open_transport(args)
    except TransportError as e:
        raise UserError(str(e)) from None
    try:
        with SyncDevice(transport, timeout=args.timeout) as dev:
            ACTIONS[args.action](dev, args, out)
    except ProtocolUsageError as e:
        raise UserError(str(e)) from None
    except (DeviceError, DeviceTimeout, TransportError) as e:
        raise UserError(f"{args.spidev}: {e}") from None
    finally:
        close = getattr(transport, "close", None)
        if close:
            close()
    return 0


def register(groups):
    p = groups["top"].add_parser("host", help="talk to a tensorsoc device over SPI/QPI (Linux spidev)",
                                 description="Talk to a tensorsoc device over Linux spidev.  The port "
                                 "runs in SPI mode 1 (CPOL 0, CPHA 1: the host changes data on the rising "
                                 "SCLK edge, the device samples on the falling one and drives read data on "
                                 "the rising one), which this command sets; LSB first.  QPI (--qpi) needs "
                                 "a quad-capable controller and the device's MISO pin tied to ground "
                                 "(docs/host_protocol.md, 'Choosing the SPI mode on common hosts').")
    p.add_argument("--spidev", required=True, metavar="DEV", help="spidev node, e.g. /dev/spidev0.0")
    p.add_argument("--qpi", action="store_true", help="4-bit QPI (the device's MISO strapped low at reset)")
    p.add_argument("--msb-first", action="store_true", help="for a device built with the MSB-first option")
    p.add_argument("--speed", type=int, default=10_000_000, metavar="HZ",
                   help="SCLK frequency (default 10 MHz; each board's fastest per link mode is in "
                        "docs/fpga.md's configuration table, e.g. ULX3S QPI 32 MHz)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="seconds a write or inference may take (default 5)")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("status", help="read the status word (clears the error bit)")
    sub.add_parser("id", help="read the device ID")
    sub.add_parser("spec", help="read the system spec")
    for name, what in (("write-model", "model image"), ("write-server", "server firmware image"),
                       ("write-tensor", "input tensor")):
        sp = sub.add_parser(name, help=f"write a {what} from a file")
        sp.add_argument("file")
    sub.add_parser("infer", help="run an inference and wait for it")
    sp = sub.add_parser("read-tensor", help="read N bytes of the output tensor (hex dump, or -o FILE)")
    sp.add_argument("nbytes", type=int, metavar="N")
    sp.add_argument("-o", "--output", metavar="FILE", help="write the bytes to FILE")
    sp = sub.add_parser("infer-many", help="load a YAML model once (WModel), then run every sample of a data set "
                                           "(WTensor, Inference, RTensor, RTimings): predictions and accuracy")
    sp.add_argument("--model", required=True, metavar="MODEL.yaml", help="the model (compiled here to its image)")
    sp.add_argument("--input", required=True, metavar="X.npy", help="N samples in the model's 'io' layout")
    sp.add_argument("--labels", metavar="Y.npy", help="N integer labels: prints the accuracy")
    sp.add_argument("--count", type=int, metavar="N", help="the first N samples only")
    sp.add_argument("--json", metavar="OUT.json", help="predictions, outputs and per-layer times as JSON")
    sp = sub.add_parser("timings", help="per-layer times of the last inference")
    sp.add_argument("nlayers", type=int, metavar="N")
    p.set_defaults(func=run)
