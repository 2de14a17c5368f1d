"""A YAML model run end to end through the host port: compile, golden, then
WModel / WTensor / Inference / RTensor / RTimings, compared with the golden
model bit for bit.  Used by `make sim` (verification/soc/sim_main.py).

Where each layer ran comes from the device: after an inference the server
prints a console line per layer (sw/firmware/server.c, ``LAYER_LINE``): on
the accelerator or in software with the firmware's reason, and the layer's
exact cycles.  The roofline of each layer is sw/model/roofline.py's."""

import re

import numpy as np

from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model import roofline

# sw/firmware/server.c, one per layer after each inference:
#   server: layer 0 op 1 CONV on the accelerator, 9612 cycles
#   server: layer 2 op 4 LIN in software, 64400 cycles (no program for this op in the accelerator section)
LAYER_LINE = re.compile(r"server: layer (\d+) op (\d+) (\w+|\?) (on the accelerator|in software), (\d+) cycles"
                        r"(?: \((.*)\))?$")

INFERENCE_LINE = re.compile(r"server: inference done in (\d+) cycles")


def layer_macs(op):
    """Multiply-accumulates of a compute op (0 for maxpool)."""
    return roofline.useful_macs(op)


def device_layers(lines):
    """{layer: {"engine": "accel" | "software", "cycles", "op", "opcode",
    "reason"}} from the server's per-layer console lines (the last inference
    in ``lines`` wins)."""
    out = {}
    for line in lines:
        m = LAYER_LINE.search(line)
        if m:
            soft = m.group(4) == "in software"
            out[int(m.group(1))] = {"engine": "software" if soft else "accel", "cycles": int(m.group(5)),
                                    "op": int(m.group(2)), "opcode": m.group(3),
                                    "reason": m.group(6) if soft else None}
    return out


def software_lines(lines):
    """The per-layer console lines of layers that ran in software."""
    return [l for l in lines if (m := LAYER_LINE.search(l)) and m.group(4) == "in software"]


def golden_io(model):
    """(golden run, input bytes, expected output bytes)."""
    from tensorsoc.verification.golden.cnn import run
    g = run(model)
    return g, L.host_input(model, g.fixed), L.host_output(model, g.fixed)


async def _infer(dev, image, inp, model, timeout, console=None):
    """(output bytes, RTimings us, device_layers() of the console or None,
    the server's whole-inference cycles or None)."""
    # The server checks the whole image (CRC-32) after its last chunk: give
    # a large model the time (1 us a byte at most, 100 cycles at 100 MHz).
    await dev.write_model(image, timeout=max(dev.timeout, 1e-6 * len(image)))
    await dev.write_tensor(inp)
    n = len(console.lines) if console is not None else 0
    await dev.infer(timeout=timeout)
    got = await dev.read_tensor(model.output_bytes)
    times = await dev.timings(model.n_layers)
    where = total = None
    if console is not None:
        # The per-layer lines come before this one (server.c).
        done = await console.wait_for("server: inference done", start=n)
        where = device_layers(console.lines[n:])
        m = INFERENCE_LINE.search(done)
        total = int(m.group(1)) if m else None
    return got, times, where, total


def _row(op, us, sys_clk_freq, peak, where, program, config):
    """One layer of the result: RTimings, the device's per-layer line, the
    compiler's placement and the roofline."""
    rt_cycles = round(us * sys_clk_freq / 1e6)
    cycles = where["cycles"] if where else rt_cycles
    macs = layer_macs(op)
    nz = roofline.nonzero_macs(op)
    row = {"layer": op.layer, "op": op.type_name, "result": op.res.name, "dims": list(op.res.dims),
           "act": op.act, "us": us, "cycles": cycles, "rtimings_cycles": rt_cycles, "macs": macs,
           "macs_per_clock": macs / cycles if cycles else 0.0,
           "peak_macs_per_clock": peak if macs else 0,
           "of_peak": macs / cycles / peak if cycles and macs else 0.0,
           "nonzero_macs": nz,
           "nonzero_of_peak": nz / cycles / peak if cycles and macs and nz is not None else None,
           "engine": where["engine"] if where else None,
           "compiled_engine": "software" if program is None or isinstance(program, str) else "accel"}
    if where and where["reason"]:
        row["software_reason"] = where["reason"]
    if isinstance(program, str):
        row["compile_reason"] = program
    row["roofline"] = roofline.layer(op, config, cycles=cycles, program=program).as_dict()
    return row


