"""Wind Tunnel: rerun AI agents against recorded MCP upstreams."""

__version__ = "0.1.0"
