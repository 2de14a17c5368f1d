"""`tsoc soc ...` and `tsoc sim`: generate and simulate the SoC."""

import sys
import time

from tensorsoc.spec.config import DEFAULT
from tensorsoc.spec.errors import UserError

# What `--sdram BOARD` takes from the board besides its SDRAM.
MEMORY_FIELDS = ("main_ram_size", "model_window_size", "tensor_window_size", "server_window_size")


def _sim_build(args):
    """The SimBuild the arguments name (configuration, --sdram, --build-dir)."""
    from tensorsoc.soc.builder import SimBuild, parse_sim_sdram, sim_sdram_board
    from tensorsoc.soc.targets import TARGETS
    base = DEFAULT
    if getattr(args, "sdram", None) and sim_sdram_board(args.sdram):
        # A board's SDRAM comes with the board's main RAM size and host
        # windows (the rest of the configuration stays the simulation's).
        board = TARGETS[sim_sdram_board(args.sdram)].config
        base = DEFAULT.with_overrides(**{f: getattr(board, f) for f in MEMORY_FIELDS})
    config = base.with_settings(args.set)        # a bad --set raises ConfigError, a UserError
    sdram = parse_sim_sdram(args.sdram) if getattr(args, "sdram", None) else None   # BuildError: a UserError
    return SimBuild(config, args.build_dir, sdram=sdram, cpu_variant=getattr(args, "cpu_variant", None) or "standard")


def _add_config_args(p):
    p.add_argument("--set", action="append", metavar="FIELD=VALUE",
                   help="override a configuration field of spec/config.py (repeatable), e.g. --set np=8")
    p.add_argument("--sdram", metavar="BOARD|MODULE[:BITS][,l2=BYTES][,l2_line=BITS]",
                   help="main RAM as SDRAM through LiteDRAM's controller and SDRAM model, with the timings of a "
                        "board's SDRAM (ulx3s, colorlight_i5: module, data width, L2 cache, and the board's main "
                        "RAM and window sizes) or of a litedram.modules module (e.g. MT48LC16M16:16; 32 bits "
                        "unless given), at the SoC clock; l2/l2_line override the L2 cache "
                        "(default: integrated RAM, one access per clock)")
    from tensorsoc.soc.bitstream import CPU_VARIANTS
    p.add_argument("--cpu-variant", choices=CPU_VARIANTS, default="standard",
                   help="the VexRiscv variant, as a board's `tsoc bitstream --cpu-variant` (default standard); "
                        "the firmware is built for it (minimal: rv32i, no caches)")
    p.add_argument("--build-dir", default=None,
                   help="build folder (default: build/sim, build/sim-sdram-NAME with --sdram)")


def cmd_generate(args):
    build = _sim_build(args)
    build.generate()
    print(f"[soc] Verilog: {build.verilog}")
    return 0


def cmd_bench_host(args):
    from tensorsoc.verification.soc import bench_host
    sys_mhz = bench_host.SYS_MHZ
    if args.sys_mhz:
        try:
            sys_mhz = [float(m) for m in args.sys_mhz.split(",") if m.strip()]
        except ValueError:
            raise UserError(f"--sys-mhz {args.sys_mhz!r}: expected MHz values separated by commas, e.g. 50,40") from None
        if not sys_mhz or any(m <= 0 for m in sys_mhz):
            raise UserError(f"--sys-mhz {args.sys_mhz!r}: expected positive MHz values, e.g. 50,40")
    modes = [args.mode] if args.mode else list(bench_host.MODES)
    return bench_host.main(args, build=_sim_build(args), sys_mhz=sys_mhz, modes=modes)


def cmd_sim(args):
    build = _sim_build(args)
    if args.preload_server and build.sdram is not None:
        raise UserError("--preload-server needs integrated main RAM: the SDRAM model is not loaded from a file")
    if args.no_host or args.preload_server:
        return _sim_firmware_only(build, args)
    return _sim_through_host_port(build, args)


