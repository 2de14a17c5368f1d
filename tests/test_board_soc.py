"""The ULX3S's SoC in simulation: its accelerator geometry (1 x 8 x 4), its
main RAM behind LiteDRAM and the SDRAM model with its L2 cache (`--sdram
ulx3s`), the accelerator in its own clock domain at the board's 33.3 : 32
ratio, the host on QPI (docs/fpga.md, "Simulating the board SoC").

The model image (relu_cnn3 at VW = 4: 17,892 bytes, 70 WModel chunks) is
larger than the 8 KiB L2 cache, so once the cache is full every word the
host writes costs a write-back and a refill.  Until the host port's write
FIFO held a whole chunk, WModel failed there at chunk 33 (docs/host_port.md,
"Clock ratio")."""

import json

import pytest

from tensorsoc.soc.builder import ROOT

pytestmark = pytest.mark.sim

BOARD_SIM = ["--sdram", "ulx3s", "--set", "np=1", "--set", "vw=4",
             "--set", f"accel_clk_freq={100_000_000 * 100 // 96}"]   # sys 100 MHz : accel = 32 : 33.3


def test_board_soc_runs_a_model_bit_exact_on_the_accelerator(tmp_path):
    from tensorsoc.cli import main
    out = tmp_path / "board.json"
    status = main(["sim", *BOARD_SIM, "--qpi", "--skip-memtest", "--no-baseline", "--require-accel",
                   "--model", str(ROOT / "examples" / "relu_cnn3.yaml"), "--json", str(out),
                   "--build-dir", str(ROOT / "build" / "test" / "board-soc")])
    assert status == 0
    data = json.loads(out.read_text())
    assert data["bit_exact"] is True and data["mismatched_bytes"] == 0
    assert data["layers_on_accelerator"] == 3 and data["layers_in_software"] == []
    assert data["roofline"]["peak_macs_per_clock"] == 4
