"""`tsoc`: the tensorsoc command line.

Each subsystem contributes its own sub-commands: a module listed in
``COMMAND_MODULES`` defines ``register(groups)``, where ``groups`` maps a group
name to an ``argparse`` sub-parser collection:

* ``groups["top"]``   -- top-level commands (``tsoc mcore ...``, ``tsoc sim``)
* ``groups["bench"]`` -- benchmarks (``tsoc bench te``, ``tsoc bench pcore``)

Each registered parser sets ``func`` (via ``set_defaults``) to a callable that
takes the parsed ``args`` and returns the process exit status.
"""

import argparse
import importlib
import sys

from tensorsoc.spec.errors import UserError

# Modules that add sub-commands.
COMMAND_MODULES = [
    "tensorsoc.commands.soc",
    "tensorsoc.soc.bitstream",
    "tensorsoc.soc.fpga_bench",
    "tensorsoc.soc.netlist_area",
    "tensorsoc.soc.congestion",
    "tensorsoc.soc.logic_depth",
    "tensorsoc.soc.seed_screen",
    "tensorsoc.commands.mcore",
    "tensorsoc.commands.pcore",
    "tensorsoc.commands.host",
    "tensorsoc.commands.model",
    "tensorsoc.verification.te.cli",
    "tensorsoc.verification.regress.cli",
    "tensorsoc.docs",
]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tsoc",
        description="tensorsoc: generate, program, simulate and verify the tensorsoc AI-inference SoC.",
    )
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    bench_parser = top.add_parser("bench", help="benchmarks (cycle-exact, from simulation)")
    bench = bench_parser.add_subparsers(dest="bench", metavar="BENCH")
    bench_parser.set_defaults(func=lambda args: (bench_parser.print_help(), 2)[1])
    groups = {"top": top, "bench": bench}
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(groups)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except UserError as e:
        print(f"tsoc: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
