// Loopback bench for the host transports' bit-level encoding (not the
// tensorsoc protocol): an SPI/QPI slave written independently of the
// Python codec.  Even command bytes store their data bytes in a 64-byte
// memory; odd command bytes read it back after the 16 dummy clocks; 0x03
// returns the bytes 0x33 0x06 0x00 0x00 (a known word, to check the bit order
// without relying on the host's own encoder).  0x0C drives all DQ lines in
// its data phase (Q0..Q3 and MISO) and 0x0D keeps its pins driven after CS_N
// rises: misbehaviours the transports must detect.  The datasheet's pins:
// MOSI and MISO (SPI), Q0..Q3 (QPI); QPI is strapped by MISO low when rst
// falls; msb_first is a pin.  last_cmd/last_clocks/last_bytes report the last
// transaction as the device saw it.
module host_spi_loopback (
    input  wire       rst,
    input  wire       msb_first,
    input  wire       host_spi_clk,
    input  wire       host_spi_cs_n,
    input  wire       host_spi_mosi,
    input  wire       host_spi_miso_i,
    output wire       host_spi_miso_o,
    output wire       host_spi_miso_oe,
    input  wire [3:0] host_spi_q_i,
    output wire [3:0] host_spi_q_o,
    output wire [3:0] host_spi_q_oe,
    output reg        qpi,
    output reg  [7:0] last_cmd,
    output reg [15:0] last_clocks,
    output reg  [7:0] last_bytes,
    output reg  [7:0] last_byte0
);
    localparam DUMMY = 16;
    localparam CMD_ID = 8'h03, CMD_CLASH = 8'h0C, CMD_HOLD = 8'h0D;

    reg [7:0] mem [0:63];
    reg [7:0] cmd;

    always @(negedge rst) qpi <= ~host_spi_miso_i;

    // Data lines: the host's on line 0 (SPI: MOSI) or 3..0 (QPI: Q).
    wire [3:0] host_spi_dq_i = qpi ? host_spi_q_i : {3'b111, host_spi_mosi};

    wire [2:0] last_pos = qpi ? 3'd1 : 3'd7;

    // Receiver: falling edges.
    reg [15:0] rx_clocks;
    reg  [2:0] rx_pos;
    reg  [7:0] rx_index;
    reg  [7:0] rx_sr;
    wire [7:0] rx_next = qpi ? (msb_first ? {rx_sr[3:0], host_spi_dq_i} : {host_spi_dq_i, rx_sr[7:4]})
                             : (msb_first ? {rx_sr[6:0], host_spi_dq_i[0]} : {host_spi_dq_i[0], rx_sr[7:1]});
    always @(negedge host_spi_clk or posedge host_spi_cs_n) begin
        if (host_spi_cs_n) begin
            rx_clocks <= 0;
            rx_pos <= 0;
            rx_index <= 0;
        end else begin
            rx_clocks <= rx_clocks + 1;
            last_clocks <= rx_clocks + 1;
            rx_sr <= rx_next;
            if (rx_pos == last_pos) begin
                rx_pos <= 0;
                rx_index <= rx_index + 1;
                last_bytes <= rx_index + 1;
                if (rx_index == 0) begin
                    cmd <= rx_next;
                    last_cmd <= rx_next;
                end else begin
                    if (rx_index == 1) last_byte0 <= rx_next;
                    if (!cmd[0]) mem[rx_index[5:0] - 6'd1] <= rx_next;
                end
            end else begin
                rx_pos <= rx_pos + 1;
            end
        end
    end

    // Transmitter: rising edges.
    reg [15:0] tx_clocks;
    reg  [2:0] tx_pos;
    reg  [5:0] tx_index;
    reg  [7:0] tx_sr;
    reg  [3:0] o_r;
    reg        oe_r;
    wire [15:0] data_start = (qpi ? 16'd2 : 16'd8) + DUMMY;
    wire [7:0] id_byte = tx_index == 0 ? 8'h33 : tx_index == 1 ? 8'h06 : 8'h00;
    wire [7:0] tx_byte = tx_pos != 0 ? tx_sr : (cmd == CMD_ID ? id_byte : mem[tx_index]);
    always @(posedge host_spi_clk or posedge host_spi_cs_n) begin
        if (host_spi_cs_n) begin
            tx_clocks <= 0;
            tx_pos <= 0;
            tx_index <= 0;
        end else begin
            tx_clocks <= tx_clocks + 1;
            oe_r <= 0;
            if (cmd == CMD_CLASH && tx_clocks >= (qpi ? 16'd2 : 16'd8)) begin
                oe_r <= 1;
            end else if (cmd[0] && tx_clocks >= data_start) begin
                oe_r <= 1;
                if (qpi) begin
                    o_r <= msb_first ? tx_byte[7:4] : tx_byte[3:0];
                    tx_sr <= msb_first ? {tx_byte[3:0], 4'b0} : {4'b0, tx_byte[7:4]};
                end else begin
                    o_r <= {2'b0, msb_first ? tx_byte[7] : tx_byte[0], 1'b0};
                    tx_sr <= msb_first ? {tx_byte[6:0], 1'b0} : {1'b0, tx_byte[7:1]};
                end
                if (tx_pos == last_pos) begin
                    tx_pos <= 0;
                    tx_index <= tx_index + 1;
                end else begin
                    tx_pos <= tx_pos + 1;
                end
            end
        end
    end

    wire selected = !host_spi_cs_n || cmd == CMD_HOLD;
    wire [3:0] lanes = (qpi || cmd == CMD_CLASH) ? 4'b1111 : 4'b0010;
    wire [3:0] dq_oe = (selected && oe_r) ? lanes : 4'b0000;
    assign host_spi_q_oe = (qpi || cmd == CMD_CLASH) ? dq_oe : 4'b0000;
    assign host_spi_q_o = o_r;
    assign host_spi_miso_oe = (!qpi || cmd == CMD_CLASH) ? dq_oe[1] : 1'b0;
    assign host_spi_miso_o = o_r[1];
endmodule