async def run_model(dev, model, sys_clk_freq, peak_macs_per_clock, timeout=2.0, software=True, console=None,
                    require_accel=False):
    """Runs ``model`` on the device; returns a result dict (per-layer times,
    where each layer ran, roofline, outputs compared with the golden model).
    With an accelerator in the configuration the model runs twice: its image
    with the accelerator section, then (``software``) the same image without
    it, which the firmware runs on its software path: the speedup baseline.
    ``console`` (host_env.Console): where each layer ran and its exact cycles
    come from the server's per-layer lines (without it: not known, cycles
    from RTimings).  ``require_accel``: the compiler refuses a model with a
    layer it cannot put on the accelerator (sw.model.yamlsrc.ModelError)."""
    from tensorsoc.sw.model.compiler import compile_model, compile_report
    from tensorsoc.verification.golden.cnn import dequantize
    g, inp, expected = golden_io(model)
    accel = bool(model.config.accelerator)
    image, report = compile_report(model, accel=accel, require_accel=require_accel)
    programs = {p.layer: p.program if p.program is not None else p.reason for p in report.layers}
    runs = [("accelerated" if accel else "software", image)]
    if accel and software:
        runs.append(("software", compile_model(model, accel=False)))
    # The software path takes ~20 cycles a MAC (the default model's conv: 17).
    timeout = max(timeout, 40 * sum(layer_macs(op) for op in model.exec_ops if op.kind != "stream")
                  / model.config.sys_clk_freq)
    results = {}
    for name, img in runs:
        results[name] = await _infer(dev, img, inp, model, timeout, console)
    got, times_us, where, total_cycles = results[runs[0][0]]
    soft = results.get("software") if accel and software else None
    layers = []
    for op in model.exec_ops:
        if op.layer is None:
            continue
        row = _row(op, times_us[op.layer], sys_clk_freq, peak_macs_per_clock,
                   where.get(op.layer) if where is not None else None, programs.get(op.layer), model.config)
        if soft is not None:
            sw_where = soft[2].get(op.layer) if soft[2] is not None else None
            row["software_cycles"] = sw_where["cycles"] if sw_where else round(soft[1][op.layer] * sys_clk_freq / 1e6)
            row["speedup"] = row["software_cycles"] / row["cycles"] if row["cycles"] else 0.0
        layers.append(row)
    def mismatch(b):
        return int(sum(x != y for x, y in zip(b, expected)) + abs(len(b) - len(expected)))
    float_err = []
    for op, fixed, real in g.outputs:
        err = dequantize(fixed, model.frac_bits) - real
        float_err.append({"tensor": op.c2h.name, "max_abs": float(np.max(np.abs(err))),
                          "rms": float(np.sqrt(np.mean(err ** 2)))})
    known = where is not None
    out = {"layers": layers, "output_bytes": len(got), "bit_exact": all(r[0] == expected for r in results.values()),
           "mismatched_bytes": mismatch(got), "float_error": float_err,
           "path": "accelerated (TensorEngine + PCOREs)" if accel else "software (MCORE)",
           "layers_on_accelerator": sum(l["engine"] == "accel" for l in layers) if known else None,
           "layers_in_software": [l["layer"] for l in layers if l["engine"] == "software"] if known else None,
           "require_accel": require_accel,
           "inference_cycles": total_cycles,
           "roofline": {"peak_macs_per_clock": model.config.np * model.config.vw,
                        "bus_bytes_per_clock": roofline.bus_bytes_per_clock(model.config)},
           "outputs": output_values(model, got)}
    if model.io is not None and model.io.output is not None and model.io.input is not None:
        from tensorsoc.sw.model.dataset import host_values
        out["prediction"] = int(np.argmax(host_values(model, got)))
    if soft is not None:
        soft_got = soft[0]
        out["software"] = {"bit_exact": soft_got == expected, "mismatched_bytes": mismatch(soft_got),
                           "cycles": sum(l["software_cycles"] for l in layers),
                           "inference_cycles": soft[3]}
        total = sum(l["cycles"] for l in layers)
        out["speedup"] = out["software"]["cycles"] / total if total else 0.0
    return out


