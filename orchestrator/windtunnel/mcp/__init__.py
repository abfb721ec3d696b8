"""Servers that speak MCP: recorded universes, hand-built mocks, and the SPI they share."""

from __future__ import annotations

from .recorded import RecordedMCPServer

__all__ = ["RecordedMCPServer"]
