"""Which tests a regression runs: N tests derived from one seed.

Tests cycle through the pyuvm test classes of verification/uvm/tests.py and
alternate SPI and QPI; each gets its own seed, derived from the regression
seed, so any test re-runs alone from (class, mode, seed).  The first four
classes come first, so a short tier (N=4) runs one of each of them.  Every
MSB_EVERY-th test runs on the SoC built with the MSB-first bit-order option
(modes spi-msb, qpi-msb).  The k-th SweepTest gets a seed congruent to k
modulo the number of sweep slices, so consecutive SweepTests cover
consecutive slices of the model-op bins."""

import random
from dataclasses import dataclass

from verification.uvm.coverage import SWEEP_SLICES

TEST_CLASSES = ("ErrorInjectionTest", "ModelTest", "RandomTrafficTest", "MixedTest", "SweepTest", "CornerTest")
MODES = ("spi", "qpi", "spi-msb", "qpi-msb")
MSB_EVERY = 8


@dataclass(frozen=True)
class TestSpec:
    test: str
    mode: str
    seed: int

    @property
    def name(self):
        return f"{self.test}-{self.mode}-{self.seed}"

    @property
    def qpi(self):
        return self.mode.startswith("qpi")

    @property
    def msb_first(self):
        return self.mode.endswith("-msb")

    @property
    def key(self):
        """What --rerun takes."""
        return f"{self.test}/{self.mode}/{self.seed}"

    @classmethod
    def parse(cls, key):
        try:
            test, mode, seed = key.split("/")
            spec = cls(test, mode.lower(), int(seed))
        except ValueError:
            raise ValueError(f"--rerun {key!r}: expected TEST/MODE/SEED, e.g. ModelTest/spi/12345") from None
        if spec.test not in TEST_CLASSES or spec.mode not in MODES:
            raise ValueError(f"--rerun {key!r}: test must be one of {', '.join(TEST_CLASSES)}, "
                             f"mode one of {', '.join(MODES)}")
        return spec


def plan(seed, n, tests=TEST_CLASSES):
    rng = random.Random(f"tsoc-regress-{seed}")
    specs, sweeps = [], 0
    for i in range(n):
        test = tests[i % len(tests)]
        mode = MODES[(i + i // len(tests)) % 2] + ("-msb" if i % MSB_EVERY == MSB_EVERY - 1 else "")
        s = rng.randrange(1, 1 << 31)
        if test == "SweepTest":
            s += (sweeps - s) % SWEEP_SLICES
            sweeps += 1
        specs.append(TestSpec(test, mode, s))
    return specs