def output_values(model, data):
    """{output tensor: its real values in stream order} from RTensor bytes."""
    out = {}
    for op in model.outputs:
        n = op.c2h.host_elements(op.c2h_padding)
        raw = np.frombuffer(bytes(data[op.c2h_offset:op.c2h_offset + 2 * n]), dtype="<i2")
        out[op.c2h.name] = (raw / float(1 << model.frac_bits)).tolist()
    return out


def require_accel_failures(result):
    """`tsoc sim --require-accel`: a message per layer the device did not
    run on the accelerator (or did not say where it ran)."""
    return [f"layer {l['layer']} ({l['op']}): {l.get('software_reason') or 'no per-layer console line'}"
            for l in result["layers"] if l.get("engine") != "accel"]


def _engine(l):
    return {"accel": "accelerator", "software": "SOFTWARE", None: "?"}[l.get("engine")]


def print_result(result, say, config=None):
    """The per-layer table (where each layer ran, from the device), then the
    roofline table (sw/model/roofline.py)."""
    soft = "software" in result
    head = (f"[model] {'layer':<6}{'op':<14}{'result':<18}{'ran on':<13}{'MACs':>10}{'time (us)':>11}{'cycles':>11}"
            f"{'MACs/clk':>10}{'of peak':>9}{'nz MACs':>10}{'nz peak':>9}")
    say(head + (f"{'sw cycles':>11}{'speedup':>9}" if soft else ""))
    for l in result["layers"]:
        line = (f"[model] {l['layer']:<6}{l['op']:<14}{l['result']:<18}{_engine(l):<13}{l['macs']:>10}{l['us']:>11}"
                f"{l['cycles']:>11}{l['macs_per_clock']:>10.3f}{100 * l['of_peak']:>8.1f}%"
                f"{'-' if l.get('nonzero_macs') is None else l['nonzero_macs']:>10}"
                + (f"{100 * l['nonzero_of_peak']:>8.1f}%" if l.get("nonzero_of_peak") is not None else f"{'-':>9}"))
        if soft:
            line += f"{l['software_cycles']:>11}{l['speedup']:>8.1f}x"
        say(line)
    for l in result["layers"]:
        if l.get("engine") == "software":
            say(f"[model] layer {l['layer']} ({l['op']}) ran in SOFTWARE on the MCORE: {l.get('software_reason')}"
                + (f"; compiler: {l['compile_reason']}" if l.get("compile_reason") else ""))
    total_macs = sum(l["macs"] for l in result["layers"])
    total_cycles = sum(l["cycles"] for l in result["layers"])
    peak = max((l["peak_macs_per_clock"] for l in result["layers"]), default=0)
    nz = [l.get("nonzero_macs") for l in result["layers"]]
    nz_total = sum(nz) if None not in nz else None
    say(f"[model] total {total_macs} MACs in {total_cycles} cycles on the {result['path']} path: "
        f"{total_macs / total_cycles if total_cycles else 0:.3f} MACs/clock (accelerator peak {peak})"
        + (f"; without the padding to VW (nz: nonzero weights, stream-padded lanes left out) {nz_total} MACs, "
           f"{nz_total / total_cycles if total_cycles else 0:.3f} MACs/clock" if nz_total is not None else ""))
    if result.get("layers_on_accelerator") is not None:
        n = len(result["layers"])
        say(f"[model] {result['layers_on_accelerator']} of {n} layer(s) ran on the accelerator (the device's "
            f"per-layer console lines)" + (f"; in software: layer(s) {result['layers_in_software']}"
                                           if result["layers_in_software"] else ""))
    if soft:
        say(f"[model] software path: {result['software']['cycles']} cycles; speedup of the {result['path']} path "
            f"{result['speedup']:.1f}x")
    acc, sw = result.get("inference_cycles"), (result.get("software") or {}).get("inference_cycles")
    if acc:
        say(f"[model] whole inference (the server's cycle count, stream ops and program loads included): {acc} cycles"
            + (f", {sw} on the software path: {sw / acc:.1f}x" if sw else ""))
    if config is not None and result["layers"]:
        say(f"[model] {roofline.legend(config)}")
        say(f"[model] {'layer':<6}{'op':<14}{roofline.header()}")
        for l in result["layers"]:
            say(f"[model] {l['layer']:<6}{l['op']:<14}{roofline.row(roofline.Roofline.from_dict(l['roofline']))}")
    say(f"[model] outputs vs golden model: {'BIT-EXACT' if result['bit_exact'] else 'MISMATCH'} "
        f"({result['output_bytes']} bytes, {result['mismatched_bytes']} differ"
        + (f"; software path {result['software']['mismatched_bytes']} differ)" if soft else ")"))
    for e in result["float_error"]:
        say(f"[model] quantisation error of {e['tensor']} against the float model: max {e['max_abs']:.4f}, "
            f"rms {e['rms']:.4f}")


