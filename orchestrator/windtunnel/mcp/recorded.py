"""`RecordedMCPServer`: a universe served to agents, in process or over MCP."""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from ..calls import MCPCall
from ..errors import UnknownToolError
from ..matching import Hit, Miss
from ..miss_answers import SynthesizeHook
from ..replay import CallListener, ClientExchange, Replay
from ..surface_matching import REQUEST_METHODS
from ..universe import Universe, flatten_wire_args, load_universe
from ._sdk_server import Exchange, SessionState, SyncAnswer, ToolSpec
from ._surface_server import ServedSurface
from .handle import ServerHandle
from .spi import MCPServer

__all__ = ["RecordedMCPHandle", "RecordedMCPServer", "upstream_name"]

RecordedMCPHandle = ServerHandle
"""windtunnel-bench's name for what `RecordedMCPServer(...).start()` returns."""

_SEQUENCE = "windtunnel.sequence"
"""Where an MCP session's state keeps its sequence position (`Replay.session_sequence_state`)."""


def upstream_name(path: str | os.PathLike[str]) -> str:
    """`crm.universe.json` → `crm`."""
    return os.path.basename(os.fspath(path)).split(".")[0] or "universe"


class RecordedMCPServer(MCPServer):
    """Serves one universe; every answer comes from the in-process replay engine."""

    def __init__(
        self,
        path_or_universe: str | os.PathLike[str] | Universe,
        *,
        synthesize: SynthesizeHook | None = None,
        name: str | None = None,
        scenario: str | None = None,
        fast_path: bool = True,
        own_identity: bool = False,
    ) -> None:
        super().__init__()
        self.fast_path = fast_path
        self.own_identity = own_identity
        """Present Wind Tunnel's own `serverInfo`, capabilities and no instructions instead of
        the recorded server's (`wt serve --own-identity`)."""
        if isinstance(path_or_universe, Universe):
            universe = path_or_universe
            default_name = "universe"
        else:
            universe = load_universe(path_or_universe)
            default_name = upstream_name(path_or_universe)
        self.name = name or default_name
        self.replay = Replay(universe, synthesize=synthesize, upstream=self.name, scenario=scenario)
        self._sequence_tools = self.ordered_tools()

    def rename(self, name: str) -> None:
        self.name = name
        self.replay.upstream = name

    @property
    def log_events(self) -> bool:
        return self.replay.log_events

    @log_events.setter
    def log_events(self, value: bool) -> None:
        self.replay.log_events = value

    @property
    def universe(self) -> Universe:
        return self.replay.universe

    def add_listener(self, listener: CallListener) -> None:
        """Call `listener(call)` for every call, in log order, once it is logged (over stdio,
        once its answer is written, from the thread that wrote it: the listener must be
        thread-safe there)."""
        self.replay.listeners.append(listener)

    async def answer_exchanging(
        self,
        tool_name: str,
        args: dict[str, Any],
        exchange: Exchange,
        session: SessionState | None = None,
    ) -> MCPCall:
        args = flatten_wire_args(tool_name, args)
        outcome, messages = self.begin(tool_name, args, session)
        exchanged = await exchange(messages) if messages else ClientExchange()
        return self.replay.finish(tool_name, args, outcome, exchanged)

    def begin(
        self, tool_name: str, args: dict[str, Any], session: SessionState | None
    ) -> tuple[Hit | Miss, list[dict[str, Any]]]:
        """`Replay.begin` at the MCP session's own sequence position, if it has one."""
        sequence = None
        if session is not None and tool_name in self._sequence_tools:
            # Made on the session's first sequence-mode call: the state is as large as the
            # universe's recordings, and most sessions of most universes never need one.
            sequence = session.get(_SEQUENCE)
            if sequence is None:
                sequence = session[_SEQUENCE] = self.replay.session_sequence_state()
        return self.replay.begin(tool_name, args, sequence=sequence)

    def messaging_tools(self) -> frozenset[str]:
        return frozenset(r.tool_name for r in self.universe.recordings if r.server_messages)

    def ordered_tools(self) -> frozenset[str]:
        return frozenset(t.name for t in self.universe.tools if t.mode == "sequence")

    def tool_specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(t.name, t.input_schema, t.description, t.listed()) for t in self.universe.tools
        ]

    def surface(self) -> ServedSurface:
        universe = self.universe
        return ServedSurface(
            server=None if self.own_identity else universe.server,
            resources=universe.resources,
            resource_templates=universe.resource_templates,
            prompts=universe.prompts,
            requests=frozenset(
                method
                for method, recorded in zip(
                    REQUEST_METHODS,
                    (universe.resource_reads, universe.prompt_gets, universe.completions),
                    strict=True,
                )
                if recorded
            ),
        )

    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        return self.replay.call(tool_name, args)

    async def answer_request(self, method: str, target: str, args: dict[str, Any]) -> MCPCall:
        return self.replay.request(method, target, args)

    def request(self, method: str, target: str, args: dict[str, Any] | None = None) -> MCPCall:
        """Answer a request other than `tools/call` in process, exactly as over MCP (same
        matching, same divergence, same call-log entry): `request("resources/read", uri)`,
        `request("prompts/get", name, arguments)`, `request("completion/complete", target,
        {"ref": ..., "argument": ..., "context": ...})`. The call's `result` is the recorded
        answer; a divergence is in its `divergence`."""
        if method not in REQUEST_METHODS:
            raise ValueError(f"{method!r} is not one of {', '.join(REQUEST_METHODS)}")
        return self.replay.request(method, target, dict(args or {}))

    def sync_answer(self) -> SyncAnswer | None:
        if self.reporter is not None:
            return None  # the router's backpressure is awaited
        replay = self.replay
        return SyncAnswer(
            answer=partial(replay.call, tell_listeners=False), written=replay.tell_listeners
        )

    def call_tool(self, tool_name: str, args: dict[str, Any] | None = None) -> Any:
        """Resolve a call exactly as a live MCP call would and return the bare payload."""
        call = self.replay.call(tool_name, dict(args or {}))
        if call.divergence is not None and call.divergence["reason"] == "unknown_tool":
            raise UnknownToolError(tool_name, self.replay.index.tool_names)
        return call.result

    def call_log(self) -> list[MCPCall]:
        """Every call so far, in arrival order."""
        return self.replay.call_log()

    def reset_call_log(self) -> None:
        """Forget the calls so far and what sequence-mode tools consumed: the next run starts
        as a fresh server would (windtunnel-bench's runner calls this between runs)."""
        self.replay.reset()