def _sim_firmware_only(build, args):
    """The C++ harness: the firmware boots and exits; no host."""
    t0 = time.monotonic()
    build.generate()
    build.build_simulator()
    print(f"[sim] build: {time.monotonic() - t0:.1f} s; running {build.simulator.name} (no host: the firmware "
          f"exits after its boot checks)" + (f", waveform {args.trace}" if args.trace else ""), flush=True)
    run_dir = None
    if args.preload_server:
        run_dir = build.prepare_run_dir(build.build_dir / "run-preloaded", build.server_image())
        print("[sim] server window preloaded with the RAM-linked firmware (as after WServer + reset)")
    from tensorsoc.cores.sim_control import BOOT_FLAG
    flags = (BOOT_FLAG["exit_after_boot"] | (BOOT_FLAG["skip_memtest"] if args.skip_memtest else 0)
             | (BOOT_FLAG["quick_memtest"] if args.quick_memtest else 0))
    return build.run(max_cycles=args.max_cycles, trace=args.trace, run_dir=run_dir, boot_flags=flags)


def _dataset_env(args, model):
    """--input/--labels/--count checked against the model before building."""
    from pathlib import Path
    from tensorsoc.sw.model import dataset as D
    try:
        n = len(D.samples(model, D.load_array(args.input, "--input")))
        if args.labels:
            D.labels(D.load_array(args.labels, "--labels", "biu"), n)
    except D.DatasetError as e:
        raise UserError(str(e)) from None
    if args.count is not None and not 1 <= args.count <= n:
        raise UserError(f"--count {args.count}: the data set has {n} image(s)")
    env = {"TSOC_SIM_INPUT": str(Path(args.input).resolve()), "TSOC_SIM_COUNT": str(args.count or 0)}
    if args.labels:
        env["TSOC_SIM_LABELS"] = str(Path(args.labels).resolve())
    return env


