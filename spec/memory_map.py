"""The bus memory map of every tensorsoc SoC, defined once.

The SoC (soc/tensorsoc.py) places its regions here and LiteX exports them to
the firmware (generated mem.h / soc.h); the model compiler places the model
and tensor windows and the accelerator's addresses in main RAM from it.
"""

MEM_MAP = {
    "rom":      0x0000_0000,   # boot ROM: the default server firmware
    "sram":     0x1000_0000,   # CPU data and stack
    "main_ram": 0x4000_0000,   # the programmer guide's "DDR"
    "csr":      0xf000_0000,
    # The accelerator's CSR banks when it has a clock domain of its own
    # (soc/accel_domain.py): above LiteX's CSR region, so the generated csr.h
    # (offsets from its first region) keeps CSR_BASE.
    "accel_csr": 0xf001_0000,
}
