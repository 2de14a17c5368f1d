"""The golden model over a whole data set: accuracy, float-vs-fixed error per
layer, throughput (``tsoc model golden --dataset``, ``tsoc model import``'s
calibration, the SoC runs' expected outputs).

Data-set reading and the host/device layouts are the product's
(``tensorsoc.sw.model.dataset``); the numbers are the golden model's
(``tensorsoc.verification.golden.cnn``)."""

import time

import numpy as np

from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.dataset import labels, model_io, real_outputs, samples
from tensorsoc.verification.golden.cnn import dequantize, quantize, run_batch


CHUNK = 256          # images per vectorised golden step (bounds the memory of the im2col windows)


def golden(model, x, y=None, chunk=CHUNK, layers=True):
    """The fixed-point and the float model over a whole data set, vectorised
    across images (``tensorsoc.verification.golden.cnn.run_batch``).  Returns a dict:
    ``fixed``/``float`` (N, output_count) real output values, ``raw`` (N,
    output stream) int16 values of the whole output stream,
    ``predictions``/``float_predictions`` (argmax), ``accuracy``/
    ``float_accuracy`` (with labels ``y``), ``agreement`` (same argmax),
    ``error`` (output max / rms |fixed - float|), ``layers`` (per compute op:
    max and rms error, saturated values), ``seconds`` and ``images_per_second``."""
    io = model_io(model)
    xs = samples(model, x)
    n = len(xs)
    if y is not None:
        y = labels(y, n)
    t, out_t = io.tensor, io.output.c2h
    compute = [op for op in model.ops if op.kind != "stream"]
    sq = {op.layer: 0.0 for op in compute}
    mx = {op.layer: 0.0 for op in compute}
    sat = {op.layer: 0 for op in compute}
    peak = {op.layer: 0 for op in compute}
    fixed, real, raw = [], [], []
    t0 = time.perf_counter()
    for s in range(0, n, chunk):
        part = xs[s:s + chunk]
        g = run_batch(model, {t: (quantize(part, model.frac_bits), part)})
        raw.append(np.stack([L.device_to_host(a, out_t.layout, io.output.c2h_padding) for a in g.fixed[out_t]]))
        fixed.append(dequantize(raw[-1][:, :io.output_count], model.frac_bits))
        real.append(real_outputs(model, g.real[out_t]))
        if layers:
            for op in compute:
                e = g.error(op.res)
                mx[op.layer] = max(mx[op.layer], float(np.max(np.abs(e))) if e.size else 0.0)
                sq[op.layer] += float(np.sum(e ** 2))
                sat[op.layer] += int(np.sum(np.abs(g.fixed[op.res]) >= 32767))
                peak[op.layer] = max(peak[op.layer], int(np.max(np.abs(g.fixed[op.res]))))
    seconds = time.perf_counter() - t0
    fixed = np.concatenate(fixed) if fixed else np.zeros((0, io.output_count))
    real = np.concatenate(real) if real else np.zeros((0, io.output_count))
    err = fixed - real
    pred, fpred = fixed.argmax(axis=1), real.argmax(axis=1)
    out = {"images": n, "frac_bits": model.frac_bits, "output": out_t.name, "output_count": io.output_count,
           "fixed": fixed, "float": real, "raw": np.concatenate(raw) if raw else None,
           "predictions": pred, "float_predictions": fpred,
           "agreement": float(np.mean(pred == fpred)) if n else None,
           "error": {"max_abs": float(np.max(np.abs(err))) if n else 0.0,
                     "rms": float(np.sqrt(np.mean(err ** 2))) if n else 0.0},
           "seconds": seconds, "images_per_second": n / seconds if seconds else None}
    if y is not None:
        out["labels"] = y
        out["accuracy"] = float(np.mean(pred == y)) if n else None
        out["float_accuracy"] = float(np.mean(fpred == y)) if n else None
    if layers:
        out["layers"] = [{"layer": op.layer, "op": op.type_name, "res": op.res.name, "dims": list(op.res.dims),
                          "max_abs_error": mx[op.layer],
                          "rms_error": (sq[op.layer] / (n * op.res.elements)) ** 0.5 if n else 0.0,
                          "saturated": sat[op.layer], "peak": peak[op.layer]} for op in compute]
    return out


def summary_json(res):
    """``golden()``'s result without the per-image arrays, for JSON."""
    skip = {"fixed", "float", "raw", "predictions", "float_predictions", "labels"}
    return {k: v for k, v in res.items() if k not in skip}
