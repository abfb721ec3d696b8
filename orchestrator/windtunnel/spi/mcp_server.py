"""windtunnel-bench's `windtunnel.spi.mcp_server` names: `MCPCall`, `MCPServer` (ours:
`windtunnel.mcp.MCPServer`) and `MCPHandle` (what `MCPServer.start()` returns to synchronous
code: `windtunnel.mcp.ServerHandle`)."""

from __future__ import annotations

from ..calls import MCPCall
from ..mcp.handle import ServerHandle as MCPHandle
from ..mcp.spi import MCPServer

__all__ = ["MCPCall", "MCPHandle", "MCPServer"]
