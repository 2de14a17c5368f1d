"""``tsoc bench te``: elements per clock of each TensorEngine transfer kind
against its peak (Verilator, stand-alone engine with the default geometry).
``tsoc bench layers``: a model's accelerator layer programs on the engine and
the real PCORE array (verification/te/test_layers.py): clocks and MACs per
clock per layer, without the MCORE.
``tsoc te trace RAW``: a LOG_ON activity trace dump as a Perfetto trace or the
programmer guide's report (sw/te_trace.py)."""

import json
import tempfile
from pathlib import Path

BENCH_DDR_BYTES = 64 * 1024
LAYER_DDR_BYTES = 2 * 1024 * 1024     # the raw and the arranged weights of examples/wide_cnn.yaml
LAYER_MODELS = ("examples/cnn_instructions.yaml", "examples/bench/layer_bench.yaml", "examples/bench/tiling_bench.yaml")
LAYER_TARGET = 0.70          # issue 7: conv and linear layers at 70% of the peak MACs per clock


def run_bench(config=None, classic_bus=False):
    from tensorsoc.spec.config import SoCConfig
    from tensorsoc.verification.te.run import run
    config = config or SoCConfig()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        tests, fails, results = run(config, module="tensorsoc.verification.te.test_bench", ddr_bytes=BENCH_DDR_BYTES,
                                    extra_env={"TSOC_TE_BENCH_JSON": str(out)}, quiet=True,
                                    array="classic-bus" if classic_bus else "model")
        if fails or not out.exists():
            raise RuntimeError(f"the TensorEngine bench failed: see {results}")
        rep = json.loads(out.read_text())
        rep["bus"] = "classic (no bursts)" if classic_bus else "incremental bursts"
        return rep


def format_report(rep):
    c = rep["config"]
    kw = max([len("transfer")] + [len(r["kind"]) for r in rep["rows"]])
    lines = [f"TensorEngine transfers, NP={c['np']} NT={c['nt']} VW={c['vw']}, 32-bit DDR bus "
             f"({rep.get('bus', 'incremental bursts')}: LiteX wishbone.SRAM)",
             f"{'transfer':<{kw}} {'path':<7} {'elements':>8} {'clocks':>7} {'elem/clk':>8} {'peak':>5} {'of peak':>7} "
             f"{'target':>6}"]
    for r in rep["rows"]:
        ok = "ok" if r["of_peak"] >= r["target"] else "BELOW"
        lines.append(f"{r['kind']:<{kw}} {r.get('path', '?'):<7} {r['elements']:>8} {r['clocks']:>7} {r['per_clock']:>8.2f} {r['peak']:>5g} "
                     f"{100 * r['of_peak']:>6.0f}% {100 * r['target']:>5.0f}% {ok}")
    return "\n".join(lines)


def cmd_bench(args):
    rep = run_bench(classic_bus=args.classic_bus)
    print(format_report(rep))
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    return 0


def run_layers(models=LAYER_MODELS, config=None, progress=print):
    """{"np", "nt", "vw", "peak", "models": [{"model", "layers": [...]}]} for
    the accelerator programs of each model (see test_layers.py for a row's
    fields).  Raises RuntimeError when a layer is not bit-exact or the
    engine flags an error."""
    from tensorsoc.spec.config import SoCConfig
    from tensorsoc.verification.te.run import run
    from tensorsoc.verification.te.top import REPO
    from tensorsoc.sw.model.frontend import load_model
    config = config or SoCConfig()
    rep = {"np": config.np, "nt": config.nt, "vw": config.vw, "peak": config.np * config.vw,
           "round_share": config.pcore_round_share, "models": []}
    paths = []
    for model in models:
        path = Path(model) if Path(model).is_absolute() else (Path.cwd() / model)
        if not path.exists() and (REPO / model).exists():
            path = REPO / model
        if not path.exists():
            raise FileNotFoundError(f"{model}: no such model file")
        # (a model that breaks a rule at this configuration, e.g. its stream padding at another VW, fails here,
        # before any simulation, with its file, line and field, not as a simulation that did not finish)
        load_model(path, config)
        paths.append(path)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (model, path) in enumerate(zip(models, paths)):
            progress(f"[bench] {path.name}: running its layer programs ({i + 1}/{len(models)}; "
                     "the first run builds the engine + PCORE array, about a minute)")
            out = Path(tmp) / f"layers{i}.json"
            tests, fails, results = run(config, module="tensorsoc.verification.te.test_layers", ddr_bytes=LAYER_DDR_BYTES,
                                        array="real", quiet=True,
                                        extra_env={"TSOC_LAYER_MODEL": str(path), "TSOC_LAYER_JSON": str(out)})
            if not out.exists():
                raise RuntimeError(f"{model}: the layer bench did not finish: see {results}")
            m = json.loads(out.read_text())
            m["model"] = model
            rep["models"].append(m)
            if fails:
                bad = [r["layer"] for r in m["layers"] if "clocks" in r and (r["errors"] or not r["bit_exact"])]
                raise RuntimeError(f"{model}: layers {bad} differ from the golden model or flagged an engine "
                                   f"error: see {results}")
    return rep


