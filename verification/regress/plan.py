"""Which tests a regression runs: N tests derived from one seed.

Tests cycle through the pyuvm test classes of verification/uvm/tests.py and
alternate SPI and QPI; each gets its own seed, derived from the regression
seed, so any test re-runs alone from (class, mode, seed)."""

import random
from dataclasses import dataclass

TEST_CLASSES = ("ErrorInjectionTest", "ModelTest", "RandomTrafficTest", "MixedTest")
MODES = ("spi", "qpi")


@dataclass(frozen=True)
class TestSpec:
    test: str
    mode: str
    seed: int

    @property
    def name(self):
        return f"{self.test}-{self.mode}-{self.seed}"

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
            raise ValueError(f"--rerun {key!r}: test must be one of {', '.join(TEST_CLASSES)}, mode spi or qpi")
        return spec


def plan(seed, n, tests=TEST_CLASSES):
    rng = random.Random(f"tsoc-regress-{seed}")
    return [TestSpec(tests[i % len(tests)], MODES[(i + i // len(tests)) % 2],
                     rng.randrange(1, 1 << 31)) for i in range(n)]
