"""Record universes through a proxy in front of live MCP servers (`wt record`, DESIGN §8b)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .proxy import RecordingProxy
    from .redact import RedactionRules

__all__ = ["RecordingProxy", "RedactionRules"]

__getattr__, __dir__ = lazy_exports(
    globals(), {".proxy": ("RecordingProxy",), ".redact": ("RedactionRules",)}
)
