"""The server that serves a universe under a record mode (`modes.py`), the one place every
entry point (`wt serve`, packs, the pytest plugin) asks:

- `replay`: a `RecordedMCPServer`, as always;
- `live_misses` (`new_episodes`): a `LiveMissServer`;
- `record` (`once` with no file yet, `all`): a `RecordingToFile`, `wt record`'s proxy, which
  writes the universe when it stops (atomically, redacted).

The live upstream is the one given, else the one the universe recorded (`meta.upstream`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..mcp.recorded import RecordedMCPServer
from ..mcp.spi import MCPServer
from ..miss_answers import SynthesizeHook
from ..universe import load_universe
from .limits import DEFAULT_TIMEOUT_S
from .live_misses import LiveMissServer
from .modes import RecordMode, served_as
from .proxy import RecordingProxy
from .redact import RedactionRules
from .upstream_source import recorded_upstream

__all__ = ["RecordingToFile", "server_for_mode"]


class RecordingToFile(RecordingProxy):
    """`wt record`'s proxy for one universe file: written once serving ends, however it ends,
    when anything passed through it (an upstream that never started leaves the file as it was,
    rather than replacing it with an empty recording)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        upstream: str | Sequence[str],
        *,
        name: str = "upstream",
        redact: RedactionRules | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__(upstream, name=name, redact=redact, timeout_s=timeout_s)
        self.path = Path(path)

    async def serve(self, **options: Any) -> None:
        try:
            await super().serve(**options)
        finally:
            self._save()

    async def serve_stdio(self) -> None:
        try:
            await super().serve_stdio()
        finally:
            self._save()

    def _save(self) -> None:
        if self.tap.log:
            self.save(self.path)


def server_for_mode(
    path: str | os.PathLike[str],
    *,
    mode: RecordMode,
    upstream: str | Sequence[str] | None = None,
    redact: RedactionRules | None = None,
    name: str | None = None,
    scenario: str | None = None,
    synthesize: SynthesizeHook | None = None,
    fast_path: bool = True,
    own_identity: bool = False,
    both_eras: bool = False,
) -> MCPServer:
    """The server for `path` under `mode` (see the module)."""
    served = served_as(mode, path)
    if served == "replay":
        return RecordedMCPServer(
            path,
            name=name,
            scenario=scenario,
            synthesize=synthesize,
            fast_path=fast_path,
            own_identity=own_identity,
            both_eras=both_eras,
        )
    if upstream is None:
        if not Path(path).exists():
            raise ConfigError(
                f"record mode {mode!r} records this universe: say where the live server is "
                "(an upstream URL or command)",
                file=os.fspath(path),
            )
        upstream = recorded_upstream(load_universe(path), os.fspath(path))
    if served == "live_misses":
        return LiveMissServer(
            path,
            upstream=upstream,
            redact=redact,
            name=name,
            scenario=scenario,
            synthesize=synthesize,
            fast_path=fast_path,
            own_identity=own_identity,
            both_eras=both_eras,
        )
    return RecordingToFile(path, upstream, name=name or "upstream", redact=redact)
