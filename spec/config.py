"""The one configuration object of a tensorsoc SoC.

Every size the hardware, the firmware and the tools agree on is defined here,
once.  ``SoCConfig.c_header()`` exports it to ``tensorsoc_config.h`` for the
firmware; gateware generators take the same object; the configuration table
of docs/fpga.md is generated from the board targets' instances
(``soc.bitstream.config_table_markdown``).
"""

from dataclasses import dataclass, asdict, fields, replace

from tensorsoc.spec.errors import UserError
from tensorsoc.spec.pcore_isa import LOOP_END_BITS
from tensorsoc.spec.tensor_isa import MAX_LEVELS, MIN_OVL_BITS, OVL_BITS


class ConfigError(UserError, ValueError):
    pass


# The TensorEngine's fewest loop levels per side (SoCConfig.te_levels): the
# broadcast mode's destination, the PCORE dimension and its row, takes two.
MIN_TE_LEVELS = 2
FIRMWARE_RESERVE = 16 * 1024    # main RAM below the activation arena kept for the firmware (its data and stack)


def _is_pow2(n):
    return n > 0 and (n & (n - 1)) == 0


@dataclass(frozen=True)
class SoCConfig:
    # Accelerator geometry.
    np: int = 4                 # number of PCOREs (power of 2)
    nt: int = 8                 # threads per PCORE
    vw: int = 8                 # lanes per vector (elements per vector word)
    # Memories (sizes in bytes unless noted).
    # The guide's "DDR": integrated RAM in simulation (`tsoc sim --sdram` puts
    # LiteDRAM's SDRAM model there instead), the SDRAM on the boards.  16 MiB:
    # the host windows below plus an activation arena of about 7 MiB.
    main_ram_size: int = 16 * 1024 * 1024
    rom_size: int = 64 * 1024            # boot ROM holding the default firmware
    sram_size: int = 8 * 1024            # CPU stack/data scratch
    scratch_size: int = 128 * 1024       # TensorEngine scratch-pad: a 3x3 64 -> 64 conv's input and weights (docs/models.md, "Tiling")
    pcore_private_words: int = 512       # per thread and per process space, 16-bit elements
    pcore_shared_words: int = 4096       # per PCORE and per process space, 16-bit elements
    pcore_imem_words: int = 1024         # PCORE instruction memory (32-bit words), shared by the array's PCOREs
    # Process spaces of each PCORE's data memories (2 or 1).  2: two copies
    # of the private and shared memories, and the TensorEngine reaches the
    # one a kernel does not run on, so that the model compiler's schedule
    # loads and stores one pass while the kernel of the other runs.  1: one
    # copy; a transfer to or from a PCORE waits for the running kernel, the
    # model compiler runs the passes one after the other, and an instruction
    # of process 1 sets DECODE.  Half the data block RAMs of a PCORE and the
    # process multiplexers of its read data: about 320 LUT positions per
    # PCORE on an ECP5 at VW = 4, for the Colorlight i5's two PCOREs
    # (docs/fpga.md, "One process space").
    pcore_processes: int = 2
    # 1: each lane's rounding right shift (mul, asr, accr) is a product in two
    # more multipliers, (x' * m + 2**15) >> 16, instead of a shifter in the
    # fabric: 3 MULT18X18D per lane instead of 1 and about 120 fewer LUTs
    # per lane in the array, for an FPGA whose logic is full and whose DSP
    # blocks are not (the Colorlight i5's 25F); the same results
    # (docs/fpga.md, "The right shift through the DSP blocks, for the 25F").
    # On the 85F the products' wide operands congested the routing beside
    # the DSP rows, hence 0 by default (docs/fpga.md, "Right shifts in the
    # fabric again").
    pcore_shift_dsp: int = 0
    # Lanes per rounding right shifter (1 .. vw, a power of two): 1, each
    # lane its own (the shifter, its operand and its saturation are half of
    # a lane on an ECP5); S > 1, a PCORE's lanes share vw / S rounders, each
    # serving S lanes one per clock, and every thread slot of a rounding
    # operation (mul, asr, accr: pcore_isa.ROUND_OPS) takes S + 2 clocks
    # instead of one.  Requantization (accr) runs once per output, after
    # its K products, so a convolution pays S + 1 clocks per output and thread
    # slot (docs/pcore.md, "Shared rounding shifters"; docs/fpga.md).
    pcore_round_share: int = 1
    # 1: the TensorEngine and the PCORE array are part of the SoC (0: MCORE only,
    # models then run on the firmware's software path).
    accelerator: int = 1
    # Loop levels per side the TensorEngine's address generators have (2 ..
    # MAX_LEVELS = 8, what the instruction format encodes; the broadcast
    # mode's destination, PCORE dimension and row, takes two).  A transfer with
    # a side of more levels sets DECODE and is skipped; the model compiler
    # and the MCORE preprocessor refuse them with the limit.  The address
    # generators and the decoded side registers grow with it: 4 levels
    # (every example model's transfers fit) make the engine about 27%
    # smaller on an ECP5 than 8 (docs/fpga_history.md, "Four loop levels").
    te_levels: int = MAX_LEVELS
    # Loop levels of the destination side alone (0: te_levels, the default;
    # else 2 .. te_levels).  The model compiler's destinations take at most
    # two on one PCORE (a row, and the threads or the PCORE dimension), so a
    # small FPGA's engine can give its destination generator and decoded
    # registers fewer levels than the source's (docs/fpga.md, "The
    # destination's loop levels").  A transfer whose destination has more
    # sets DECODE, like te_levels; the model compiler and the MCORE
    # preprocessor refuse it with the limit.
    te_dst_levels: int = 0
    # 1: a destination may have an overlap group (``L(d1, d2, ...)``, the
    # guide's overlapped dimension: docs/tensor_semantics.md); 0: it may not
    # (DECODE; the model compiler never emits one, the MCORE preprocessor
    # refuses it at its line) and the destination's address generator has
    # no overlap offset (48-bit sums and compares per level): about 400 LUTs
    # less on an ECP5 at two destination levels (docs/fpga.md, "A
    # destination without overlap").  Sources keep theirs.
    te_dst_overlap: int = 1
    # Bits of the overlap offset (the overlapped dimension's linear offset,
    # docs/tensor_semantics.md), MIN_OVL_BITS = 16 .. OVL_BITS = 48: the
    # engine keeps it modulo 2**te_ovl_bits as a signed value, and an
    # overlap limit of 2**(te_ovl_bits-1) or more lets every non-negative
    # offset through.  48 bits: exact for any offset within +-2**47.  The
    # model compiler keeps a layer whose offsets would leave
    # +-2**(te_ovl_bits-1) in software, saying so.  24 bits (offsets within
    # +-8 Mi address units, the size of the Colorlight i5's SDRAM) make the
    # source's address generator about 300 LUTs smaller on an ECP5 at four
    # levels, the i5's SoC 249 LUT positions (docs/fpga.md, "The overlap
    # offset in 24 bits").
    te_ovl_bits: int = OVL_BITS
    # 1: the TensorEngine's address generators check each candidate of their
    # next index, overlap offset and address in parallel and keep the
    # results as registers, so that the element path's skip and the vector
    # path's requests start from flip-flops (the ULX3S's 60 MHz needs it);
    # 0: they check the index, offset and address once, from their
    # registers, in the clock that presents the element: the same results,
    # longer paths, about 700 LUT positions less on an ECP5 at four source
    # and two destination levels (docs/fpga.md, "The generators' checks
    # from their registers").  For the 50 MHz boards.
    te_parallel_checks: int = 1
    # 1: the TensorEngine has its vector path (a memory word per clock for
    # the transfers that qualify, docs/tensor_engine.md "Vector path"); 0:
    # every transfer takes the element path (an element per clock), the same
    # results in more clocks, and the engine is about a third smaller on an
    # ECP5 (the vector path's logic is left out by synthesis): for the
    # smallest FPGAs (docs/fpga.md, "An engine without its vector path").
    te_vector_path: int = 1
    # Words of the TensorEngine's instruction queue (a power of 2, 16 ..
    # 4096), which the MCORE and the instruction fetch fill.  The decoder
    # takes an instruction word by word, so any depth runs every program;
    # a shallower queue only makes the writers wait sooner.  In LUT RAM:
    # 128 words are 64 TRELLIS_DPR16X4 on an ECP5, about 380 of its LUT
    # positions; 32 words a quarter of that (docs/fpga.md, "The Colorlight
    # i5 with an accelerator").
    te_queue_depth: int = 128
    # Records of the TensorEngine's LOG_ON activity trace buffer (a power of
    # 2, 16 .. 4096; two block RAMs at 256 on an ECP5), or 0: no trace (LOG_ON
    # and LOG_OFF still execute, nothing is recorded; TRACE_STATUS reads depth
    # 0 and the firmware says so instead of printing a report).
    te_trace_depth: int = 256
    # 0: the SoC's Wishbone interconnect is a crossbar (a master reaches one
    # slave while another master reaches another); 1: one shared bus (one
    # master at a time, the others wait), about 1.1k LUT4 smaller on an ECP5
    # with the accelerator's masters.  A CPU without an instruction cache
    # (the VexRiscv minimal) gets a one-clock gap after each fetch there, so
    # that the other masters are served (soc/tensorsoc.py FetchGap;
    # docs/fpga.md, "The Colorlight i5 with an accelerator").
    bus_shared: int = 0
    # Host windows at the top of main RAM (bytes): server (top), tensor, model.
    # The activation arena is what main RAM has left below them (minus the
    # firmware's 16 KiB at its base): docs/models.md, "Memory plan".
    server_window_size: int = 64 * 1024          # firmware uploaded with WServer
    tensor_window_size: int = 1024 * 1024        # input tensors (WTensor / Acquire): a 224x224 image padded to VW=8
    model_window_size: int = 8 * 1024 * 1024     # model image (WModel): constants, up to ~4M int16 weights
    # Boot memory test: bytes of main RAM, from its base, filled with random
    # words and read back (0: all of main RAM).  The data-bus, address-bus and
    # byte-lane tests always span all of main RAM; bounding the fill keeps the
    # boot time of a large main RAM at that of 256 KiB (2.5M cycles).
    memtest_size: int = 256 * 1024
    # Host port: bit order within bytes (0: LSB first as the datasheet says, 1: MSB first).
    host_msb_first: int = 0
    # Host port: 1, the sensor port (a byte stream Acquire captures into the
    # tensor window through a DMA of its own); 0, none (Acquire then answers
    # with the error SENSOR at once), a bus master and its counters less for
    # the smallest FPGAs (docs/host_port.md, "Sensor port").
    host_sensor: int = 1
    # Host port: 1, the write queue's output from a register (a clock more
    # before each word reaches the bus, 63 flip-flops): its block RAM's read data then
    # no longer forms the DMA writer's bus request in the same clock, which
    # on a shared bus ran through the arbiter into main RAM, the Colorlight
    # i5's sys critical path at 2 x 8 x 4 (docs/fpga.md, "The host port's
    # write queue from a register"); 0, not.
    host_write_pipe: int = 0
    # 1: the control registers of tensorsoc's cores that the firmware only
    # writes (the host port's STATUS_SET .. SPEC3, the PCORE array's FUNC and
    # START, the instruction fetch's ADDRESS, LENGTH and CONTROL) read back
    # what was written, as LiteX's CSRStorage; 0: they read as 0, and their
    # CSR banks' read multiplexers lose those inputs (cores/csr_storage.py;
    # docs/fpga.md, "Write-only control registers").  The firmware reads
    # none of them.
    csr_readback: int = 1
    # 1: the PCORE array's statistics registers CYCLES, VOPS and MACS (the
    # last kernel's clocks, vector operations and multiply-accumulates: the
    # array's bench and `tsoc bench pcore` read them); 0: none, and no
    # counters (the firmware does not read them; the C header has no
    # accessors for them).
    pcore_stats: int = 1
    # Clocks.
    sys_clk_freq: int = 100_000_000      # SoC clock (Hz)
    # The accelerator's own clock (Hz), or 0: the TensorEngine, its
    # instruction fetch and the PCORE array then run in ``sys``.  Nonzero puts
    # them in a clock domain ``accel`` behind clock-domain crossings
    # (docs/fpga.md, "Clocks"; soc/accel_domain.py).
    accel_clk_freq: int = 0
    uart_baudrate: int = 115200

    def __post_init__(self):
        self.validate()

    def validate(self):
        if not _is_pow2(self.np):
            raise ConfigError(f"np={self.np}: the number of PCOREs must be a power of 2")
        for name in ("nt", "vw"):
            v = getattr(self, name)
            if not _is_pow2(v):
                raise ConfigError(f"{name}={v}: must be a power of 2")
        for name in ("main_ram_size", "rom_size", "sram_size", "scratch_size"):
            v = getattr(self, name)
            if v <= 0 or v % 4:
                raise ConfigError(f"{name}={v}: must be a positive multiple of 4 bytes")
        if self.memtest_size < 0 or self.memtest_size % 4:
            raise ConfigError(f"memtest_size={self.memtest_size}: must be a multiple of 4 bytes (0: all of main RAM)")
        for name in ("pcore_private_words", "pcore_shared_words"):
            v = getattr(self, name)
            if v <= 0 or v % self.vw:
                raise ConfigError(f"{name}={v}: must be a positive multiple of vw={self.vw}")
        for name in ("server_window_size", "tensor_window_size", "model_window_size"):
            v = getattr(self, name)
            if v <= 0 or v % 256:
                raise ConfigError(f"{name}={v}: must be a positive multiple of 256 bytes")
        windows = self.server_window_size + self.tensor_window_size + self.model_window_size
        if windows + FIRMWARE_RESERVE > self.main_ram_size:
            raise ConfigError(f"main_ram_size={self.main_ram_size}: the host windows take {windows} bytes "
                              f"and the firmware needs at least {FIRMWARE_RESERVE // 1024} KiB below them")
        if not _is_pow2(self.pcore_imem_words) or not 16 <= self.pcore_imem_words <= 1 << LOOP_END_BITS:
            raise ConfigError(f"pcore_imem_words={self.pcore_imem_words}: must be a power of 2 from 16 to "
                              f"{1 << LOOP_END_BITS} (a loop's end address has {LOOP_END_BITS} bits)")
        if self.pcore_processes not in (1, 2):
            raise ConfigError(f"pcore_processes={self.pcore_processes}: a PCORE's data memories have 2 process "
                              f"spaces (the engine loads one while a kernel runs on the other) or 1")
        if self.accelerator not in (0, 1):
            raise ConfigError(f"accelerator={self.accelerator}: must be 0 (MCORE only) or 1")
        if self.pcore_shift_dsp not in (0, 1):
            raise ConfigError(f"pcore_shift_dsp={self.pcore_shift_dsp}: must be 0 (the lanes' rounding right "
                              f"shift in the fabric) or 1 (through the DSP blocks)")
        if not (_is_pow2(self.pcore_round_share) and self.pcore_round_share <= self.vw):
            raise ConfigError(f"pcore_round_share={self.pcore_round_share}: lanes per rounding shifter must be a "
                              f"power of 2 from 1 (each lane its own) to vw={self.vw} (one per PCORE)")
        if self.pcore_round_share > 1 and self.pcore_shift_dsp:
            raise ConfigError(f"pcore_round_share={self.pcore_round_share} with pcore_shift_dsp=1: a shared "
                              f"rounding shifter is in the fabric; set one of them only")
        if not MIN_TE_LEVELS <= self.te_levels <= MAX_LEVELS:
            raise ConfigError(f"te_levels={self.te_levels}: the TensorEngine's loop levels per side must be "
                              f"{MIN_TE_LEVELS} (a broadcast over the PCOREs and its row) to {MAX_LEVELS} (the "
                              f"instruction format's limit)")
        if self.te_dst_levels and not MIN_TE_LEVELS <= self.te_dst_levels <= self.te_levels:
            raise ConfigError(f"te_dst_levels={self.te_dst_levels}: the destination side's loop levels must be 0 "
                              f"(as te_levels) or {MIN_TE_LEVELS} to te_levels={self.te_levels}")
        if self.te_dst_overlap not in (0, 1):
            raise ConfigError(f"te_dst_overlap={self.te_dst_overlap}: must be 1 (a destination may have an "
                              f"overlap group) or 0 (it may not: DECODE)")
        if not MIN_OVL_BITS <= self.te_ovl_bits <= OVL_BITS:
            raise ConfigError(f"te_ovl_bits={self.te_ovl_bits}: the overlap offset's width must be "
                              f"{MIN_OVL_BITS} to {OVL_BITS} bits")
        if self.te_parallel_checks not in (0, 1):
            raise ConfigError(f"te_parallel_checks={self.te_parallel_checks}: must be 1 (the address generators "
                              f"check every candidate of their next values, registered) or 0 (once, from their "
                              f"registers)")
        if self.te_vector_path not in (0, 1):
            raise ConfigError(f"te_vector_path={self.te_vector_path}: must be 1 (the TensorEngine's vector path) "
                              f"or 0 (the element path only)")
        if not _is_pow2(self.te_queue_depth) or not 16 <= self.te_queue_depth <= 4096:
            raise ConfigError(f"te_queue_depth={self.te_queue_depth}: the TensorEngine's instruction queue must "
                              f"be a power of 2 from 16 to 4096 words")
        if self.te_trace_depth and (not _is_pow2(self.te_trace_depth) or not 16 <= self.te_trace_depth <= 4096):
            raise ConfigError(f"te_trace_depth={self.te_trace_depth}: the activity trace buffer must be 0 (none) "
                              f"or a power of 2 from 16 to 4096 records")
        if self.bus_shared not in (0, 1):
            raise ConfigError(f"bus_shared={self.bus_shared}: must be 0 (a crossbar) or 1 (one shared bus)")
        if self.host_msb_first not in (0, 1):
            raise ConfigError(f"host_msb_first={self.host_msb_first}: must be 0 (LSB first) or 1 (MSB first)")
        if self.host_sensor not in (0, 1):
            raise ConfigError(f"host_sensor={self.host_sensor}: must be 1 (the sensor port) or 0 (none: Acquire "
                              f"answers SENSOR)")
        if self.host_write_pipe not in (0, 1):
            raise ConfigError(f"host_write_pipe={self.host_write_pipe}: must be 1 (the host port's write queue "
                              f"from a register) or 0 (not)")
        if self.csr_readback not in (0, 1):
            raise ConfigError(f"csr_readback={self.csr_readback}: must be 1 (write-only control registers read "
                              f"back their value) or 0 (they read as 0)")
        if self.pcore_stats not in (0, 1):
            raise ConfigError(f"pcore_stats={self.pcore_stats}: must be 1 (the PCORE array's CYCLES, VOPS and "
                              f"MACS registers) or 0 (none)")
        if self.sys_clk_freq <= 0:
            raise ConfigError(f"sys_clk_freq={self.sys_clk_freq}: must be positive")
        if self.accel_clk_freq < 0:
            raise ConfigError(f"accel_clk_freq={self.accel_clk_freq}: must be 0 (the accelerator in sys) "
                              f"or the accelerator's clock in Hz")
        if self.accel_clk_freq and not self.accelerator:
            raise ConfigError(f"accel_clk_freq={self.accel_clk_freq}: there is no accelerator (accelerator=0); "
                              f"set accel_clk_freq=0")
        if self.main_ram_size // 1024 >= 1 << 16:
            raise ConfigError(f"main_ram_size={self.main_ram_size}: RSpec reports main RAM in KiB in 16 bits "
                              f"(bytes 6-7): at most 65535 KiB")

    def windows(self, main_ram_base):
        """Host windows as {name: (byte address, size)}, top of main RAM down."""
        top = main_ram_base + self.main_ram_size
        server = top - self.server_window_size
        tensor = server - self.tensor_window_size
        model = tensor - self.model_window_size
        return {"model": (model, self.model_window_size), "tensor": (tensor, self.tensor_window_size),
                "server": (server, self.server_window_size)}

    @property
    def dst_levels(self):
        """The TensorEngine's loop levels of a destination side."""
        return self.te_dst_levels or self.te_levels

    @property
    def peak_macs_per_clock(self):
        return self.np * self.vw

    @property
    def tile_memory_bytes(self):
        """Data memory of one PCORE (a *tile*): its threads' private memories
        and its shared memory, in each of its process spaces, 16-bit elements."""
        return 2 * self.pcore_processes * (self.nt * self.pcore_private_words + self.pcore_shared_words)

    def rspec(self):
        """What RSpec reports of the hardware (docs/host_protocol.md, RSpec):
        tiles = PCOREs (the MCORE alone without the accelerator), internal
        KiB = each tile's own data memory (the MCORE's SRAM without the
        accelerator), flash none, external KiB = main RAM, which every tile
        reaches through the TensorEngine."""
        if self.accelerator:
            tiles, internal = self.np, self.tile_memory_bytes
        else:
            tiles, internal = 1, self.sram_size
        return {"tiles": tiles, "internal_kib": internal // 1024, "flash_kib": 0,
                "external_kib": self.main_ram_size // 1024}

    def with_overrides(self, **kw):
        unknown = set(kw) - {f.name for f in fields(self)}
        if unknown:
            raise ConfigError(f"unknown configuration field(s): {', '.join(sorted(unknown))} "
                              f"(the fields: {', '.join(f.name for f in fields(self))})")
        return replace(self, **kw)

    def with_settings(self, settings):
        """This configuration with the command lines' ``--set FIELD=VALUE``
        items applied (VALUE an integer, decimal or 0x...).  ConfigError
        names the item and what was expected."""
        overrides = {}
        for item in settings or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--set {item!r}: expected FIELD=VALUE (for example np=4)")
            try:
                overrides[key.strip()] = int(value, 0)
            except ValueError:
                raise ConfigError(f"--set {item!r}: {value!r} is not an integer") from None
        return self.with_overrides(**overrides)

    def as_dict(self):
        return asdict(self)

    def c_header(self):
        """C header with every field as a ``TSOC_<NAME>`` macro."""
        lines = [
            "/* Generated from spec/config.py by tensorsoc: do not edit. */",
            "#ifndef TENSORSOC_CONFIG_H",
            "#define TENSORSOC_CONFIG_H",
            "",
        ]
        for f in fields(self):
            lines.append(f"#define TSOC_{f.name.upper():<24} {getattr(self, f.name)}")
        lines.append(f"#define TSOC_{'PEAK_MACS_PER_CLOCK':<24} {self.peak_macs_per_clock}")
        for name, value in self.rspec().items():
            lines.append(f"#define TSOC_RSPEC_{name.upper():<18} {value}")
        lines += ["", "#endif", ""]
        return "\n".join(lines)


DEFAULT = SoCConfig()

# The memory sizes from before the real-model sizing (256 KiB of main RAM,
# 64 KiB model and 32 KiB tensor windows): for tests that fill a whole window
# through the simulated host port (a default window takes minutes to fill).
# ``DEFAULT.with_overrides(**COMPACT_MEMORY)``.
COMPACT_MEMORY = dict(main_ram_size=256 * 1024, model_window_size=64 * 1024, tensor_window_size=32 * 1024)
