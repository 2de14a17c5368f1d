"""The TensorEngine activity trace (LOG_ON / LOG_OFF): record format, the
programmer guide's text report (section 11.2.1) and a Chrome/Perfetto trace.

While LOG is on the engine (cores/tensor_engine/trace.py) appends a record for
every event: LOG on/off, a change of the PCORE process-busy bits, the start
and the end of a transfer.  A record is two 32-bit words read from the
``trace_data`` CSR: the *info* word (fields below, bit 31 set) and the cycle
counter at the event.  This module is the one definition of that format: the
gateware, the C printer's header (sw/runtime/te_trace.h, generated block) and
the writers below use it.

``tsoc te trace RAW [-o trace.json] [--text]`` turns a raw dump (hex words, as
``te_trace_raw()`` prints them) into a Perfetto trace or the guide's text.
"""

from dataclasses import dataclass
from typing import List

from tensorsoc.spec import tensor_isa as isa

KINDS = {"LOG_ON": 0, "LOG_OFF": 1, "BUSY": 2, "XFER_START": 3, "XFER_END": 4}
KIND_NAMES = {v: k for k, v in KINDS.items()}

# name, lsb, width, meaning
FIELDS = [
    ("kind", 0, 3, "event: " + ", ".join(f"{v} {k}" for k, v in KINDS.items())),
    ("busy", 3, 2, "PCORE process-busy bits after the event (bit p: a kernel runs on process space p)"),
    ("process", 5, 1, "process space of the transfer"),
    ("dst", 6, 3, "destination memory space (isa.SPACES)"),
    ("src", 9, 3, "source memory space (isa.SPACES)"),
    ("dst_v", 12, 2, "destination vector attribute: log2 of V8/V4/V2/V1"),
    ("dst_x2", 14, 1, "destination X2 (INT16), else X1 (8-bit)"),
    ("src_v", 15, 2, "source vector attribute: log2 of V8/V4/V2/V1"),
    ("src_x2", 17, 1, "source X2 (INT16), else X1"),
    ("scatter", 18, 1, "SCATTER transfer"),
    ("vector", 19, 1, "the transfer ran on the engine's vector path (a memory word per clock)"),
    ("lost", 20, 1, "records were dropped before this one (the buffer was full)"),
    ("valid", 31, 1, "always 1 in a record; a read of an empty buffer returns 0"),
]
FIELD = {name: (lsb, width) for name, lsb, width, _ in FIELDS}
RECORD_WORDS = 2


def field_value(word, name):
    lsb, width = FIELD[name]
    return (word >> lsb) & ((1 << width) - 1)


@dataclass
class Record:
    kind: int
    ts: int
    busy: int = 0
    process: int = 0
    dst: int = 0
    src: int = 0
    dst_v: int = 0
    dst_x2: int = 0
    src_v: int = 0
    src_x2: int = 0
    scatter: int = 0
    vector: int = 0
    lost: int = 0

    @property
    def name(self):
        return KIND_NAMES.get(self.kind, f"kind{self.kind}")

    def words(self):
        info = 1 << FIELD["valid"][0]
        for name, (lsb, width) in FIELD.items():
            if name != "valid":
                info |= (getattr(self, name) & ((1 << width) - 1)) << lsb
        return [info, self.ts & 0xFFFF_FFFF]


def decode(words) -> List[Record]:
    """Records from raw words (info, timestamp pairs); stops at a word without
    the valid bit (the empty-buffer read)."""
    out = []
    for k in range(0, len(words) - 1, RECORD_WORDS):
        info, ts = words[k], words[k + 1]
        if not field_value(info, "valid"):
            break
        out.append(Record(ts=ts, **{n: field_value(info, n) for n in FIELD if n != "valid"}))
    return out


def parse_raw(text):
    """Hex words separated by white space; '#' starts a comment."""
    words = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        words += [int(w, 16) for w in line.split()]
    return words