# -- a data set: one WModel, then every image ------------------------------------

async def run_dataset(dev, model, x, y=None, sys_clk_freq=None, peak_macs_per_clock=None, console=None,
                      require_accel=False, timeout=2.0, say=None):
    """Loads ``model`` once (one WModel) and runs every sample of ``x`` with
    the host library's load-once, infer-many call (``Device.infer_many``:
    WTensor, Inference, RTensor, RTimings per image).  Each output is
    compared bit for bit with the golden model (``run_batch``, vectorised);
    returns the usual result of the first image (per-layer table, roofline)
    plus ``dataset`` (accuracies float / golden / SoC, agreement, cycles) and
    ``images`` (per image: outputs, predictions, label, cycles, bit-exact)."""
    import time
    from tensorsoc.sw.model import dataset as D
    from tensorsoc.verification.golden import dataset as GD
    from tensorsoc.sw.model.compiler import compile_report
    from tensorsoc.verification.golden.cnn import quantize, run_batch
    t0 = time.monotonic()
    gold = GD.golden(model, x, y, layers=False)
    xs = D.samples(model, x)
    fixed_in = quantize(xs, model.frac_bits)
    g = run_batch(model, {model.io.tensor: (fixed_in, xs)})
    n = len(xs)
    inputs = [D.host_input(model, fixed_in[i]) for i in range(n)]
    expected = [L.host_output(model, {op.c2h: g.fixed[op.c2h][i] for op in model.outputs}) for i in range(n)]
    accel = bool(model.config.accelerator)
    image, report = compile_report(model, accel=accel, require_accel=require_accel)
    programs = {p.layer: p.program if p.program is not None else p.reason for p in report.layers}
    timeout = max(timeout, 40 * sum(layer_macs(op) for op in model.ops if op.kind != "stream")
                  / model.config.sys_clk_freq)
    images, wheres = [], []
    state = {"mark": len(console.lines) if console is not None else 0, "t": t0}

    async def each(i, got, us):
        where = total = None
        if console is not None:
            done = await console.wait_for("server: inference done", start=state["mark"])
            k = console.lines.index(done, state["mark"])
            where = device_layers(console.lines[state["mark"]:k + 1])
            state["mark"] = k + 1
            m = INFERENCE_LINE.search(done)
            total = int(m.group(1)) if m else None
        wheres.append(where)
        now = time.monotonic()
        values = D.host_values(model, got)
        rec = {"image": i, "prediction": int(np.argmax(values)), "golden_prediction": int(gold["predictions"][i]),
               "float_prediction": int(gold["float_predictions"][i]), "bit_exact": got == expected[i],
               "inference_cycles": total, "layer_us": us,
               "layer_cycles": [where[k]["cycles"] for k in sorted(where)] if where else None,
               "wall_s": now - state["t"], "outputs": values.tolist()}
        if y is not None:
            rec["label"] = int(gold["labels"][i])
        state["t"] = now
        images.append(rec)
        if say is not None and (i + 1) % 50 == 0:
            say(f"[data] {i + 1} of {n} image(s) done")

    results = await dev.infer_many(image, inputs, model.output_bytes, model.n_layers, timeout=timeout,
                                   model_timeout=max(dev.timeout, 1e-6 * len(image)), each=each)
    layers = []
    if n:
        first_us = results[0][1]
        for op in model.exec_ops:
            if op.layer is not None:
                layers.append(_row(op, first_us[op.layer], sys_clk_freq, peak_macs_per_clock,
                                   wheres[0].get(op.layer) if wheres[0] is not None else None,
                                   programs.get(op.layer), model.config))
    known = bool(n) and wheres[0] is not None
    soc_pred = np.array([r["prediction"] for r in images])
    cycles = [r["inference_cycles"] for r in images if r["inference_cycles"] is not None]
    ds = {"images": n, "model_loads": 1, "output_count": model.io.output_count,
          "bit_exact_images": sum(r["bit_exact"] for r in images),
          "soc_equals_golden": int(np.sum(soc_pred == gold["predictions"])) if n else 0,
          "agreement_golden_float": gold["agreement"],
          "quantisation_error": gold["error"],
          "inference_cycles": {"mean": float(np.mean(cycles)), "min": min(cycles), "max": max(cycles)}
          if cycles else None,
          "wall_s_first_image": images[0]["wall_s"] if n else None,
          "wall_s_per_image": float(np.mean([r["wall_s"] for r in images[1:]])) if n > 1 else None}
    if y is not None and n:
        ds.update(accuracy=float(np.mean(soc_pred == gold["labels"])), golden_accuracy=gold["accuracy"],
                  float_accuracy=gold["float_accuracy"])
    mism = [i for i, r in enumerate(images) if not r["bit_exact"]]
    return {"layers": layers, "output_bytes": model.output_bytes, "bit_exact": not mism,
            "mismatched_bytes": 0 if not mism else
            int(sum(a != b for a, b in zip(results[mism[0]][0], expected[mism[0]]))),
            "float_error": [{"tensor": model.io.output.c2h.name, "max_abs": gold["error"]["max_abs"],
                             "rms": gold["error"]["rms"]}],
            "path": "accelerated (TensorEngine + PCOREs)" if accel else "software (MCORE)",
            "layers_on_accelerator": sum(l["engine"] == "accel" for l in layers) if known else None,
            "layers_in_software": sorted({l for w in wheres if w for l, v in w.items() if v["engine"] == "software"})
            if known else None,
            "require_accel": require_accel,
            "inference_cycles": images[0]["inference_cycles"] if n else None,
            "roofline": {"peak_macs_per_clock": model.config.np * model.config.vw,
                         "bus_bytes_per_clock": roofline.bus_bytes_per_clock(model.config)},
            "dataset": ds, "images": images, "mismatched_images": mism}


