"""pyuvm verification environment of the tensorsoc SoC (docs/verification.md)."""
