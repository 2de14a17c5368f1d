"""`tsoc mcore ...` and `tsoc bench mcore`: the MCORE preprocessor's command line."""

import json
import sys

from tensorsoc.spec.errors import UserError

from tensorsoc.sw.mcore import symbols as symbols_mod
from tensorsoc.spec.tensor_isa import c_header


def _symbols(path):
    return symbols_mod.load(path) if path else symbols_mod.empty()


def _defines(items):
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UserError(f"-D {item}: expected NAME=INTEGER")
        try:
            out[name] = int(value, 0)
        except ValueError:
            raise UserError(f"-D {item}: expected NAME=INTEGER") from None
    return out


def read_source(path):
    """The text of an MCORE source; bytes that are not UTF-8 are an error at their line and column."""
    from tensorsoc.sw.mcore.errors import MCoreError
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise MCoreError(f"byte 0x{data[e.start]:02x} is not UTF-8 text", path, line, col, "",
                         "a UTF-8 source (convert it, e.g. iconv -f latin1 -t utf-8)") from None


def cmd_compile(args):
    from tensorsoc.sw.mcore.preprocessor import compile_source
    text = read_source(args.file)
    c = compile_source(text, _symbols(args.symbols), args.file)
    if args.output == "-":
        sys.stdout.write(c)
    else:
        with open(args.output, "w") as f:
            f.write(c)
    return 0


def cmd_expand(args):
    from tensorsoc.verification.golden.expand import expand, table
    records, plans = expand(args.statement, _symbols(args.symbols), _defines(args.define))
    if args.json:
        print(json.dumps(records))
    else:
        print(table(records, plans))
    return 0


def write_header(path):
    """Write the generated C header of the instruction format (``ztam_isa.h``)."""
    with open(path, "w") as f:
        f.write(c_header())


def cmd_header(args):
    if args.output == "-":
        sys.stdout.write(c_header())
    else:
        write_header(args.output)
    return 0


def cmd_bench(args):
    from tensorsoc.sw.mcore.bench import run
    lines, seconds = run(args.lines, args.repeat)
    rate = lines / seconds if seconds > 0 else float("inf")
    print(f"mcore preprocessor: {lines} lines in {seconds:.3f} s ({rate:,.0f} lines/s; "
          f"fastest of {max(1, args.repeat)} runs)")
    if args.max_seconds is not None and seconds >= args.max_seconds:
        print(f"FAIL: {lines} lines took {seconds:.3f} s, more than --max-seconds "
              f"{args.max_seconds:g} (wall clock on this machine; compare runs of one "
              f"machine, not across machines)", file=sys.stderr)
        return 1
    return 0


def register(groups):
    top = groups["top"]
    p = top.add_parser("mcore", help="MCORE preprocessor: tensor statements to C")
    sub = p.add_subparsers(dest="mcore_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    c = sub.add_parser("compile", help="preprocess an MCORE C file into plain C")
    c.add_argument("file")
    c.add_argument("--symbols", metavar="FILE.json", help="PCORE symbol table (docs/pcore_symbols.md)")
    c.add_argument("-o", "--output", required=True, metavar="OUT.c", help="output C file ('-' for stdout)")
    c.set_defaults(func=cmd_compile)

    e = sub.add_parser("expand", help="print the element-by-element mapping of one transfer")
    e.add_argument("statement", help="a transfer, optionally preceded by $variable definitions")
    e.add_argument("--symbols", metavar="FILE.json")
    e.add_argument("-D", "--define", action="append", metavar="NAME=VALUE",
                   help="value of a C variable used in the statement (repeatable)")
    e.add_argument("--json", action="store_true", help="one JSON object per element transferred")
    e.set_defaults(func=cmd_expand)

    h = sub.add_parser("header", help="generate the C header of the tensor-instruction format")
    h.add_argument("-o", "--output", required=True, metavar="FILE.h")
    h.set_defaults(func=cmd_header)

    b = groups["bench"].add_parser("mcore", help="time the MCORE preprocessor on a generated file")
    b.add_argument("--lines", type=int, default=10000, help="lines of the generated MCORE file (default 10000)")
    b.add_argument("--repeat", type=int, default=3,
                   help="preprocess the file this many times and report the fastest (default 3)")
    b.add_argument("--max-seconds", type=float, metavar="S",
                   help="exit 1 when the fastest run takes S seconds or more (wall clock: "
                        "only meaningful on a quiet machine; no limit by default)")
    b.set_defaults(func=cmd_bench)
