"""Which tests a regression runs: N tests derived from one seed.

Tests cycle through the pyuvm test classes of verification/uvm/tests.py and
alternate SPI and QPI; each gets its own seed, derived from the regression
seed, so any test re-runs alone from (class, mode, seed).  The first four
classes come first, so a short tier (N=4) runs one of each of them.  Every
MSB_EVERY-th test runs on the SoC built with the MSB-first bit-order option
(modes spi-msb, qpi-msb).  The k-th SweepTest gets a seed congruent to k
modulo the number of sweep slices, so consecutive SweepTests cover
consecutive slices of the model-op bins.

Each test has a tier and a host path (TSOC_HOST_PATH): protocol tests drive
the host port's pins; model tests take the fast host path, except every
MODEL_PINS_EVERY-th model test, which runs them at pin level too."""

import random
from dataclasses import dataclass

from tensorsoc.verification.uvm.coverage import SWEEP_SLICES

TEST_CLASSES = ("ErrorInjectionTest", "ModelTest", "RandomTrafficTest", "MixedTest", "SweepTest", "CornerTest")
MODES = ("spi", "qpi", "spi-msb", "qpi-msb")
MSB_EVERY = 8
PROTOCOL_TESTS = ("ErrorInjectionTest", "RandomTrafficTest", "CornerTest")
MODEL_TESTS = ("ModelTest", "SweepTest", "MixedTest")
HOST_PATHS = ("pins", "fast")
MODEL_PINS_EVERY = 4
# Wall time of each class relative to a ModelTest, roughly (seed 1, N=100,
# on 2 cores, 2026-11-24: CornerTest 20-37 s, ErrorInjectionTest 13-23 s,
# SweepTest, RandomTrafficTest and MixedTest 7-24 s, ModelTest about 6 s on
# the fast path).  The regression starts the costliest tests first, so that
# a long test does not start last and hold the whole run.
RELATIVE_COST = {"CornerTest": 5, "ErrorInjectionTest": 3, "SweepTest": 2, "RandomTrafficTest": 2,
                 "MixedTest": 2, "ModelTest": 1}


def default_host_path(test):
    return "pins" if test in PROTOCOL_TESTS else "fast"


@dataclass(frozen=True)
class TestSpec:
    test: str
    mode: str
    seed: int
    host_path: str = None           # None: the class's default (default_host_path)

    def __post_init__(self):
        if self.host_path is None:
            object.__setattr__(self, "host_path", default_host_path(self.test))

    @property
    def tier(self):
        return "protocol" if self.test in PROTOCOL_TESTS else "model"

    @property
    def _path_suffix(self):
        """The host path, only where it is not the class's default."""
        return "" if self.host_path == default_host_path(self.test) else self.host_path

    @property
    def name(self):
        return f"{self.test}-{self.mode}-{self.seed}" + (f"-{self._path_suffix}" if self._path_suffix else "")

    @property
    def qpi(self):
        return self.mode.startswith("qpi")

    @property
    def msb_first(self):
        return self.mode.endswith("-msb")

    @property
    def key(self):
        """What --rerun takes: TEST/MODE/SEED, and /HOST_PATH where it is not the class's default."""
        return f"{self.test}/{self.mode}/{self.seed}" + (f"/{self._path_suffix}" if self._path_suffix else "")

    @classmethod
    def parse(cls, key):
        try:
            test, mode, seed, *path = key.split("/")
            if len(path) > 1:
                raise ValueError
            spec = cls(test, mode.lower(), int(seed), *(p.lower() for p in path))
        except ValueError:
            raise ValueError(f"--rerun {key!r}: expected TEST/MODE/SEED[/HOST_PATH], e.g. ModelTest/spi/12345 "
                             "or ModelTest/spi/12345/pins") from None
        if spec.test not in TEST_CLASSES or spec.mode not in MODES or spec.host_path not in HOST_PATHS:
            raise ValueError(f"--rerun {key!r}: test must be one of {', '.join(TEST_CLASSES)}, "
                             f"mode one of {', '.join(MODES)}, host path one of {', '.join(HOST_PATHS)}")
        return spec


def plan(seed, n, tests=TEST_CLASSES):
    rng = random.Random(f"tsoc-regress-{seed}")
    specs, sweeps, models = [], 0, 0
    for i in range(n):
        test = tests[i % len(tests)]
        mode = MODES[(i + i // len(tests)) % 2] + ("-msb" if i % MSB_EVERY == MSB_EVERY - 1 else "")
        s = rng.randrange(1, 1 << 31)
        if test == "SweepTest":
            s += (sweeps - s) % SWEEP_SLICES
            sweeps += 1
        path = None
        if test in MODEL_TESTS:
            path = "pins" if models % MODEL_PINS_EVERY == MODEL_PINS_EVERY - 1 else "fast"
            models += 1
        specs.append(TestSpec(test, mode, s, path))
    return specs


def priorities(specs):
    """Dask task priorities (higher starts first): the costliest class
    first, and in plan order within a class."""
    return [RELATIVE_COST[s.test] * len(specs) - i for i, s in enumerate(specs)]
