"""PCORE array: lockstep vector processors (Migen) with a MyHDL lane datapath.

``PCOREArray`` / ``add_pcore_array`` (soc.py) are what a SoC instantiates;
``isa`` defines the instruction set shared with the assembler (sw/pcore)."""
