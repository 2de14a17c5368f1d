"""Golden models: bit-exact references the hardware is compared against."""
