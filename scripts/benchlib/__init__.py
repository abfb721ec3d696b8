"""Wind Tunnel benchmarks, driven by `scripts/bench`: one module per benchmark."""
