"""cocotb testbenches and build helpers for the PCORE array."""
