"""`RecordedMCPServer`: a universe served to agents, in process or over MCP."""

from __future__ import annotations

import os
from typing import Any

from ..calls import MCPCall
from ..errors import UnknownToolError
from ..miss_answers import SynthesizeHook
from ..replay import Replay
from ..universe import Universe, load_universe

__all__ = ["RecordedMCPServer"]


class RecordedMCPServer:
    """Serves one universe; every answer comes from the in-process replay engine."""

    def __init__(
        self,
        path_or_universe: str | os.PathLike[str] | Universe,
        *,
        synthesize: SynthesizeHook | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(path_or_universe, Universe):
            universe = path_or_universe
            default_name = "universe"
        else:
            universe = load_universe(path_or_universe)
            default_name = os.path.basename(os.fspath(path_or_universe)).split(".")[0]
        self.name = name or default_name
        self.replay = Replay(universe, synthesize=synthesize, upstream=self.name)

    @property
    def universe(self) -> Universe:
        return self.replay.universe

    def call_tool(self, tool_name: str, args: dict[str, Any]) -> Any:
        """Resolve a call exactly as a live MCP call would and return the bare payload."""
        call = self.replay.call(tool_name, args)
        if call.divergence is not None and call.divergence["reason"] == "unknown_tool":
            raise UnknownToolError(tool_name, self.replay.index.tool_names)
        return call.result

    def call_log(self) -> list[MCPCall]:
        """Every call so far, in arrival order."""
        return self.replay.call_log()
