"""The configuration object and the generated headers and images."""

import re

import pytest

from tensorsoc.spec.config import DEFAULT, ConfigError, SoCConfig
from tensorsoc.spec import server_image
from tensorsoc.spec.memory_map import MEM_MAP

MAIN_RAM_BASE = MEM_MAP["main_ram"]


def test_default_is_valid_and_exported_to_c():
    import re
    h = DEFAULT.c_header()
    for name, value in DEFAULT.as_dict().items():
        assert re.search(rf"^#define TSOC_{name.upper()}\s+{value}$", h, re.M), name
    assert f"TSOC_PEAK_MACS_PER_CLOCK      {DEFAULT.np * DEFAULT.vw}" in h


@pytest.mark.parametrize("field,value,msg", [
    ("np", 3, "power of 2"),
    ("nt", 0, "power of 2"),
    ("vw", 6, "power of 2"),
    ("main_ram_size", 1001, "multiple of 4"),
    ("pcore_private_words", 12, "multiple of vw"),
    ("sys_clk_freq", 0, "positive"),
    ("pcore_imem_words", 1000, "power of 2 from 16 to 4096"),
    ("pcore_imem_words", 8192, "power of 2 from 16 to 4096"),
    ("accel_clk_freq", -1, "must be 0 .the accelerator in sys. or the accelerator's clock in Hz"),
    ("te_levels", 1, "must be 2 .a broadcast over the PCOREs and its row. to 8"),
    ("te_levels", 9, "must be 2 .* to 8"),
    ("te_dst_levels", 1, "must be 0 .as te_levels. or 2 to te_levels=8"),
    ("te_dst_levels", 9, "must be 0 .as te_levels. or 2 to te_levels=8"),
    ("te_ovl_bits", 15, "overlap offset.s width must be 16 to 48 bits"),
    ("te_ovl_bits", 49, "overlap offset.s width must be 16 to 48 bits"),
    ("te_parallel_checks", 2, "must be 1 .the address generators check every candidate of their next values, "
                              "registered. or 0 .once, from their registers."),
    ("te_vector_path", 2, "must be 1 .the TensorEngine's vector path. or 0 .the element path only."),
    ("pcore_shift_dsp", 2, "must be 0 .the lanes' rounding right shift in the fabric. or 1 .through the DSP blocks."),
    ("pcore_round_share", 3, "lanes per rounding shifter must be a power of 2 from 1 .each lane its own. to vw=8"),
    ("pcore_round_share", 16, "lanes per rounding shifter must be a power of 2 from 1 .* to vw=8"),
    ("te_queue_depth", 24, "a power of 2 from 16 to 4096 words"),
    ("te_queue_depth", 8, "a power of 2 from 16 to 4096 words"),
    ("te_trace_depth", 100, "must be 0 .none. or a power of 2 from 16 to 4096 records"),
    ("te_trace_depth", 8192, "must be 0 .none. or a power of 2 from 16 to 4096 records"),
    ("bus_shared", 2, "must be 0 .a crossbar. or 1 .one shared bus."),
    ("host_sensor", 2, "must be 1 .the sensor port. or 0 .none: Acquire answers SENSOR."),
    ("host_write_pipe", 2, "must be 1 .the host port.s write queue from a register. or 0 .not."),
    ("csr_readback", 2, "must be 1 .write-only control registers read back their value. or 0 .they read as 0."),
    ("pcore_stats", 2, "must be 1 .the PCORE array's CYCLES, VOPS and MACS registers. or 0 .none."),
    ("pcore_processes", 0, "2 process spaces .the engine loads one while a kernel runs on the other. or 1"),
    ("pcore_processes", 3, "2 process spaces .* or 1"),
])
def test_bad_values_are_rejected_with_the_field_named(field, value, msg):
    with pytest.raises(ConfigError, match=f"{field}={value}.*{msg}"):
        SoCConfig(**{field: value})


