"""Servers that speak MCP: recorded universes, hand-built mocks, and the SPI they share."""

from __future__ import annotations

from ._shapes import ServedSurface, ToolSpec
from .handle import ServerHandle
from .mock import MockMCPServer
from .recorded import RecordedMCPHandle, RecordedMCPServer
from .spi import MCPServer

__all__ = [
    "MCPServer",
    "MockMCPServer",
    "RecordedMCPHandle",
    "RecordedMCPServer",
    "ServedSurface",
    "ServerHandle",
    "ToolSpec",
]
