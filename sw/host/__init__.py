"""Host side of the tensorsoc SPI/QPI protocol: protocol definition, device API, transports."""