def test_a_shared_rounder_has_no_dsp_shift():
    with pytest.raises(ConfigError, match="pcore_round_share=8 with pcore_shift_dsp=1: a shared rounding shifter "
                                          "is in the fabric"):
        SoCConfig(pcore_round_share=8, pcore_shift_dsp=1)


def test_unknown_override_is_named():
    with pytest.raises(ConfigError, match="unknown configuration field.*bogus"):
        DEFAULT.with_overrides(bogus=1)


def test_server_image_round_trip_and_errors():
    payload = bytes(range(256)) * 3
    image = server_image.build_image(payload, 4096)
    assert server_image.parse_image(image) == payload
    with pytest.raises(server_image.ImageError, match="window holds"):
        server_image.build_image(payload, 512)
    bad = bytearray(image)
    bad[20] ^= 1
    with pytest.raises(server_image.ImageError, match="CRC"):
        server_image.parse_image(bytes(bad))
    with pytest.raises(server_image.ImageError, match="magic"):
        server_image.parse_image(b"\0" * 16)
    with pytest.raises(server_image.ImageError, match="truncated"):
        server_image.parse_image(image[:-1])
    assert "#define SERVER_IMAGE_MAGIC        0x56525354u" in server_image.c_header()


def test_cli_help_lists_commands():
    from tensorsoc.cli import build_parser
    text = build_parser().format_help()
    for cmd in ("sim", "soc", "bench"):
        assert cmd in text


# -- memory sizes ---------------------------------------------------------------------------

MiB = 1024 * 1024


def test_default_memory_holds_real_models():
    """Simulation defaults (docs/models.md, "Memory plan"): 16 MiB of main RAM,
    an 8 MiB model window, a 1 MiB tensor window, the arena the rest."""
    c = DEFAULT
    assert (c.main_ram_size, c.model_window_size, c.tensor_window_size, c.server_window_size) == \
        (16 * MiB, 8 * MiB, 1 * MiB, 64 * 1024)
    w = c.windows(MAIN_RAM_BASE)
    assert w["server"][0] + w["server"][1] == MAIN_RAM_BASE + c.main_ram_size
    assert w["model"][0] + w["model"][1] == w["tensor"][0]
    from tensorsoc.sw.model.frontend import FIRMWARE_RESERVE
    arena = w["model"][0] - MAIN_RAM_BASE - FIRMWARE_RESERVE
    assert arena > 6 * MiB
    # RSpec's internal_kib field is 16 bits.
    assert c.main_ram_size // 1024 < 1 << 16


def test_board_memory_configurations_are_valid():
    """Each board's main RAM is its SDRAM, and its host windows fit in it."""
    from tensorsoc.soc.targets import TARGETS
    for t in TARGETS.values():
        c = t.config
        c.validate()
        cls = t.sdram_module
        assert c.main_ram_size in (8 * MiB, 32 * MiB)
        windows = c.model_window_size + c.tensor_window_size + c.server_window_size
        assert windows + 1 * MiB < c.main_ram_size, t.name        # a useful arena is left
        assert c.main_ram_size % (cls.nbanks * cls.nrows * cls.ncols) == 0


def test_windows_larger_than_main_ram_are_refused():
    with pytest.raises(ConfigError, match="main_ram_size=8388608: the host windows take"):
        DEFAULT.with_overrides(main_ram_size=8 * MiB)


@pytest.mark.parametrize("value", [-4, 6])
def test_bad_memtest_size_is_refused(value):
    with pytest.raises(ConfigError, match=f"memtest_size={value}"):
        DEFAULT.with_overrides(memtest_size=value)


# -- simulated SDRAM (tsoc sim --sdram) -----------------------------------------------------

