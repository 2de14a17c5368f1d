// Verilator harness for the tensorsoc simulation SoC.
//
// Drives the clock and reset, prints the UART console stream, stops when the
// firmware writes SimControl.finish (exit status = the firmware's code) or
// after +max-cycles=N (exit status 124), and reports simulated cycles and the
// simulated clock rate achieved.  +trace=FILE.fst writes an FST waveform.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "Vtensorsoc.h"
#include "verilated.h"
#include "verilated_fst_c.h"

#ifndef SIM_CLK_FREQ
#define SIM_CLK_FREQ 100000000
#endif

static const int RESET_CYCLES = 16;
static const int EXIT_TIMEOUT = 124;

int main(int argc, char **argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    const char *arg;
    uint64_t max_cycles = 0;
    if ((arg = ctx->commandArgsPlusMatch("max-cycles=")) && *arg)
        max_cycles = strtoull(arg + strlen("+max-cycles="), nullptr, 0);
    std::string trace_file;
    if ((arg = ctx->commandArgsPlusMatch("trace=")) && *arg)
        trace_file = arg + strlen("+trace=");
    bool quiet = (arg = ctx->commandArgsPlusMatch("quiet")) && *arg;
    // Boot flags for the firmware (cores/sim_control.py): by default the
    // firmware exits after its boot checks, as no host drives the SPI port.
    unsigned boot_flags = TSOC_DEFAULT_BOOT_FLAGS;   // exit_after_boot, from soc/builder.py
    if ((arg = ctx->commandArgsPlusMatch("boot-flags=")) && *arg)
        boot_flags = strtoul(arg + strlen("+boot-flags="), nullptr, 0);

    auto top = std::make_unique<Vtensorsoc>(ctx.get());
    std::unique_ptr<VerilatedFstC> tfp;
    if (!trace_file.empty()) {
        ctx->traceEverOn(true);
        tfp = std::make_unique<VerilatedFstC>();
        top->trace(tfp.get(), 99);
        tfp->open(trace_file.c_str());
        fprintf(stderr, "[sim] writing waveform to %s\n", trace_file.c_str());
    }
    // Half a clock period in picoseconds (FST timescale is 1 ps).
    const uint64_t half_period_ps = 500000000000ull / SIM_CLK_FREQ;
#ifdef ACCEL_CLK_FREQ
    // The accelerator's clock (SoCConfig.accel_clk_freq): toggled on its own
    // time line, between the sys edges (an edge at the same picosecond as a
    // sys edge just before it).
    const uint64_t accel_half_ps = 500000000000ull / ACCEL_CLK_FREQ;
    uint64_t accel_next = accel_half_ps;
    top->accel_clk = 0;
    auto accel_until = [&](uint64_t t) {
        while (accel_next < t) {
            top->accel_clk = !top->accel_clk;
            top->eval();
            if (tfp) tfp->dump(accel_next);
            accel_next += accel_half_ps;
        }
    };
#else
    auto accel_until = [](uint64_t) {};
#endif

    top->sys_clk = 0;
    top->sys_rst = 1;
    top->serial_source_ready = 1;
    top->serial_sink_valid = 0;
    top->serial_sink_data = 0;
    top->sim_ctrl_boot_flags = boot_flags;
    // Host port idle: CS_N high, SCLK low, MISO pulled up (SPI mode).
    top->host_spi_cs_n = 1;
    top->host_spi_clk = 0;
    top->host_spi_mosi = 1;
    top->host_spi_miso_i = 1;
    top->host_spi_q_i = 0xf;
    top->sensor_valid = 0;
    top->sensor_data = 0;

    uint64_t cycle = 0;
    int status = -1;
    auto t0 = std::chrono::steady_clock::now();
    while (!ctx->gotFinish()) {
        accel_until(2 * cycle * half_period_ps + 1);
        top->sys_clk = 0;
        top->eval();
        if (tfp) tfp->dump(2 * cycle * half_period_ps);
        // Outputs are stable between edges: sample them before the rising edge.
        if (top->serial_source_valid && top->serial_source_ready) {
            putchar(top->serial_source_data);
            if (top->serial_source_data == '\n') fflush(stdout);
        }
        if (top->sim_ctrl_finish) {
            status = top->sim_ctrl_exit_code;
            break;
        }
        if (max_cycles && cycle >= max_cycles) {
            status = EXIT_TIMEOUT;
            fflush(stdout);
            fprintf(stderr, "\n[sim] stopped after +max-cycles=%llu cycles without the firmware finishing\n",
                    (unsigned long long)max_cycles);
            break;
        }
        top->sys_rst = cycle < RESET_CYCLES;
        accel_until((2 * cycle + 1) * half_period_ps + 1);
        top->sys_clk = 1;
        top->eval();
        if (tfp) tfp->dump((2 * cycle + 1) * half_period_ps);
        cycle++;
    }
    auto t1 = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(t1 - t0).count();
    fflush(stdout);
    if (tfp) tfp->close();
    top->final();
    if (status < 0) status = 1;  // $finish from the design without SimControl
    if (!quiet) {
        double sim_seconds = (double)cycle / SIM_CLK_FREQ;
        fprintf(stderr, "[sim] %llu cycles (%.3f ms at %.0f MHz) in %.2f s wall: %.2f MHz simulated; exit status %d\n",
                (unsigned long long)cycle, sim_seconds * 1e3, SIM_CLK_FREQ / 1e6, seconds,
                seconds > 0 ? cycle / seconds / 1e6 : 0.0, status);
    }
    // Machine-readable summary line for tools.
    fprintf(stderr, "[sim-summary] cycles=%llu wall_s=%.6f status=%d\n", (unsigned long long)cycle, seconds, status);
    return status;
}
