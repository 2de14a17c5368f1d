"""ULX3S with the LFE5U-85F: the largest tensorsoc configuration that fits.

Budget of the 85F: 83.6k LUT4, 208 DP16KD block RAMs, 156 MULT18X18D.  The
geometry is chosen in docs/fpga.md ("Choosing the configurations").
"""

from litedram.modules import MT48LC16M16

from tensorsoc.spec.config import SoCConfig
from tensorsoc.soc.platforms.ulx3s import ULX3SPlatform
from tensorsoc.soc.targets.board import BoardTarget

TARGET = BoardTarget(
    name="ulx3s",
    title="Radiona ULX3S, ECP5 LFE5U-85F, 32 MiB SDR SDRAM",
    make_platform=lambda: ULX3SPlatform(device="LFE5U-85F"),
    config=SoCConfig(
        # 4 x 8 x 8 needs 96k LUT4 (114% of the 85F) and does not place;
        # 2 x 8 x 8 places (89% of the slices) but does not route in
        # reasonable time; 1 x 8 x 8 with the pipelined lane (63%) did not
        # route either (router2 congestion grew after 10 iterations).  2 x 8 x 4
        # (58.5% of the LUT4s, 144 DP16KD) routed and met timing in one build
        # (accel 34.5, sys 35.7 MHz) but router2 did not converge in a fresh
        # clone nor at seeds 1-3 later, so the target was 1 x 8 x 4 until
        # 2026-11-27.  With the TensorEngine's loop levels at 4 (te_levels
        # below) 2 x 8 x 4 takes 43.9% of the LUT4s, as 1 x 8 x 4 did at 8
        # levels, and routes (docs/fpga.md, "Choosing the configurations",
        # "Four loop levels", "Measured builds").  4 x 8 x 4 did not route
        # until the lane's rounding shift left its two DSP blocks and each
        # operand got one memory word (2026-11-27, docs/fpga.md "4 x 8 x 4
        # routes"), with the smaller PCORE memories below: 4 x 8 x 4 since.
        np=4, nt=8, vw=4,
        # Four loop levels per side: every example model's transfers fit
        # (docs/tensor_engine.md, "Loop levels"); the engine is 27% smaller.
        te_levels=4,
        main_ram_size=32 * 1024 * 1024,     # the SDRAM
        # Host windows as in simulation; the activation arena gets the
        # remaining 22.9 MiB.
        model_window_size=8 * 1024 * 1024,
        tensor_window_size=1024 * 1024,
        rom_size=32 * 1024,
        sram_size=8 * 1024,
        # The scratch-pad and the PCORE memories at half the simulation's
        # sizes: four PCOREs take 120 of the 208 block RAMs so (168 with the
        # simulation's sizes); every example model that compiles for VW = 4
        # fits (relu_cnn3 is tests/test_board_soc.py's).
        scratch_size=32 * 1024,
        pcore_private_words=256,
        pcore_shared_words=2048,
        # The accelerator runs in its own clock domain (soc/accel_domain.py):
        # in sys, 1 x 8 x 4 reached 31.6 MHz (the TensorEngine's element path
        # and decoder), which held the CPU, the bus and the SDRAM at 20 MHz.
        # sys 50 / accel 28 MHz reached sys 44.2 / accel 30.1 MHz; sys 40 /
        # accel 27 reached 38.8 / 28.0 (the sys path: LiteDRAM's port through
        # the crossbar into the crossing, mostly routing); sys 32 / accel 25
        # reached 39.9 / 30.2.  With the address generator's cap registered and
        # the decoder's count product a clock later, sys 32 / accel 40 reached
        # 41.2 / 38.5 MHz (seed 2).  sys 32 and accel 33.3 MHz were the
        # target until 2026-11-26, when a fresh clone's placement left sys at
        # 31.01 MHz (its path: the L2's block RAM through the crossbar and the
        # CPU's bus into the accel crossing, 23 of 32 ns routing; sys has
        # ranged 31.0-39.9 MHz over the builds).  So sys 30 and accel 33.3
        # MHz (one 600 MHz VCO: 600/20, 600/18; docs/fpga.md, "Measured
        # builds") until 2026-11-27, when the stream processor's third stage
        # took accel to 43.47 MHz (seed 3, 33.3 and 40 MHz constraints
        # alike): accel 40 MHz (600/15).  2 x 8 x 4 at 4 loop levels reached
        # 36.64 MHz at a 40 MHz constraint (seed 3): accel 33.3 MHz (600/18);
        # with the PCORE's smaller lanes and one private read port it
        # reached 39.30 MHz at 33.3 and at 37.5 MHz constraints alike (seed
        # 3): accel 37.5 MHz (600/16) from 2026-11-27, when the decoder's
        # registered vector eligibility (ELIG) and the element ring's
        # rotators took it to 45.87 MHz at a 45 MHz constraint (seed 3;
        # 48.40 at 37.5 before ELIG): accel 45 MHz (one 450 MHz VCO: 450/15
        # for sys, 450/10 for accel); with the write bursts' more from pop
        # it reached 48.73 MHz (50 fails): accel 46.875 MHz (one 750 MHz
        # VCO: 750/25, 750/16; 48 is not a divisor of a VCO that makes 30,
        # soc/targets/crg.py); with the destination chunk queue, the PCORE's
        # registered read data and the generators' kept enables it reached
        # 50.64 MHz at a 53.57 MHz constraint (seed 4): accel 50 MHz then;
        # with each PCORE's own control registers, read-first block RAMs
        # and the engine's writes registered in each PCORE (19bcdd7) it
        # reached 55.10 MHz at 50 and at 53.57 MHz alike (seed 4): accel
        # 53.57 MHz (750/14 beside sys 750/25) on 2026-11-28; with the
        # sequencer's instruction register and the fetch's registered
        # writes (47bfee1) it reached 59.76 MHz at 53.57 and at 56.25 MHz
        # alike (seed 4, the same placement): accel 56.25 MHz (one 450 MHz
        # VCO: 450/15 for sys, 450/8 for accel) since.  The host may clock
        # SCLK at up to 50 MHz in SPI and 30 MHz in QPI (host_sys_per_sclk
        # below: board.host_sclk_max).
        sys_clk_freq=30_000_000,
        accel_clk_freq=56_250_000,
        accelerator=1,   # TensorEngine + PCORE array, in the accel clock domain
    ),
    sdram_module=MT48LC16M16,
    # A 128-bit L2 line (16 DP16KD instead of 4): the host's writes behind a
    # 32-bit line cost a write-back and a refill per word once the cache is
    # full, so an 8 KiB WTensor needed SoC:SCLK >= 2.5 in QPI (SCLK 12.8
    # MHz); with 128 bits, 1.0 (`tsoc bench host --sdram ulx3s,l2_line=...
    # --set sys_clk_freq=32000000`, docs/host_port.md "Clock ratio"), and
    # the default model's inference takes 0.58 x the cycles (docs/fpga.md).
    l2_cache_min_data_width=128,
    host_sys_per_sclk={"SPI": 0.5, "QPI": 1.0},
    # nextpnr seed 3: on the gateware of 2026-11-26 (e089c36 on), router2
    # came down to 2 overused wires at seeds 1 and 2 and then diverged (the
    # wires left are in the TensorEngine's source address generator);
    # seed 3 routed in 63 iterations and met timing (accel 39.38, sys 38.21
    # MHz), and on the gateware of 2026-11-27 (9361a98) in 74 (accel 43.47,
    # sys 36.28 MHz); 2 x 8 x 4 at four loop levels in 63 (accel 36.64, sys
    # 39.14 MHz), and after the PCORE's area changes of 2026-11-27 (98f0f60)
    # with accel 39.30, sys 35.53 MHz; at 422b5bd in 105 (accel 48.40, sys
    # 39.13 MHz at a 37.5 MHz constraint) and with ELIG (535f6df) in 99 at
    # 45 MHz (accel 45.87, sys 38.38 MHz), and with the write bursts' more
    # from pop (fd375c3) in 63 (accel 48.73, sys 41.99 MHz, at 45 and at
    # 46.875 MHz alike).  Seed 4 since the generators' kept enables
    # (2026-11-27), whose netlist diverged at seed 3 (fewest 194 overused
    # wires at iteration 43) and routed at seed 4 (accel 50.64, sys 37.37
    # MHz at a 53.57 MHz constraint); at 47bfee1 (2026-11-28, the
    # sequencer's instruction register) in 64 (accel 59.76, sys 42.70 MHz
    # at 53.57 and at 56.25 MHz).  docs/fpga.md, "Measured builds".
    # Any gateware change re-rolls the placement: when router2 diverges the
    # build tries the next seeds (seed_tries) and says which one to set here.
    seed=4,
    notes=(
        "SDRAM: MT48LC16M16 timings (32 MiB); boards with the 64 MiB AS4C32M16 work with these "
        "settings and use its lower half.",
        "UART: the FT231X on the USB port US1, 115200 8N1.",
        "Host SPI/QPI: J1 header GP0=SCLK, GN0=CS_N, GP1=IO0/MOSI, GN1=IO1/MISO, GP2=IO2, GN2=IO3.",
        "Reset: the FIRE1 button (R1, high while pressed); not the power button BTN_PWRn (D6).",
    ),
)
