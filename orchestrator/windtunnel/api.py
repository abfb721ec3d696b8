"""The public API (DESIGN §2): names here are fixed by the user documentation."""

from __future__ import annotations

from .calls import MCPCall
from .errors import UniverseError, UnknownToolError, WindtunnelError
from .freeze import freeze_universe
from .universe import Matching, Recording, Universe, UniverseTool, load_universe

__all__ = [
    "MCPCall",
    "Matching",
    "Recording",
    "Universe",
    "UniverseError",
    "UniverseTool",
    "UnknownToolError",
    "WindtunnelError",
    "freeze_universe",
    "load_universe",
]
