"""pyuvm tests of the SoC through its host port (run by `tsoc regress` and
tests/test_regress_*.py through verification/soc/runner.cocotb_test).
Each test is a short class that picks sequences."""

import pyuvm

from verification.uvm import yaml_gen
from verification.uvm.model_traffic import traffic_of
from verification.uvm.env import BaseTest
from verification.uvm.sequences import ErrorInjectionSeq, ModelSeq, RandomTrafficSeq


@pyuvm.test()
class RandomTrafficTest(BaseTest):
    """Constrained-random valid traffic."""

    async def stimulus(self):
        await RandomTrafficSeq("random", self.rng, n=12).start(self.host_seqr)


@pyuvm.test()
class ErrorInjectionTest(BaseTest):
    """Every error injection once, in random order, then random traffic: the
    device flags each error and keeps working."""

    async def stimulus(self):
        await ErrorInjectionSeq("errors", self.rng).start(self.host_seqr)
        await RandomTrafficSeq("after", self.rng, n=4).start(self.host_seqr)


@pyuvm.test()
class ModelTest(BaseTest):
    """YAML models through the host protocol: a layer-less one (runs today)
    and a random layered one (BAD_MODEL today, see firmware_model.py)."""

    async def stimulus(self):
        seed = self.env.settings["seed"]
        for text, name in ((yaml_gen.layerless_model(seed), f"layerless-{seed}"),
                           (yaml_gen.random_model(seed), f"random-{seed}")):
            await ModelSeq(name, traffic_of(text, name), self.rng, inferences=2).start(self.host_seqr)


@pyuvm.test()
class MixedTest(BaseTest):
    """Models, errors and random traffic interleaved."""

    async def stimulus(self):
        seed = self.env.settings["seed"]
        await ModelSeq("layerless", traffic_of(yaml_gen.layerless_model(seed), f"layerless-{seed}"),
                       self.rng).start(self.host_seqr)
        await ErrorInjectionSeq("errors", self.rng, kinds=self.rng.sample(ErrorInjectionSeq.KINDS, 5)
                                ).start(self.host_seqr)
        await RandomTrafficSeq("random", self.rng, n=6).start(self.host_seqr)
        await ModelSeq("layered", traffic_of(yaml_gen.random_model(seed + 1000), f"random-{seed + 1000}"),
                       self.rng).start(self.host_seqr)
