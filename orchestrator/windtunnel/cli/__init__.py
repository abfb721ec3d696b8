"""The `wt` command line: the only place that calls `trio.run` and configures logging."""