def test_sim_sdram_of_the_boards():
    from tensorsoc.soc.builder import parse_sim_sdram
    u = parse_sim_sdram("ulx3s")
    assert (u.module_name, u.data_width, u.size, u.l2_cache_size) == ("MT48LC16M16", 16, 32 * MiB, 65536)
    c = parse_sim_sdram("colorlight_i5")
    assert (c.module_name, c.data_width, c.size, c.l2_cache_size) == ("M12L64322A", 32, 8 * MiB, 0)
    m = parse_sim_sdram("MT41K128M16:16")
    assert (m.module_name, m.data_width, m.size) == ("MT41K128M16", 16, 256 * MiB)
    assert parse_sim_sdram("MT48LC16M16").data_width == 32
    assert u.describe() == "SDR SDRAM MT48LC16M16 x16 (32 MiB), L2 cache 64 KiB, 256-bit line"
    w = parse_sim_sdram("ulx3s,l2_line=128,l2=16384")
    assert (w.module_name, w.l2_cache_size, w.l2_cache_min_data_width, w.slug) == \
        ("MT48LC16M16", 16384, 128, "ulx3s-l2_line-128-l2-16384")
    assert "no L2 cache" in parse_sim_sdram("MT48LC16M16:16,l2=0").describe()


@pytest.mark.parametrize("text,msg", [("nonsense", "not a board"), ("SDRAMModule", "not a board"),
                                      ("MT48LC16M16:x", "must be an integer"),
                                      ("MT48LC16M16:12", "data width 12"),
                                      ("ulx3s,l3=1", "unknown option 'l3'"), ("ulx3s,l2=x", "not an integer"),
                                      ("ulx3s,l2=1000", "power of 2"), ("ulx3s,l2_line=16", "at least 32")])
def test_sim_sdram_bad_names(text, msg):
    from tensorsoc.soc.builder import BuildError, parse_sim_sdram
    with pytest.raises(BuildError, match=msg):
        parse_sim_sdram(text)


