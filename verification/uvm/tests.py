"""pyuvm tests of the SoC through its host port (run by `tsoc regress` and
tests/test_regress_*.py through verification/soc/runner.cocotb_test).
Each test is a short class that picks sequences."""

import pyuvm

from tensorsoc.verification.uvm.coverage import SWEEP_SLICES, sweep_slice

from tensorsoc.verification.uvm import yaml_gen
from tensorsoc.verification.uvm.model_traffic import traffic_of
from tensorsoc.verification.uvm.env import BaseTest
from tensorsoc.verification.uvm.sequences import ErrorInjectionSeq, ModelSeq, RandomTrafficSeq, ServerUploadSeq


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
    """YAML models through the host protocol: a layer-less one and a random
    layered one, each output compared with the golden model (the firmware
    runs every op, firmware_model.FIRMWARE_RUNS_LAYERS)."""

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


@pyuvm.test()
class SweepTest(BaseTest):
    """Coverage closure of the model-op tables: a model made by
    yaml_gen.sweep_model for one slice of the conv/maxpool window bins (and
    of the activation x bias/batch-norm and lin-layout bins), chosen by the
    seed (slice = seed % coverage.SWEEP_SLICES; the regression plan gives
    consecutive SweepTests consecutive slices)."""

    async def stimulus(self):
        seed = self.env.settings["seed"]
        text = yaml_gen.sweep_model(seed, **sweep_slice(seed % SWEEP_SLICES))
        await ModelSeq(f"sweep-{seed}", traffic_of(text, f"sweep-{seed}"), self.rng).start(self.host_seqr)


@pyuvm.test()
class CornerTest(BaseTest):
    """The longer error injections (resets while idle and with CS_N low,
    every command cut inside a byte, refused while busy and breaking a chunk
    sequence, writes past each window), then a valid server firmware
    uploaded with WServer, which must start and run a model."""

    async def stimulus(self):
        await ErrorInjectionSeq("corners", self.rng, kinds=ErrorInjectionSeq.CORNER_KINDS).start(self.host_seqr)
        await ServerUploadSeq("server upload", self.rng).start(self.host_seqr)
