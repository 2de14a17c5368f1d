"""tensorsoc: an open AI-inference SoC generated from Python.

The installed package maps the checkout's folders under one name:

* ``tensorsoc.spec``         -- the neutral layer: definitions both the product and its checker use (``spec/``)
* ``tensorsoc.soc``          -- the LiteX SoC, its configuration, targets and simulation (``soc/``)
* ``tensorsoc.cores``        -- the gateware cores: TensorEngine, PCORE array, host port (``cores/``)
* ``tensorsoc.sw``           -- firmware, MCORE preprocessor, PCORE assembler, model compiler, host API (``sw/``)
* ``tensorsoc.verification`` -- golden models, cocotb benches, the pyuvm environment, the regression (``verification/``)
* ``tensorsoc.cli``          -- the ``tsoc`` command
"""