def test_build_errors_reach_the_command_line_as_one_line(capsys):
    """A BuildError is a UserError: every `tsoc` command prints it as one
    `tsoc: error:` line and exits 1, without a traceback and without a
    handler of its own (here `tsoc sim`'s --sdram)."""
    from tensorsoc.cli import main
    from tensorsoc.soc.builder import BuildError
    from tensorsoc.spec.errors import UserError
    assert issubclass(BuildError, UserError)
    assert main(["sim", "--sdram", "ulx3s,l3=1", "--no-host"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tsoc: error: ") and "unknown option 'l3'" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_sim_sdram_smaller_than_main_ram_is_refused(tmp_path):
    from tensorsoc.soc.builder import BuildError, SimBuild, parse_sim_sdram
    with pytest.raises(BuildError, match="main_ram_size=16777216: the simulated SDR SDRAM M12L64322A"):
        SimBuild(DEFAULT, tmp_path, sdram=parse_sim_sdram("colorlight_i5"))


def test_sim_sdram_cli_takes_the_boards_memory_sizes():
    from tensorsoc.commands.soc import _sim_build
    from tensorsoc.cli import build_parser
    args = build_parser().parse_args(["sim", "--sdram", "colorlight_i5,l2_line=64", "--set", "memtest_size=4096"])
    build = _sim_build(args)
    from tensorsoc.soc.targets import TARGETS
    board = TARGETS["colorlight_i5"].config
    assert build.config.main_ram_size == board.main_ram_size == 8 * MiB
    assert build.config.model_window_size == board.model_window_size
    assert (build.config.np, build.config.memtest_size) == (DEFAULT.np, 4096)     # the rest: simulation's
    assert build.build_dir.name == "sim-sdram-colorlight_i5-l2_line-64"
    assert build.sdram.l2_cache_min_data_width == 64


def test_bench_host_takes_sdram_and_clocks(monkeypatch, capsys):
    """`tsoc bench host --sdram BOARD --sys-mhz ...` hands the SDRAM build and
    the sweep to the bench (not run here: minutes of simulation); a bad
    --sys-mhz is refused."""
    from tensorsoc.cli import main
    from tensorsoc.verification.soc import bench_host
    seen = {}

    def fake_main(args, build=None, sys_mhz=None, modes=None):
        seen.update(build=build, sys_mhz=sys_mhz, modes=modes)
        return 0
    monkeypatch.setattr(bench_host, "main", fake_main)
    assert main(["bench", "host", "--sdram", "ulx3s", "--set", "sys_clk_freq=32000000",
                 "--sys-mhz", "100,48", "--mode", "QPI"]) == 0
    assert seen["sys_mhz"] == [100.0, 48.0] and seen["modes"] == ["QPI"]
    assert seen["build"].sdram.module_name == "MT48LC16M16" and seen["build"].config.sys_clk_freq == 32_000_000
    assert main(["bench", "host", "--sys-mhz", "fast"]) == 1
    assert "--sys-mhz 'fast': expected MHz values" in capsys.readouterr().err
    assert main(["bench", "host", "--sys-mhz", "0"]) == 1
    assert "expected positive MHz values" in capsys.readouterr().err


def test_sim_soc_with_sdram_elaborates():
    """Main RAM behind LiteDRAM and its SDRAM model: the main_ram region is
    the configuration's size, the host windows at its top."""
    from tensorsoc.soc.builder import make_sim_soc, parse_sim_sdram
    cfg = DEFAULT.with_overrides(accelerator=0)
    soc = make_sim_soc(cfg, sdram=parse_sim_sdram("ulx3s"))
    soc.finalize()
    region = soc.bus.regions["main_ram"]
    assert (region.origin, region.size) == (MAIN_RAM_BASE, cfg.main_ram_size)
    assert hasattr(soc, "sdrphy") and soc.constants["SERVER_WINDOW_BASE"] == MAIN_RAM_BASE + 16 * MiB - 64 * 1024


def test_set_items_parsed_once():
    """Every command's --set FIELD=VALUE goes through SoCConfig.with_settings."""
    from tensorsoc.spec.config import ConfigError, SoCConfig
    c = SoCConfig().with_settings(["np=2", " vw = 0x4", "main_ram_size=0x1000000"])
    assert (c.np, c.vw, c.main_ram_size) == (2, 4, 1 << 24)
    for item, msg in (("np", "expected FIELD=VALUE"), ("=3", "expected FIELD=VALUE"),
                      ("np=two", "'two' is not an integer"), ("npp=2", "unknown configuration field(s): npp")):
        with pytest.raises(ConfigError, match=re.escape(msg)):
            SoCConfig().with_settings([item])


def test_destination_levels_default_to_the_source_levels():
    assert SoCConfig().dst_levels == 8 and SoCConfig(te_levels=4).dst_levels == 4
    assert SoCConfig(te_levels=4, te_dst_levels=2).dst_levels == 2
    with pytest.raises(ConfigError, match="te_dst_levels=5: .* or 2 to te_levels=4"):
        SoCConfig(te_levels=4, te_dst_levels=5)


def test_rspec_counts_the_process_spaces_a_pcore_has():
    """RSpec's internal memory per tile is one PCORE's data memories in each
    of its process spaces: one space (pcore_processes=1) is half of two, in
    the SoC's answer and in the host library's device model alike."""
    from tensorsoc.verification.host.device_model import expected_rspec
    two = SoCConfig(np=2, nt=8, vw=4, pcore_private_words=256, pcore_shared_words=1024)
    one = two.with_overrides(pcore_processes=1)
    assert two.rspec()["internal_kib"] == 2 * one.rspec()["internal_kib"] == (8 * 256 + 1024) * 2 * 2 // 1024
    assert expected_rspec(one) == one.rspec() and expected_rspec(two) == two.rspec()


def test_bench_layers_trace_needs_a_trace_buffer(capsys, tmp_path):
    """`tsoc bench layers --trace DIR` on a configuration without the
    activity trace (the Colorlight i5's te_trace_depth=0) is refused
    before anything runs, naming the field, instead of writing an empty
    report per layer."""
    from tensorsoc.cli import main
    out = tmp_path / "traces"
    assert main(["bench", "layers", "examples/mlp.yaml", "--set", "te_trace_depth=0", "--trace", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no activity trace buffer (te_trace_depth=0)" in err and "--set te_trace_depth=256" in err
    assert not out.exists()
