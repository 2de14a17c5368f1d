"""`tsoc soc ...` and `tsoc sim`: generate and simulate the SoC."""

import sys
import time

from soc.config import DEFAULT, ConfigError


def _config_from_args(args):
    overrides = {}
    for item in args.set or []:
        if "=" not in item:
            from sw.cli import UserError
            raise UserError(f"--set {item!r}: expected FIELD=VALUE (for example np=8)")
        key, value = item.split("=", 1)
        try:
            overrides[key] = int(value, 0)
        except ValueError:
            from sw.cli import UserError
            raise UserError(f"--set {item!r}: {value!r} is not an integer")
    try:
        return DEFAULT.with_overrides(**overrides)
    except ConfigError as e:
        from sw.cli import UserError
        raise UserError(str(e))


def _add_config_args(p):
    p.add_argument("--set", action="append", metavar="FIELD=VALUE",
                   help="override a configuration field of soc/config.py (repeatable), e.g. --set np=8")
    p.add_argument("--build-dir", default=None, help="build folder (default: build/sim)")


def cmd_generate(args):
    from soc.builder import SimBuild, BuildError
    from sw.cli import UserError
    build = SimBuild(_config_from_args(args), args.build_dir)
    try:
        build.generate()
    except BuildError as e:
        raise UserError(str(e))
    print(f"[soc] Verilog: {build.verilog}")
    return 0


def cmd_sim(args):
    from soc.builder import SimBuild, BuildError
    from sw.cli import UserError
    build = SimBuild(_config_from_args(args), args.build_dir)
    t0 = time.monotonic()
    try:
        build.generate()
        build.build_simulator()
    except BuildError as e:
        raise UserError(str(e))
    t1 = time.monotonic()
    print(f"[sim] build: {t1 - t0:.1f} s; running {build.simulator.name}"
          + (f", waveform {args.trace}" if args.trace else ""), flush=True)
    run_dir = None
    if args.preload_server:
        run_dir = build.prepare_run_dir(build.build_dir / "run-preloaded", build.server_image())
        print("[sim] server window preloaded with the RAM-linked firmware (as after WServer + reset)")
    return build.run(max_cycles=args.max_cycles, trace=args.trace, run_dir=run_dir)


def register(groups):
    top = groups["top"]
    p = top.add_parser("soc", help="generate the SoC (headers, firmware, Verilog)")
    sub = p.add_subparsers(dest="soc_command", metavar="SUBCOMMAND")
    g = sub.add_parser("generate", help="write the firmware headers, compile the firmware and write the Verilog")
    _add_config_args(g)
    g.set_defaults(func=cmd_generate)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    s = top.add_parser("sim", help="build the SoC simulation with Verilator and run the firmware",
                       description="Generate the SoC, compile the firmware, build the Verilator simulator "
                                   "(only what changed) and run it until the firmware finishes. Exits with "
                                   "the firmware's status (124 when --max-cycles is reached).")
    _add_config_args(s)
    s.add_argument("--trace", metavar="FILE.fst", help="write an FST waveform (open with GTKWave or Surfer)")
    s.add_argument("--max-cycles", type=int, default=50_000_000,
                   help="stop after this many cycles if the firmware has not finished (0: no limit)")
    s.add_argument("--preload-server", action="store_true",
                   help="start with the RAM-linked firmware in the server window of main RAM, as a WServer "
                        "upload followed by a reset leaves it: the ROM boot code checks and runs it")
    s.set_defaults(func=cmd_sim)
