// The simulation SoC's own clock (cores/sim_control.py, SimClock): a
// generator inside the Verilated model, so a cocotb testbench does not step
// the simulator from Python or from the GPI at every clock edge.  Only with
// TSOC_SIM_CLOCK_TIMING defined (the cocotb build, verilated with --timing);
// otherwise (the C++ harness) the output is constant 0 and the clock comes
// from the sys_clk pin alone.
`timescale 1ps/1ps
module tsoc_sim_clock #(parameter integer HALF_PS = 5000) (
    input  wire en,
    output reg  clk
);
    initial clk = 1'b0;
`ifdef TSOC_SIM_CLOCK_TIMING
    always begin
        #(HALF_PS);
        if (en)
            clk = ~clk;
        else
            clk = 1'b0;
    end
`endif
endmodule