def _sim_through_host_port(build, args):
    """cocotb: the host library drives the SPI/QPI pins (verification/soc/sim_main.py)."""
    import xml.etree.ElementTree as ET
    from tensorsoc.soc.builder import BuildError
    from tensorsoc.verification.soc.runner import cocotb_build, cocotb_test
    model_env = {}
    if args.model:
        from pathlib import Path
        model = Path(args.model)
        if not model.is_file():
            raise UserError(f"--model {args.model}: no such file")
        from tensorsoc.sw.model.compiler import compile_report
        from tensorsoc.sw.model.frontend import load_model
        from tensorsoc.sw.model.yamlsrc import ModelError
        try:
            # YAML errors, and with --require-accel a layer the compiler
            # leaves in software, before building anything.
            _, report = compile_report(load_model(model, build.config), require_accel=args.require_accel)
        except ModelError as e:
            raise UserError(str(e))
        if report.dropped:
            print(f"[sim] WARNING: {args.model}: {report.dropped}", flush=True)
        for p in report.software:
            print(f"[sim] WARNING: layer {p.layer} ({p.op.type_name}) compiled for the MCORE software path: "
                  f"{p.reason}", flush=True)
        model_env = {"TSOC_SIM_MODEL": str(model.resolve()),
                     "TSOC_SIM_REQUIRE_ACCEL": "1" if args.require_accel else "0",
                     "TSOC_SIM_SOFTWARE": "0" if args.no_software else "1"}
        if args.input:
            model_env.update(_dataset_env(args, load_model(model, build.config)))
    elif args.require_accel or args.no_software or args.input:
        flag = "--require-accel" if args.require_accel else "--no-baseline" if args.no_software else "--input"
        raise UserError(f"{flag} needs --model FILE.yaml")
    if (args.labels or args.count) and not args.input:
        raise UserError("--labels and --count go with --input X.npy")
    t0 = time.monotonic()
    waves = bool(args.trace)
    print(f"[sim] building the SoC and its simulator{' (with waveforms)' if waves else ''}...", flush=True)
    try:
        runner = cocotb_build(build, waves=waves)
    except BuildError:       # a UserError with its own message
        raise
    except Exception as e:   # the runner's build failed: its log says why
        raise UserError(f"simulator build failed ({e}); see {build.build_dir}/cocotb*/build.log")
    memtest = (", no boot memory test" if args.skip_memtest else
               ", quick boot memory test: every bus check, the random fill over 4 KiB instead of "
               f"{build.config.memtest_size // 1024 or build.config.main_ram_size // 1024} KiB" if args.quick_memtest
               else "")
    print(f"[sim] build: {time.monotonic() - t0:.1f} s; running the firmware with the host on the "
          f"{'QPI' if args.qpi else 'SPI'} port ({args.host_path} host path{memtest})", flush=True)
    results = build.build_dir / "sim_results.xml"
    from tensorsoc.cores.sim_control import BOOT_FLAG
    flags = ((BOOT_FLAG["te_trace"] if args.te_trace else 0) | (BOOT_FLAG["skip_memtest"] if args.skip_memtest else 0)
             | (BOOT_FLAG["quick_memtest"] if args.quick_memtest else 0))
    env = {"TSOC_SIM_QPI": "1" if args.qpi else "0", "TSOC_SIM_BOOT_FLAGS": str(flags),
           "TSOC_HOST_PATH": args.host_path,
           "COCOTB_LOG_LEVEL": "WARNING", "GPI_LOG_LEVEL": "WARNING",
           # pytest's assertion rewriting of every imported module (numpy,
           # LiteX...: about 300) costs ~3 s at each start; the job's
           # checks are in these two.
           "COCOTB_REWRITE_ASSERTION_FILES": "sim_main.py model_job.py"}
    env.update(model_env)
    if args.json:
        from pathlib import Path
        env["TSOC_SIM_JSON"] = str(Path(args.json).resolve())
    try:
        cocotb_test(runner, build, "tensorsoc.verification.soc.sim_main", results, waves=waves, extra_env=env,
                    trace_file=args.trace)
    except SystemExit:
        pass
    except RuntimeError as e:
        print(f"[sim] simulation failed: {e}", file=sys.stderr)
        return 1
    if not results.exists():
        print("[sim] simulation ended without results", file=sys.stderr)
        return 1
    cases = ET.parse(results).getroot().findall(".//testcase")
    failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    if failed or not cases:
        for c in failed:
            node = c.find("failure") if c.find("failure") is not None else c.find("error")
            print(f"[sim] FAILED: {node.get('message', '')}", file=sys.stderr)
        return 1
    if args.trace:
        print(f"[sim] waveform: {args.trace}")
    return 0


