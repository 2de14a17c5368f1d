"""The Verilator harness behind `make sim`: boot, memory test, exit status,
the server-window boot path (WServer) and waveforms."""

import subprocess

import pytest

from tensorsoc.spec.memory_map import MEM_MAP
from tensorsoc.spec.server_image import HEADER_SIZE

pytestmark = pytest.mark.sim


def run(build, tmp_path, image=None, **kw):
    run_dir = build.prepare_run_dir(tmp_path / "run", image)
    out = tmp_path / "console.txt"
    with open(out, "w") as f:
        status = build.run(run_dir=run_dir, stdout=f, **kw)
    return status, out.read_text()


def test_rom_firmware_boots_and_passes_memtest(soc_simulator, tmp_path):
    status, console = run(soc_simulator, tmp_path, max_cycles=20_000_000)
    assert status == 0, console
    assert "tensorsoc MCORE firmware (rom)" in console
    cfg = soc_simulator.config
    assert f"NP={cfg.np} NT={cfg.nt} VW={cfg.vw}" in console
    assert f"main RAM {cfg.main_ram_size // 1024} KiB" in console
    assert "memtest: PASS (0 errors" in console
    assert "boot:" not in console  # nothing in the server window


def test_quick_memtest_keeps_the_bus_checks_and_says_what_it_leaves_out(soc_simulator, tmp_path):
    """make sim's boot flag: the whole RAM's bus checks, a 4 KiB random fill."""
    from tensorsoc.cores.sim_control import BOOT_FLAG
    flags = BOOT_FLAG["exit_after_boot"] | BOOT_FLAG["quick_memtest"]
    status, console = run(soc_simulator, tmp_path, max_cycles=20_000_000, boot_flags=flags)
    assert status == 0, console
    cfg = soc_simulator.config
    line = next(l for l in console.splitlines() if l.startswith("memtest: main RAM"))
    base = MEM_MAP["main_ram"]
    assert f"({cfg.main_ram_size // 1024} KiB), random fill of {base:#010x}..{base + 4095:#010x} (4 KiB), " \
           f"quick: not the full " \
           f"test's {cfg.memtest_size // 1024} KiB" in line, line
    assert "memtest: PASS (0 errors" in console


def test_uploaded_server_runs_from_window(soc_simulator, tmp_path):
    image = soc_simulator.server_image()
    status, console = run(soc_simulator, tmp_path, image, max_cycles=20_000_000)
    assert status == 0, console
    assert f"boot: running uploaded server ({len(image) - HEADER_SIZE} bytes)" in console
    assert "tensorsoc MCORE firmware (uploaded)" in console
    assert "memtest: PASS (0 errors" in console


def test_corrupt_server_image_falls_back_to_rom(soc_simulator, tmp_path):
    image = bytearray(soc_simulator.server_image())
    image[HEADER_SIZE + 100] ^= 0x01
    status, console = run(soc_simulator, tmp_path, bytes(image), max_cycles=20_000_000)
    assert status == 0, console
    assert "boot: server image CRC mismatch: running ROM server" in console
    assert "tensorsoc MCORE firmware (rom)" in console


def test_oversize_length_falls_back_to_rom(soc_simulator, tmp_path):
    image = bytearray(soc_simulator.server_image())
    image[4:8] = (0x7fffffff).to_bytes(4, "little")
    status, console = run(soc_simulator, tmp_path, bytes(image), max_cycles=20_000_000)
    assert status == 0, console
    assert "out of range: running ROM server" in console


def test_cycle_limit_and_fst_waveform(soc_simulator, tmp_path):
    fst = tmp_path / "wave.fst"
    proc = subprocess.run([str(soc_simulator.simulator), "+max-cycles=3000", f"+trace={fst}"],
                          cwd=soc_simulator.gateware_dir, capture_output=True, text=True)
    assert proc.returncode == 124
    assert "stopped after +max-cycles=3000" in proc.stderr
    assert "[sim-summary] cycles=3000 " in proc.stderr
    assert fst.stat().st_size > 1000
    assert fst.read_bytes()[0] == 0  # FST header block type
