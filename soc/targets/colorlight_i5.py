"""Colorlight i5 (v7.0) with the LFE5U-25F: a reduced tensorsoc configuration.

Budget of the 25F: 24k LUT4, 56 DP16KD block RAMs, 28 MULT18X18D.
"""

from litedram.modules import M12L64322A

from tensorsoc.spec.config import SoCConfig
from tensorsoc.soc.platforms.colorlight_i5 import ColorlightI5Platform
from tensorsoc.soc.targets.board import BoardTarget

TARGET = BoardTarget(
    name="colorlight_i5",
    title="Colorlight i5 v7.0, ECP5 LFE5U-25F, 8 MiB SDR SDRAM",
    make_platform=ColorlightI5Platform,
    config=SoCConfig(
        np=1, nt=4, vw=4,
        main_ram_size=8 * 1024 * 1024,      # the SDRAM
        # Host windows: half the simulation's model window (the 8 MiB SDRAM
        # holds 8 MiB + 1 MiB + 64 KiB of windows no more), the same tensor
        # window; the activation arena gets the remaining 2.9 MiB.
        model_window_size=4 * 1024 * 1024,
        tensor_window_size=1024 * 1024,
        rom_size=32 * 1024,
        sram_size=8 * 1024,
        scratch_size=8 * 1024,
        pcore_private_words=256,
        pcore_shared_words=1024,
        sys_clk_freq=50_000_000,
        # No sensor on the board: without the port, Acquire answers SENSOR
        # instead of waiting for ever (docs/host_port.md, "Sensor port").
        host_sensor=0,
        accelerator=0,   # MCORE only for now: models run on the firmware's software path (docs/fpga.md)
    ),
    sdram_module=M12L64322A,
    # No L2 cache: its tag memory's unregistered read, the hit compare and the
    # Wishbone ack into the VexRiscv's data-cache refill were the sys critical
    # path, which a CI build left at 48.39 MHz (< 50); without it the SoC
    # reaches 58.5 / 61.6 / 59.6 MHz (nextpnr seeds 1 / 2 / 3) and frees 6
    # DP16KD.  The VexRiscv's own caches stay (docs/fpga.md, "SDRAM").
    l2_cache_size=0,
    # Measured with its SDRAM (`tsoc bench host --sdram colorlight_i5 --set
    # sys_clk_freq=50000000`): an 8 KiB WTensor passes down to SoC:SCLK 0.5
    # in SPI and 0.67 in QPI, as with integrated RAM (docs/host_port.md).
    host_sys_per_sclk={"SPI": 0.5, "QPI": 2 / 3},
    notes=(
        "SDRAM: 32-bit, 8 MiB (EM638325 / M12L64322A class; CS_N, CKE and DM tied on the module).",
        "UART: J17 (TX) / H18 (RX), reached through the extension board's USB debugger, 115200 8N1.",
        "Host SPI/QPI: extension board PMOD P3 pin 1 CS_N, 2 IO0/MOSI, 3 IO1/MISO, 4 SCLK, "
        "7 IO2, 8 IO3.",
        "Reset: the extension board's button (K18, low while pressed).",
    ),
)

# The accelerator the 25F is to carry (issue 17: at least 8 MACs per clock at
# 50 MHz): one PCORE of 8 lanes and 8 threads, four loop levels (two for a
# destination, `te_dst_levels=2`: 1.0k LUT positions; no overlap group in a
# destination, `te_dst_overlap=0`: 0.4k), overlap offsets in 24 bits
# (`te_ovl_bits=24`, offsets within +-8 Mi address units, the SDRAM's size:
# 0.25k), no vector path, a 32-word instruction queue, no activity trace
# (`te_trace_depth=0`), the VexRiscv `minimal` (rv32i firmware), a 24 KiB
# boot ROM (the firmware is about 20 KiB; 12 DP16KD instead of 16) and one
# shared Wishbone bus (`bus_shared=1`, 1.1k LUT4 less than the crossbar; the
# SoC gaps the minimal CPU's fetches so the host port's DMA gets the bus,
# soc/tensorsoc.py FetchGap); like the target, no sensor port; write-only
# control registers that read as 0 and no PCORE statistics registers
# (`csr_readback=0`, `pcore_stats=0`: 0.6k LUT positions), the address
# generators' checks from their registers (`te_parallel_checks=0`: 0.4k).
# The lanes' rounding right shift stays in the fabric (`pcore_shift_dsp=0`):
# through the DSP blocks it is 0.5k LUT positions less, but the 24 MULT18X18D
# it takes congest the routing around them (router2 with the same netlist
# otherwise: 5.1k overused wires at best against 1.4k;
# docs/fpga.md, "Where the 25F congests").  Not the target's own
# configuration yet: with yosys's area mapping it packs into 79% of the 25F's
# LUT positions, and router2 has not routed it (123 overused wires at best,
# since the host port's write FIFO holds no addresses; docs/fpga.md, "The
# Colorlight i5 with an accelerator"); as two PCOREs of four lanes (`--set np=2 --set vw=4
# --set pcore_round_share=4`, 8 MACs per clock too) it routed once, after 1,823
# router2 iterations with `--keep-routing`, at sys 37.26 MHz, before main RAM
# answered from flip-flops (soc/tensorsoc.py RegisteredResponse; docs/fpga.md,
# "Main RAM answers from flip-flops"); tests/test_host_soc.py runs the example models on
# it in simulation, and
#   tsoc bitstream --board colorlight_i5 --cpu-variant minimal --set accelerator=1 --set np=1
#     --set nt=8 --set vw=8 --set te_levels=4 --set te_vector_path=0 --set te_queue_depth=32
#     --set rom_size=24576 --set bus_shared=1 --set te_trace_depth=0 --set te_dst_levels=2
#     --set te_dst_overlap=0 --set te_ovl_bits=24 --set csr_readback=0 --set pcore_stats=0
#     --set te_parallel_checks=0 --lut-delay-target 10000
# builds it.
ACCEL_CONFIG = TARGET.config.with_overrides(accelerator=1, np=1, nt=8, vw=8, te_levels=4, te_vector_path=0,
                                            te_queue_depth=32, rom_size=24 * 1024, bus_shared=1,
                                            te_trace_depth=0, te_dst_levels=2, te_dst_overlap=0, te_ovl_bits=24,
                                            csr_readback=0, pcore_stats=0, te_parallel_checks=0)
ACCEL_CPU_VARIANT = "minimal"