def format_layers(rep, config=None):
    """The per-layer table, then each layer's roofline (sw/model/roofline.py)."""
    from tensorsoc.sw.model import roofline
    share = f", one rounding shifter per {rep['round_share']} lanes" if rep.get("round_share", 1) > 1 else ""
    lines = [f"Accelerator layer programs on the TensorEngine + PCORE array (NP={rep['np']} NT={rep['nt']} "
             f"VW={rep['vw']}{share}, peak {rep['peak']} MACs/clock), clocks from the first instruction word to the "
             "layer's CALLBACK, without the MCORE; nz of peak: the MACs without the padding to VW (zero weights, "
             "stream-padded input lanes)",
             f"{'model':<26} {'layer':>5} {'op':<8} {'MACs':>8} {'clocks':>7} {'MACs/clk':>8} {'of peak':>7} "
             f"{'nz of peak':>10} {'passes':>6} {'transfers':>9}  result"]
    for m in rep["models"]:
        for r in m["layers"]:
            name = Path(m["model"]).name
            if "clocks" not in r:
                lines.append(f"{name:<26} {r['layer']:>5} {r['kind']:<8} SOFTWARE (no accelerator program): "
                             f"{r['software']}")
                continue
            nz = (r.get("roofline") or {}).get("nonzero_of_peak")
            nz = f"{100 * nz:>9.1f}%" if nz is not None and r["macs"] else f"{'-':>10}"
            lines.append(f"{name:<26} {r['layer']:>5} {r['kind']:<8} {r['macs']:>8} {r['clocks']:>7} "
                         f"{r['macs_per_clock']:>8.2f} {100 * r['of_peak']:>6.1f}% {nz} {r['passes']:>6} "
                         f"{r['transfers']:>4} ({r['vector_transfers']} vec)  "
                         f"{'bit-exact' if r['bit_exact'] else 'MISMATCH'}")
    rows = [(m, r) for m in rep["models"] for r in m["layers"] if "roofline" in r]
    if rows:
        if config is None:
            from types import SimpleNamespace
            config = SimpleNamespace(np=rep["np"], vw=rep["vw"], te_bus_bytes=rows[0][1]["roofline"]["bus_bytes_per_clock"])
        lines += ["", roofline.legend(config),
                  f"{'model':<26} {'layer':>5} {'op':<8} {roofline.header()}"]
        for m, r in rows:
            lines.append(f"{Path(m['model']).name:<26} {r['layer']:>5} {r['kind']:<8} "
                         f"{roofline.row(roofline.Roofline.from_dict(r['roofline']))}")
    return "\n".join(lines)


def software_layers(rep):
    """[(model, layer, kind, reason)] of the layers without an accelerator program."""
    return [(m["model"], r["layer"], r["kind"], r["software"]) for m in rep["models"] for r in m["layers"]
            if "clocks" not in r]


def cmd_bench_layers(args):
    from tensorsoc.spec.errors import UserError
    from tensorsoc.spec.config import DEFAULT
    from tensorsoc.sw.model.yamlsrc import ModelError
    config = DEFAULT.with_settings(args.set)       # a bad --set is a ConfigError, a UserError
    if args.trace and not config.te_trace_depth:
        # (the engine records nothing: each layer's report would be empty)
        raise UserError(f"--trace {args.trace}: this configuration has no activity trace buffer "
                        "(te_trace_depth=0); drop --set te_trace_depth=0 or give it a depth, "
                        "e.g. --set te_trace_depth=256, the default")
    try:
        rep = run_layers(args.models or LAYER_MODELS, config)
    except (FileNotFoundError, ModelError) as e:
        raise UserError(str(e))
    print(format_layers(rep))
    soft = software_layers(rep)
    if args.require_accel and soft:
        raise UserError("--require-accel: " + "; ".join(f"{m} layer {l} ({k}) has no accelerator program: {why}"
                                                        for m, l, k, why in soft))
    if args.trace:
        d = Path(args.trace)
        d.mkdir(parents=True, exist_ok=True)
        for m in rep["models"]:
            for r in m["layers"]:
                if "trace" in r:
                    f = d / f"{Path(m['model']).stem}_layer{r['layer']}.txt"
                    f.write_text(r["trace"])
        print(f"{d}: the activity trace of every layer (the programmer guide's report)")
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    return 0


