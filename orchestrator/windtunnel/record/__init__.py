"""Record universes through a proxy in front of live MCP servers (`wt record`, DESIGN §8b)."""

from __future__ import annotations

from .proxy import RecordingProxy
from .redact import RedactionRules

__all__ = ["RecordingProxy", "RedactionRules"]
