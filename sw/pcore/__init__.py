"""PCORE programs: the assembler (asm) and the kernels (kernels/*.pcore).

The instruction set is tensorsoc.spec.pcore_isa; the instruction-set simulator,
the workloads and the bench that check and measure the kernels are in
verification/pcore/."""

from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"   # the shipped kernels (package data)
