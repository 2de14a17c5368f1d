"""`tsoc pcore asm` and `tsoc bench pcore`."""

import json
from pathlib import Path

from tensorsoc.spec.config import ConfigError, SoCConfig
from tensorsoc.spec.pcore_isa import round_slot_clocks
from tensorsoc.spec.errors import UserError


def _config(args):
    over = {k: v for k, v in (("np", args.np), ("nt", args.nt), ("vw", args.vw),
                              ("pcore_private_words", args.private_words),
                              ("pcore_shared_words", args.shared_words),
                              # (the bench's only: the assembler's output does not depend on it)
                              ("pcore_round_share", getattr(args, "round_share", None))) if v is not None}
    try:
        return SoCConfig().with_overrides(**over)
    except ConfigError as e:
        raise UserError(str(e))


def _config_args(p):
    p.add_argument("--np", type=int, help="number of PCOREs (default from spec/config.py)")
    p.add_argument("--nt", type=int, help="threads per PCORE")
    p.add_argument("--vw", type=int, help="lanes per vector")
    p.add_argument("--private-words", type=int, help="private words per thread and process space")
    p.add_argument("--shared-words", type=int, help="shared words per PCORE and process space")


def _define(text):
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise ValueError(text)
    return name, int(value, 0)


def cmd_asm(args):
    from tensorsoc.sw.pcore.asm import AsmError, assemble
    for f in args.files:
        if not Path(f).is_file():
            raise UserError(f"{f}: no such file")
    try:
        defines = dict(_define(d) for d in args.define)
    except ValueError as e:
        raise UserError(f"-D {e}: expected NAME=INTEGER")
    try:
        prog = assemble(args.files, _config(args), defines)
    except AsmError as e:
        raise UserError(str(e))
    prog.write(args.output, args.symbols)
    if args.listing:
        Path(args.listing).write_text(prog.listing_text())
    print(f"{args.output}: {len(prog.words)} instructions; classes: "
          + ", ".join(f"{c}({', '.join(k.functions)})" for c, k in prog.classes.items()))
    return 0


def cmd_bench(args):
    from tensorsoc.verification.pcore.bench import format_report, run_bench
    rep = run_bench(_config(args))
    print(format_report(rep))
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    if rep["errors"]:
        raise UserError("the bench failed: see above")
    return 0


def register(groups):
    pcore = groups["top"].add_parser("pcore", help="PCORE programs: assembler")
    sub = pcore.add_subparsers(dest="pcore_command", metavar="COMMAND")
    pcore.set_defaults(func=lambda args: (pcore.print_help(), 2)[1])
    asm = sub.add_parser("asm", help="assemble .pcore files into an instruction image and symbol table")
    asm.add_argument("files", nargs="+", metavar="FILE.pcore")
    asm.add_argument("-o", "--output", required=True, metavar="IMAGE",
                     help="instruction image: little-endian 32-bit words (.hex: one hex word per line)")
    asm.add_argument("--symbols", metavar="OUT.json", help="symbol table for the MCORE preprocessor")
    asm.add_argument("--listing", metavar="FILE", help="write a disassembly listing")
    asm.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                     help="override a 'const' of the program")
    _config_args(asm)
    asm.set_defaults(func=cmd_asm)

    bench = groups["bench"].add_parser("pcore", help="MACs per clock of each PCORE kernel (Verilator)")
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    _config_args(bench)
    bench.add_argument("--round-share", type=int,
                       help="lanes per rounding shifter S (SoCConfig.pcore_round_share; above 1 a slot of mul, "
                            f"asr and accr takes more clocks, spec/pcore_isa.py round_slot_clocks: "
                            f"{round_slot_clocks(4)} at S = 4, {round_slot_clocks(8)} at S = 8)")
    bench.set_defaults(func=cmd_bench)