# -- the guide's text report (section 11.2.1) ----------------------------------

_SHORT = {"DDR": "DDR", "SCRATCH": "SCRATCH", "PCORE_PRIVATE": "PCORE", "PCORE_SHARED": "PCORE", "SPU": "SPU"}
HEADER = ["           XX PP SS PP SS DD", "           01 WR WR WR WR WR"]
# character position of each column after "[%8u] ": busy 0/1, then W/R pairs
COLUMNS = {"busy0": 0, "busy1": 1, "P0W": 3, "P0R": 4, "S0W": 6, "S0R": 7, "P1W": 9, "P1R": 10,
           "S1W": 12, "S1R": 13, "DW": 15, "DR": 16}
WIDTH = 17


def describe(rec):
    """'PCORE V8 X1  <= DDR V8 X1 [SCATTER]', the executor's trace string."""
    def side(space, v, x2):
        return f"{_SHORT[isa.SPACE_NAMES[space]]} V{1 << v} X{2 if x2 else 1}"
    s = f"{side(rec.dst, rec.dst_v, rec.dst_x2)}  <= {side(rec.src, rec.src_v, rec.src_x2)}"
    return s + (" SCATTER" if rec.scatter else "")


def transfer_columns(rec):
    """The write and read columns a transfer occupies."""
    def col(space, kind):
        name = isa.SPACE_NAMES[space]
        if name == "DDR":
            return "D" + kind
        if name == "SCRATCH":
            return f"S{rec.process}{kind}"
        if name.startswith("PCORE"):
            return f"P{rec.process}{kind}"
        return None
    return [c for c in (col(rec.dst, "W"), col(rec.src, "R")) if c]


def text(records):
    """The guide's activity report, one line per event (section 11.2.1)."""
    lines = []
    active = set()
    last = None

    def line(marks, t, desc=""):
        nonlocal last
        cells = [" "] * WIDTH
        for c in active:
            cells[COLUMNS[c]] = "|"
        for c in marks:
            cells[COLUMNS[c]] = "+"
        delta = 0 if last is None else (t - last) & 0xFFFF_FFFF
        last = t
        row = "".join(cells)
        lines.append(f"[{delta:8d}] " + (row + " " + desc if desc else row.rstrip()))

    for r in records:
        if r.kind == KINDS["LOG_ON"]:
            lines += HEADER
            active = {f"busy{p}" for p in range(2) if r.busy >> p & 1}
            last = r.ts
        elif r.kind == KINDS["BUSY"]:
            changed = {f"busy{p}" for p in range(2) if ((r.busy >> p) & 1) != (f"busy{p}" in active)}
            active = (active - changed) | {c for c in changed if r.busy >> int(c[-1]) & 1}
            line(changed, r.ts)
        elif r.kind == KINDS["XFER_START"]:
            cols = transfer_columns(r)
            line(cols, r.ts)
            active |= set(cols)
            line([], r.ts, describe(r))
        elif r.kind == KINDS["XFER_END"]:
            cols = transfer_columns(r)
            active -= set(cols)
            line(cols, r.ts)
        elif r.kind == KINDS["LOG_OFF"]:
            last = None
    return "\n".join(lines) + ("\n" if lines else "")


# -- Chrome / Perfetto trace ----------------------------------------------------

TRACKS = {"kernel0": (1, "PCORE process 0: kernel"), "kernel1": (2, "PCORE process 1: kernel"),
          "xfer0": (3, "process 0: transfers"), "xfer1": (4, "process 1: transfers")}


