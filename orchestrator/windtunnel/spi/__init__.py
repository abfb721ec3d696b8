"""windtunnel-bench's `windtunnel.spi` package, where its code imports the server SPI from."""
