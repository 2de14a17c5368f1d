"""H2C data sources: where the values of a streamed tensor come from.

* ``rand_gauss`` or ``rand_gauss(mean, std)``: normal values (default mean 0,
  std 1; |mean| and std at most 32768, the int16 range, beyond which every value
  saturates and the float reference overflows), reproducible: the generator is seeded with the model's ``seed`` and
  the CRC-32 of ``sequence/tensor``, so a tensor's values do not change when
  other tensors are added or reordered.
* ``lin_index``: the raw int16 values 0, 1, 2, ... in stream order (wrapping
  at 32767 -> -32768): the real values are ``index * 2**-frac_bits``.
* ``file.csv\\line_name``: the CSV line whose first cell is ``line_name``; the
  other cells are real numbers in stream order.  The file is resolved relative
  to the YAML file's folder.
* ``file.npy``: a numpy array file (``np.save``) whose values, in C order, are
  real numbers in stream order (any shape with that many elements);
  ``file.npy\\N``: row N of the array's first axis (one sample of a data
  set).  Resolved like a CSV file; read without pickle.

Real values are quantised to Q.frac by ``tensorsoc.sw.model.quant.quantize`` (the
rule of ``tensorsoc.spec.numbers``).
Every source yields exactly the elements the host sends (stream order: the
tensor's memory order without padded lanes).
"""

import csv
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tensorsoc.sw.model.quant import quantize

_GAUSS = re.compile(r"^rand_gauss\s*(?:\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\))?$")
_CSV = re.compile(r"^(?P<file>[^\\]+\.csv)\\(?P<line>.+)$")
_NPY = re.compile(r"^(?P<file>[^\\]+\.npy)(?:\\(?P<row>.*))?$")


GAUSS_LIMIT = 32768.0           # |mean| and std of rand_gauss: the int16 range at frac_bits 0


class SourceError(ValueError):
    """Message without location: the caller adds sequence, op and field."""


@dataclass(frozen=True)
class Source:
    kind: str                    # "rand_gauss", "lin_index", "csv", "npy"
    mean: float = 0.0
    std: float = 1.0
    file: str = ""
    line_name: str = ""
    row: int = None              # npy: row of the first axis (None: the whole array)

    def __str__(self):
        if self.kind == "rand_gauss":
            return f"rand_gauss({self.mean:g}, {self.std:g})"
        if self.kind == "csv":
            return f"{self.file}\\{self.line_name}"
        if self.kind == "npy":
            return self.file + (f"\\{self.row}" if self.row is not None else "")
        return self.kind


def parse(text):
    text = text.strip()
    if text == "lin_index":
        return Source("lin_index")
    m = _GAUSS.match(text)
    if m:
        if m.group(1) is None:
            return Source("rand_gauss")
        try:
            mean, std = float(m.group(1)), float(m.group(2))
        except ValueError:
            raise SourceError(f"rand_gauss(mean, std) needs two numbers, got {text!r}") from None
        if not (math.isfinite(mean) and math.isfinite(std)) or std < 0:
            raise SourceError(f"rand_gauss(mean, std) needs a finite mean and std >= 0, got {text!r}")
        if abs(mean) > GAUSS_LIMIT or std > GAUSS_LIMIT:
            raise SourceError(f"rand_gauss(mean, std) needs |mean| and std at most {GAUSS_LIMIT:g} (the int16 range; "
                              f"larger values all saturate), got {text!r}")
        return Source("rand_gauss", mean, std)
    m = _CSV.match(text)
    if m:
        return Source("csv", file=m.group("file").strip(), line_name=m.group("line").strip())
    m = _NPY.match(text)
    if m:
        row = m.group("row")
        if row is not None and not re.fullmatch(r"\s*\d+\s*", row):
            raise SourceError(f"{text!r}: after file.npy\\ expected a row number (0, 1, ...), got {row!r}")
        return Source("npy", file=m.group("file").strip(), row=None if row is None else int(row))
    raise SourceError(f"unknown data source {text!r}: expected rand_gauss, rand_gauss(mean, std), "
                      "lin_index, file.csv\\line_name, file.npy or file.npy\\row")


