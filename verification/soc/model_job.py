"""A YAML model run end to end through the host port: compile, golden, then
WModel / WTensor / Inference / RTensor / RTimings, compared with the golden
model bit for bit.  Used by `make sim` (verification/soc/sim_main.py)."""

import numpy as np

from sw.model import layout as L


def layer_macs(op):
    """Multiply-accumulates of a compute op (0 for maxpool)."""
    if op.kind == "conv":
        ho, wo, co = op.res.dims
        kh, kw, ci, _ = op.a.dims
        return ho * wo * co * kh * kw * ci
    if op.kind == "lin":
        n_out, n_in = op.a.dims
        return n_out * n_in * op.res.dims[1]
    return 0


def golden_io(model):
    """(golden run, input bytes, expected output bytes)."""
    from verification.golden.cnn import run
    g = run(model)
    return g, L.host_input(model, g.fixed), L.host_output(model, g.fixed)


async def _infer(dev, image, inp, model, timeout):
    await dev.write_model(image)
    await dev.write_tensor(inp)
    await dev.infer(timeout=timeout)
    got = await dev.read_tensor(model.output_bytes)
    return got, await dev.timings(model.n_layers)


async def run_model(dev, model, sys_clk_freq, peak_macs_per_clock, timeout=2.0, software=True):
    """Runs ``model`` on the device; returns a result dict (per-layer times,
    MACs, outputs compared with the golden model).  With an accelerator in
    the configuration the model runs twice: its image with the accelerator
    section, then (``software``) the same image without it, which the
    firmware runs on its software path: the speedup baseline."""
    from sw.model.compiler import compile_model
    from verification.golden.cnn import dequantize
    g, inp, expected = golden_io(model)
    accel = bool(model.config.accelerator)
    runs = [("accelerated" if accel else "software", compile_model(model, accel=accel))]
    if accel and software:
        runs.append(("software", compile_model(model, accel=False)))
    results = {}
    for name, image in runs:
        results[name] = await _infer(dev, image, inp, model, timeout)
    got, times_us = results[runs[0][0]]
    soft_us = results["software"][1] if "software" in results else None
    layers = []
    for op in model.exec_ops:
        if op.layer is None:
            continue
        us = times_us[op.layer]
        cycles = round(us * sys_clk_freq / 1e6)
        macs = layer_macs(op)
        row = {"layer": op.layer, "op": op.type_name, "result": op.res.name, "dims": list(op.res.dims),
               "act": op.act, "us": us, "cycles": cycles, "macs": macs,
               "macs_per_clock": macs / cycles if cycles else 0.0,
               "peak_macs_per_clock": peak_macs_per_clock if macs else 0,
               "of_peak": macs / cycles / peak_macs_per_clock if cycles and macs else 0.0}
        if soft_us is not None:
            row["software_cycles"] = round(soft_us[op.layer] * sys_clk_freq / 1e6)
            row["speedup"] = row["software_cycles"] / cycles if cycles else 0.0
        layers.append(row)
    def mismatch(b):
        return int(sum(x != y for x, y in zip(b, expected)) + abs(len(b) - len(expected)))
    float_err = []
    for op, fixed, real in g.outputs:
        err = dequantize(fixed, model.frac_bits) - real
        float_err.append({"tensor": op.c2h.name, "max_abs": float(np.max(np.abs(err))),
                          "rms": float(np.sqrt(np.mean(err ** 2)))})
    out = {"layers": layers, "output_bytes": len(got), "bit_exact": all(r[0] == expected for r in results.values()),
           "mismatched_bytes": mismatch(got), "float_error": float_err,
           "path": "accelerated (TensorEngine + PCOREs)" if accel else "software (MCORE)"}
    if soft_us is not None:
        soft_got = results["software"][0]
        out["software"] = {"bit_exact": soft_got == expected, "mismatched_bytes": mismatch(soft_got),
                           "cycles": sum(l["software_cycles"] for l in layers)}
        total = sum(l["cycles"] for l in layers)
        out["speedup"] = out["software"]["cycles"] / total if total else 0.0
    return out


def print_result(result, say):
    soft = "software" in result
    head = f"[model] {'layer':<6}{'op':<14}{'result':<18}{'MACs':>10}{'time (us)':>11}{'cycles':>11}{'MACs/clk':>10}{'of peak':>9}"
    say(head + (f"{'sw cycles':>11}{'speedup':>9}" if soft else ""))
    for l in result["layers"]:
        line = (f"[model] {l['layer']:<6}{l['op']:<14}{l['result']:<18}{l['macs']:>10}{l['us']:>11}{l['cycles']:>11}"
                f"{l['macs_per_clock']:>10.3f}{100 * l['of_peak']:>8.1f}%")
        if soft:
            line += f"{l['software_cycles']:>11}{l['speedup']:>8.1f}x"
        say(line)
    total_macs = sum(l["macs"] for l in result["layers"])
    total_cycles = sum(l["cycles"] for l in result["layers"])
    peak = max((l["peak_macs_per_clock"] for l in result["layers"]), default=0)
    say(f"[model] total {total_macs} MACs in {total_cycles} cycles on the {result['path']} path: "
        f"{total_macs / total_cycles if total_cycles else 0:.3f} MACs/clock (accelerator peak {peak})")
    if soft:
        say(f"[model] software path: {result['software']['cycles']} cycles; speedup of the {result['path']} path "
            f"{result['speedup']:.1f}x")
    say(f"[model] outputs vs golden model: {'BIT-EXACT' if result['bit_exact'] else 'MISMATCH'} "
        f"({result['output_bytes']} bytes, {result['mismatched_bytes']} differ"
        + (f"; software path {result['software']['mismatched_bytes']} differ)" if soft else ")"))
    for e in result["float_error"]:
        say(f"[model] quantisation error of {e['tensor']} against the float model: max {e['max_abs']:.4f}, "
            f"rms {e['rms']:.4f}")