def perfetto(records, clk_hz=100e6):
    """A Chrome/Perfetto JSON trace (``traceEvents``): one track per PCORE
    process space for its kernels and one per process space for transfers;
    ``ts``/``dur`` in microseconds at ``clk_hz``."""
    us = 1e6 / clk_hz
    events = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "TensorEngine"}}]
    for tid, name in TRACKS.values():
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name", "args": {"name": name}})
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})
    t0 = records[0].ts if records else 0
    busy_since = {}
    xfer = None
    last_t = 0

    def t(r):
        return ((r.ts - t0) & 0xFFFF_FFFF)

    def complete(tid, name, start, end, args):
        events.append({"ph": "X", "pid": 1, "tid": tid, "name": name, "ts": round(start * us, 3),
                       "dur": round((end - start) * us, 3), "args": args})

    busy = 0
    for r in records:
        now = t(r)
        last_t = max(last_t, now)
        new_busy = r.busy if r.kind != KINDS["LOG_OFF"] else 0
        for p in range(2):
            was, is_ = busy >> p & 1, new_busy >> p & 1
            if is_ and not was:
                busy_since[p] = now
            elif was and not is_ and p in busy_since:
                complete(TRACKS[f"kernel{p}"][0], "kernel", busy_since.pop(p), now, {})
        busy = new_busy
        if r.kind == KINDS["XFER_START"]:
            xfer = (r, now)
        elif r.kind == KINDS["XFER_END"] and xfer:
            start_rec, start = xfer
            complete(TRACKS[f"xfer{start_rec.process}"][0], describe(start_rec), start, now,
                     {"dst": isa.SPACE_NAMES[start_rec.dst], "src": isa.SPACE_NAMES[start_rec.src],
                      "path": "vector" if start_rec.vector else "element", "cycles": now - start})
            xfer = None
        if r.lost:
            events.append({"ph": "i", "pid": 1, "tid": TRACKS["xfer0"][0], "name": "records lost", "s": "g",
                           "ts": round(now * us, 3)})
    for p, since in busy_since.items():          # still running at the end of the trace
        complete(TRACKS[f"kernel{p}"][0], "kernel", since, last_t, {"open": True})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"clock_hz": clk_hz, "source": "tensorsoc TensorEngine LOG trace"}}


def markdown_table():
    """The info-word fields as a Markdown table (docs/tensor_engine.md)."""
    rows = ["| field | bits | meaning |", "|---|---|---|"]
    for name, lsb, width, meaning in FIELDS:
        bits = f"{lsb}" if width == 1 else f"{lsb + width - 1}..{lsb}"
        rows.append(f"| `{name}` | {bits} | {meaning} |")
    return "\n".join(rows)


# -- C header (generated block of sw/runtime/te_trace.h) -------------------------

C_BEGIN = "/* BEGIN generated by `python -m tensorsoc.sw.te_trace` from sw/te_trace.py: do not edit */"
C_END = "/* END generated */"


def c_defines():
    lines = [C_BEGIN, f"#define TE_TRACE_RECORD_WORDS {RECORD_WORDS}"]
    for name, lsb, width, meaning in FIELDS:
        n = name.upper()
        lines.append(f"#define TE_TRACE_{n}_LSB {lsb}   /* {meaning} */")
        lines.append(f"#define TE_TRACE_{n}_MASK 0x{(1 << width) - 1:x}u")
    for k, v in KINDS.items():
        lines.append(f"#define TE_TRACE_KIND_{k} {v}")
    for k, v in isa.SPACES.items():
        lines.append(f"#define TE_TRACE_SPACE_{k} {v[0]}")
    lines.append(C_END)
    return "\n".join(lines)


def update_header(path):
    """Rewrite the generated block of the C header; returns True if it changed."""
    from pathlib import Path
    p = Path(path)
    s = p.read_text()
    a, b = s.index(C_BEGIN), s.index(C_END) + len(C_END)
    new = s[:a] + c_defines() + s[b:]
    if new != s:
        p.write_text(new)
    return new != s


def main():
    from pathlib import Path
    header = Path(__file__).resolve().parent / "runtime" / "te_trace.h"
    print(f"{header}: {'updated' if update_header(header) else 'up to date'}")


if __name__ == "__main__":
    main()
