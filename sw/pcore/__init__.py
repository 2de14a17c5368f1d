"""PCORE programs: the assembler (asm), instruction-set simulator (iss),
kernels (kernels/*.pcore), workloads and the bench."""
