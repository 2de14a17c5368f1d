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


async def run_model(dev, model, sys_clk_freq, peak_macs_per_clock, timeout=2.0):
    """Runs ``model`` on the device; returns a result dict (per-layer times,
    MACs, outputs compared with the golden model)."""
    from sw.model.compiler import compile_model
    from verification.golden.cnn import dequantize
    g, inp, expected = golden_io(model)
    await dev.write_model(compile_model(model))
    await dev.write_tensor(inp)
    await dev.infer(timeout=timeout)
    got = await dev.read_tensor(model.output_bytes)
    times_us = await dev.timings(model.n_layers)
    layers = []
    for op in model.exec_ops:
        if op.layer is None:
            continue
        us = times_us[op.layer]
        cycles = us * sys_clk_freq / 1e6
        macs = layer_macs(op)
        layers.append({"layer": op.layer, "op": op.type_name, "result": op.res.name, "dims": list(op.res.dims),
                       "act": op.act, "us": us, "cycles": round(cycles), "macs": macs,
                       "macs_per_clock": macs / cycles if cycles else 0.0,
                       "peak_macs_per_clock": peak_macs_per_clock if macs else 0})
    mismatches = sum(a != b for a, b in zip(got, expected)) + abs(len(got) - len(expected))
    float_err = []
    for op, fixed, real in g.outputs:
        err = dequantize(fixed, model.frac_bits) - real
        float_err.append({"tensor": op.c2h.name, "max_abs": float(np.max(np.abs(err))),
                          "rms": float(np.sqrt(np.mean(err ** 2)))})
    return {"layers": layers, "output_bytes": len(got), "bit_exact": got == expected,
            "mismatched_bytes": int(mismatches), "float_error": float_err, "path": "software (MCORE)"}


def print_result(result, say):
    say(f"[model] {'layer':<6}{'op':<14}{'result':<18}{'MACs':>10}{'time (us)':>11}{'cycles':>11}{'MACs/clk':>10}")
    for l in result["layers"]:
        say(f"[model] {l['layer']:<6}{l['op']:<14}{l['result']:<18}{l['macs']:>10}{l['us']:>11}{l['cycles']:>11}"
            f"{l['macs_per_clock']:>10.3f}")
    total_macs = sum(l["macs"] for l in result["layers"])
    total_cycles = sum(l["cycles"] for l in result["layers"])
    peak = max((l["peak_macs_per_clock"] for l in result["layers"]), default=0)
    say(f"[model] total {total_macs} MACs in {total_cycles} cycles on the {result['path']} path: "
        f"{total_macs / total_cycles if total_cycles else 0:.3f} MACs/clock (accelerator peak {peak})")
    say(f"[model] outputs vs golden model: {'BIT-EXACT' if result['bit_exact'] else 'MISMATCH'} "
        f"({result['output_bytes']} bytes, {result['mismatched_bytes']} differ)")
    for e in result["float_error"]:
        say(f"[model] quantisation error of {e['tensor']} against the float model: max {e['max_abs']:.4f}, "
            f"rms {e['rms']:.4f}")
