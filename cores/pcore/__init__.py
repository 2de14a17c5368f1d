"""PCORE array: lockstep vector processors (Migen) with a MyHDL lane datapath.

``PCOREArray`` / ``add_pcore_array`` (soc.py) are what a SoC instantiates:
the array with its control registers as LiteX CSRs (bank ``pcore``) and its
instruction memory as a Wishbone slave, added through ``TensorSoC.add_core``.
The instruction set it shares with the assembler (sw/pcore) and the ISS is
``tensorsoc.spec.pcore_isa``."""
