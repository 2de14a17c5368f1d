"""Golden models: the exact arithmetic and behaviour the hardware is checked against."""