class CsvCache:
    """CSV files of one model, each read once: {line_name: (line, cells)}."""

    def __init__(self, base_dir):
        self.base_dir = Path(base_dir)
        self.files = {}

    def line(self, file, name):
        path = self.base_dir / file
        if path not in self.files:
            if not path.is_file():
                raise SourceError(f"CSV file {file!r} not found (looked in {self.base_dir})")
            lines = {}
            try:
                with open(path, newline="") as f:
                    reader = csv.reader(f)
                    for row in reader:
                        lineno = f"{path.name}:{reader.line_num}"
                        if row and row[0].strip() and not row[0].lstrip().startswith("#"):
                            lines.setdefault(row[0].strip(), (lineno, row[1:]))
            except (OSError, UnicodeDecodeError, csv.Error) as e:
                raise SourceError(f"CSV file {file!r} cannot be read: {e}") from None
            self.files[path] = lines
        lines = self.files[path]
        if name not in lines:
            known = ", ".join(sorted(lines)[:8]) or "none"
            raise SourceError(f"CSV file {file!r} has no line named {name!r} (lines: {known})")
        return lines[name]


class NpyCache:
    """.npy files of one model, each read once (without pickle)."""

    def __init__(self, base_dir):
        self.base_dir = Path(base_dir)
        self.files = {}

    def array(self, file):
        path = self.base_dir / file
        if path not in self.files:
            if not path.is_file():
                raise SourceError(f"npy file {file!r} not found (looked in {self.base_dir})")
            try:
                arr = np.load(path, allow_pickle=False)
            except (OSError, ValueError, EOFError) as e:
                raise SourceError(f"npy file {file!r} cannot be read as a numpy array (np.save format): {e}") from None
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
                what = getattr(arr, "dtype", type(arr).__name__)
                raise SourceError(f"npy file {file!r} holds {what} values; expected real numbers "
                                  "(a float, integer or boolean array)")
            self.files[path] = arr
        return self.files[path]


def npy_values(src, n, cache):
    """The ``n`` real values of an npy source, C order."""
    arr = cache.array(src.file)
    what = f"npy file {src.file!r} (shape {list(arr.shape)})"
    if src.row is not None:
        if arr.ndim < 1 or src.row >= arr.shape[0]:
            rows = arr.shape[0] if arr.ndim else 0
            raise SourceError(f"{what} has no row {src.row}: rows 0..{rows - 1}")
        arr, what = arr[src.row], f"row {src.row} of {what}"
    if arr.size != n:
        raise SourceError(f"{what} has {arr.size} values, the stream needs {n}")
    real = np.asarray(arr, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(real)):
        bad = int(np.flatnonzero(~np.isfinite(real))[0])
        raise SourceError(f"{what}: value {bad} (C order) is not finite ({real[bad]})")
    return real


def values(src, n, frac, seed, key, csv_cache, npy_cache=None):
    """``n`` host-side elements: (raw int64 Q.frac values, real float64 values)."""
    if src.kind == "lin_index":
        raw = (np.arange(n, dtype=np.int64) + 32768) % 65536 - 32768
        return raw, raw / float(1 << frac)
    if src.kind == "rand_gauss":
        rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
        real = rng.normal(src.mean, src.std, n)
    elif src.kind == "npy":
        real = npy_values(src, n, npy_cache or NpyCache(csv_cache.base_dir))
    else:
        where, cells = csv_cache.line(src.file, src.line_name)
        cells = [c.strip() for c in cells]
        while cells and cells[-1] == "":
            cells.pop()
        if len(cells) != n:
            raise SourceError(f"{where}: line {src.line_name!r} has {len(cells)} values, the stream needs {n}")
        try:
            real = np.array([float(c) for c in cells], dtype=np.float64)
        except ValueError as e:
            raise SourceError(f"{where}: line {src.line_name!r}: {e}") from None
        if not np.all(np.isfinite(real)):
            raise SourceError(f"{where}: line {src.line_name!r} holds a value that is not finite")
    return quantize(real, frac), real