def cmd_trace(args):
    from tensorsoc.sw import te_trace
    from tensorsoc.spec.errors import UserError
    try:
        raw = Path(args.raw).read_text()
    except OSError as e:
        raise UserError(f"{args.raw}: {e.strerror}")
    try:
        words = te_trace.parse_raw(raw)
    except ValueError as e:
        raise UserError(f"{args.raw}: expected hex words (as te_trace_raw() prints them): {e}")
    records = te_trace.decode(words)
    if args.clock_hz is None:
        from tensorsoc.spec.config import SoCConfig
        args.clock_hz = SoCConfig().sys_clk_freq
    if not records:
        raise UserError(f"{args.raw}: no trace records (the first word has no valid bit 31)")
    if args.text:
        print(te_trace.text(records), end="")
    out = args.output or (None if args.text else str(Path(args.raw).with_suffix(".json")))
    if out:
        Path(out).write_text(json.dumps(te_trace.perfetto(records, args.clock_hz), indent=1) + "\n")
        print(f"{out}: {len(records)} records; open it in https://ui.perfetto.dev")
    return 0


def register(groups):
    te = groups["top"].add_parser("te", help="TensorEngine tools")
    te_cmds = te.add_subparsers(dest="te_command", metavar="TE_COMMAND")
    te.set_defaults(func=lambda args: (te.print_help(), 2)[1])
    trace = te_cmds.add_parser("trace", help="LOG_ON activity trace dump -> Perfetto JSON / the guide's report")
    trace.add_argument("raw", metavar="RAW", help="hex words as te_trace_raw() prints them (info, cycle per record)")
    trace.add_argument("-o", "--output", metavar="FILE", help="Perfetto/Chrome trace JSON (default RAW.json)")
    trace.add_argument("--text", action="store_true", help="print the programmer guide's activity report")
    trace.add_argument("--clock-hz", type=float, default=None,
                       help="engine clock for the time axis (default: the SoC's sys_clk_freq)")
    trace.set_defaults(func=cmd_trace)

    bench = groups["bench"].add_parser("te", help="TensorEngine elements per clock per transfer kind (Verilator)")
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    bench.add_argument("--classic-bus", action="store_true",
                       help="DDR on a Wishbone bus without bursts (LiteX SoCCore's default bus_bursting=False)")
    bench.set_defaults(func=cmd_bench)

    layers = groups["bench"].add_parser(
        "layers", help="a model's accelerator layer programs on the TensorEngine + PCORE array (Verilator)",
        description="Runs each conv/linear/maxpool op's accelerator program (sw/model/accel.py) on the "
                    "TensorEngine with the real PCORE array and a bursting DDR, without the MCORE, checks "
                    "the result against the golden model and prints clocks and MACs per clock against the "
                    "peak (NP x VW), and each layer's roofline: its clocks against the MAC bound (useful MACs "
                    "/ NP x VW) and the DDR bound (bytes it must move / the bus's bytes per clock), useful and "
                    "padded MACs apart (sw/model/roofline.py, docs/models.md).  `make sim` measures the same programs inside the SoC, firmware included.")
    layers.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"YAML models (default: {' '.join(LAYER_MODELS)})")
    layers.add_argument("--json", metavar="FILE", help="also write the figures (with each layer's trace) as JSON")
    layers.add_argument("--trace", metavar="DIR", help="write each layer's activity trace report into DIR (the configuration needs its trace buffer: te_trace_depth > 0)")
    layers.add_argument("--set", action="append", metavar="FIELD=VALUE",
                        help="override a configuration field of spec/config.py (repeatable), e.g. "
                             "--set pcore_round_share=8: the layers are compiled and run for it")
    layers.add_argument("--require-accel", action="store_true",
                        help="fail when a layer has no accelerator program (it would run on the MCORE)")
    layers.set_defaults(func=cmd_bench_layers)