def print_dataset(result, say):
    """The data-set summary of run_dataset()."""
    ds, imgs = result["dataset"], result["images"]
    labelled = "accuracy" in ds
    say(f"[data] {'image':>5} {'label':>5} {'float':>5} {'golden':>6} {'SoC':>4} {'bit-exact':>9} {'cycles':>8} "
        f"{'wall (s)':>8}")
    for r in imgs:
        say(f"[data] {r['image']:>5} {r.get('label', '-'):>5} {r['float_prediction']:>5} {r['golden_prediction']:>6} "
            f"{r['prediction']:>4} {'yes' if r['bit_exact'] else 'NO':>9} {r['inference_cycles'] or '-':>8} "
            f"{r['wall_s']:>8.2f}")
    n = ds["images"]
    say(f"[data] {n} image(s) in one simulation, one WModel: outputs bit-exact with the golden model on "
        f"{ds['bit_exact_images']} of {n}; SoC prediction = golden on {ds['soc_equals_golden']} of {n}")
    if labelled:
        say(f"[data] accuracy on these {n}: float {100 * ds['float_accuracy']:.2f}%, golden (fixed point) "
            f"{100 * ds['golden_accuracy']:.2f}%, SoC {100 * ds['accuracy']:.2f}%")
    c = ds["inference_cycles"]
    if c:
        say(f"[data] inference cycles per image (server): mean {c['mean']:.0f}, min {c['min']}, max {c['max']}")
    if ds["wall_s_first_image"] is not None:
        say(f"[data] wall time: first image {ds['wall_s_first_image']:.2f} s (the WModel and the golden model "
            "included)" + (f", then {ds['wall_s_per_image']:.2f} s per image (WTensor, Inference, RTensor, RTimings)"
                           if ds["wall_s_per_image"] is not None else ""))