def register(groups):
    top = groups["top"]
    p = top.add_parser("soc", help="generate the SoC (headers, firmware, Verilog)")
    sub = p.add_subparsers(dest="soc_command", metavar="SUBCOMMAND")
    g = sub.add_parser("generate", help="write the firmware headers, compile the firmware and write the Verilog")
    _add_config_args(g)
    g.set_defaults(func=cmd_generate)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    s = top.add_parser("sim", help="simulate the SoC in Verilator and talk to it through its SPI port",
                       description="Generate the SoC, compile the firmware, build the Verilator simulator "
                                   "(only what changed), boot the firmware (banner, main-RAM test) and talk "
                                   "to it only through the SPI/QPI host port with the host library: read RID "
                                   "and RSpec and print them decoded; with --model, run a YAML model and "
                                   "compare its outputs with the golden model. Exits 0 when all checks pass. With "
                                   "--no-host, the C++ harness runs the firmware alone until it exits (its "
                                   "status; 124 when --max-cycles is reached).")
    _add_config_args(s)
    s.add_argument("--trace", metavar="FILE.fst", help="write an FST waveform (open with GTKWave or Surfer)")
    s.add_argument("--qpi", action="store_true", help="the host uses QPI (straps MISO low at reset) instead of SPI")
    s.add_argument("--model", metavar="FILE.yaml",
                   help="run this YAML model end to end through the host port and compare it with the golden model")
    s.add_argument("--json", metavar="OUT.json",
                   help="write the results (per layer: where it ran, times, cycles, MACs, roofline; golden "
                        "comparison) as JSON")
    s.add_argument("--require-accel", action="store_true",
                   help="fail when any TENS_CONV/TENS_LIN/TENS_MAXPOOL of --model runs in software: at compile "
                        "time (the compiler's rule, before building) or on the device (the firmware's per-layer "
                        "console lines)")
    s.add_argument("--input", metavar="X.npy",
                   help="--model: a data set (N samples in the model's 'io' layout, e.g. [N, C, H, W] for an imported "
                        "CNN): the model is loaded once (one WModel), then each image runs (WTensor, Inference, "
                        "RTensor, RTimings) and is compared with the golden model; the summary and the JSON give "
                        "outputs, predictions (argmax), accuracy and per-image cycles. No software-path baseline")
    s.add_argument("--labels", metavar="Y.npy", help="--input: N integer labels: float, golden and SoC accuracy")
    s.add_argument("--count", type=int, metavar="N", help="--input: the first N samples only")
    s.add_argument("--no-baseline", "--no-software", dest="no_software", action="store_true",
                   help="--model: run the accelerated image only, not the second inference on the MCORE software "
                        "path (the speedup baseline and second bit-exact check: most of a run's cycles); the "
                        "table then has no software cycles or speedup. make sim keeps the baseline (and a quick boot "
                        "memory test) because its report shows the speedup. --no-software is the old name")
    s.add_argument("--te-trace", action="store_true",
                   help="the firmware wraps each accelerated layer in LOG_ON/LOG_OFF and prints the TensorEngine's "
                        "activity report (docs/tensor_engine.md, trace) on the console")
    s.add_argument("--host-path", choices=("fast", "pins"), default="fast",
                   help="fast (default): a simulated SPI/QPI master puts the host's transactions on the port's "
                        "pins, Python is woken once per 256-byte chunk; pins: Python drives the pins at every "
                        "SCLK edge (the protocol tests' host; 20-50x slower). Same waveform, same device, "
                        "same results (docs/host_port.md, 'Host paths')")
    s.add_argument("--skip-memtest", action="store_true",
                   help="the firmware skips its boot-time main RAM test (about 2.4M cycles at 16 MiB, a boot "
                        "flag)")
    s.add_argument("--quick-memtest", action="store_true",
                   help="the boot-time main RAM test with all its bus checks (data lines, every address line, "
                        "byte lanes) but its random fill over 4 KiB instead of memtest_size (256 KiB): about "
                        "60k cycles instead of 2.4M (a boot flag; make sim's default, MEMTEST=full for the "
                        "whole test)")
    s.add_argument("--no-host", action="store_true",
                   help="run the firmware alone in the fast C++ harness (exits after the boot checks)")
    s.add_argument("--max-cycles", type=int, default=50_000_000,
                   help="--no-host: stop after this many cycles if the firmware has not finished (0: no limit)")
    s.add_argument("--preload-server", action="store_true",
                   help="(implies --no-host) start with the RAM-linked firmware in the server window of main RAM, "
                        "as a WServer upload followed by a reset leaves it: the ROM boot code checks and runs it")
    s.set_defaults(func=cmd_sim)

    b = groups["bench"].add_parser("host", help="host link: WTensor rate and the SoC:SCLK clock ratio needed",
                                   description="Simulates the host port at SCLK 50 MHz in SPI and QPI with the "
                                               "SoC clock swept, and reports the WTensor rate and the lowest "
                                               "clock ratio at which all host-port checks pass. With --sdram, "
                                               "main RAM is the board's SDRAM behind LiteDRAM, so the WTensor "
                                               "and the writes meet its latency (timings in clocks of "
                                               "sys_clk_freq, kept across the sweep).")
    b.add_argument("--json", metavar="FILE", help="write the measurements as JSON")
    b.add_argument("--sys-mhz", metavar="MHZ[,MHZ]",
                   help="SoC clocks to sweep (default: 100,75,62.5,50,40,33.3,25)")
    b.add_argument("--mode", choices=("SPI", "QPI"), help="one link mode only (default: both)")
    _add_config_args(b)
    b.set_defaults(func=cmd_bench_host)
