"""`RecordedMCPServer`: a universe served to agents, in process or over MCP."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from typing import Any, cast

from ..calls import MCPCall
from ..errors import ConfigError, UnknownToolError, WindtunnelError
from ..faults.engine import FaultInjector, check_faults_against
from ..faults.spec import FAULT_EXTRA_KEY, Fault, faults_for_failure_mode
from ..matching import Hit, Miss, SequenceState
from ..miss_answers import SynthesizeHook
from ..replay import CallListener, ClientExchange, InputRequired, Replay
from ..surface_matching import REQUEST_METHODS
from ..universe import Universe, flatten_wire_args, load_universe
from ._faulted import carry_out
from ._shapes import Exchange, ServedSurface, SessionState, SyncAnswer, ToolSpec
from .handle import ServerHandle
from .spi import MCPServer

__all__ = ["InjectedFaultError", "RecordedMCPHandle", "RecordedMCPServer", "upstream_name"]

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
        both_eras: bool = False,
        faults: Sequence[Fault | str] = (),
        fault_seed: int = 0,
        unit_id: str = "",
    ) -> None:
        super().__init__()
        self.fast_path = fast_path
        self.own_identity = own_identity
        """Present Wind Tunnel's own `serverInfo`, capabilities and no instructions instead of
        the recorded server's (`wt serve --own-identity`)."""
        self.both_eras = both_eras
        """Serve both protocol eras even when the recorded server spoke only the `initialize`
        handshake (`wt serve --both-eras`); by default the replay keeps its era and version."""
        if isinstance(path_or_universe, Universe):
            universe = path_or_universe
            default_name = "universe"
        else:
            universe = load_universe(path_or_universe)
            default_name = upstream_name(path_or_universe)
        self.name = name or default_name
        self.replay = Replay(universe, synthesize=synthesize, upstream=self.name, scenario=scenario)
        self._sequence_tools = self.ordered_tools()
        self._stdio = False
        self.fault_seed = fault_seed
        """With `unit_id`, what a fault's `fraction` is drawn from (`faults.spec.draw`)."""
        self.unit_id = unit_id
        self.set_faults([*universe.faults, *faults_for_failure_mode(list(faults))])

    @property
    def faults(self) -> tuple[Fault, ...]:
        """The faults injected into this server's answers (the universe's, then the others)."""
        injector = self.replay.faults
        return () if injector is None else injector.faults

    def set_faults(self, faults: Sequence[Fault | str]) -> None:
        """Inject `faults` (objects or command-line spellings) from the next call on, instead
        of those before; each is checked against the universe (`ConfigError`). Calls are
        counted afresh. An empty list serves the recording as it is."""
        parsed = faults_for_failure_mode(list(faults))
        check_faults_against(parsed, self.universe, error=ConfigError, path="faults")
        self.replay.faults = (
            FaultInjector(parsed, self.universe, seed=self.fault_seed, unit_id=self.unit_id)
            if parsed
            else None
        )

    def configure_failure_mode(self, mode: str | Fault | Sequence[str | Fault] | None) -> None:
        """windtunnel-bench's failure injection: `None` serves the recording again; its modes
        (`timeout`, `malformed_json`, `empty_unexpected`, `auth_scope_denied`) fault every call
        as `faults.spec.FAILURE_MODES` says; a `Fault`, a spelling (`"charge#2=timeout"`) or a
        list of them injects those. The universe's own `faults` stay."""
        self.set_faults([*self.universe.faults, *faults_for_failure_mode(mode)])

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
        return await self.exchange_and_finish(tool_name, args, outcome, messages, exchange, session)

    async def exchange_and_finish(
        self,
        tool_name: str,
        args: dict[str, Any],
        outcome: Hit | Miss,
        messages: list[dict[str, Any]],
        exchange: Exchange,
        session: SessionState | None,
    ) -> MCPCall:
        """The second half of a call `begin` resolved: its recording's messages exchanged with
        the live client, then answered and logged; or, when the exchange asks the client for
        input first (2026-07-28, `InputRequired`), nothing consumed and nothing logged."""
        try:
            exchanged = await exchange(messages) if messages else ClientExchange()
        except InputRequired:
            self.replay.release(outcome, sequence=self._session_sequence(tool_name, session))
            raise
        return self.replay.finish(tool_name, args, outcome, exchanged)

    async def deliver(self, call: MCPCall) -> None:
        if self.replay.faults is not None:
            # After the report: a call that is never answered (timeout, drop) is evidence too.
            await carry_out(call, stdio=self._stdio)

    async def serve_stdio(self) -> None:
        self._stdio = True  # a `drop` fault ends the process, not a connection
        await super().serve_stdio()

    def fast_path_tools(self) -> frozenset[str]:
        """A faulted tool's calls go to the SDK: over stdio the fast path answers one line at
        a time, and a call that waits (timeout, delay) must not hold up the others."""
        tools = super().fast_path_tools()
        injector = self.replay.faults
        if injector is None:
            return tools
        targeted = injector.targeted_tools()
        return frozenset() if targeted is None else tools - targeted

    def _session_sequence(
        self, tool_name: str, session: SessionState | None
    ) -> SequenceState | None:
        if session is None or tool_name not in self._sequence_tools:
            return None
        return cast("SequenceState | None", session.get(_SEQUENCE))

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
            protocol_version=(
                None
                if self.both_eras or universe.server is None
                else universe.server.protocol_version
            ),
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
        if self.reporter is not None or self.replay.faults is not None:
            return None  # the router's backpressure is awaited; a fault may wait
        replay = self.replay
        return SyncAnswer(
            answer=partial(replay.call, tell_listeners=False), written=replay.tell_listeners
        )

    def call_tool(self, tool_name: str, args: dict[str, Any] | None = None) -> Any:
        """Resolve a call exactly as a live MCP call would and return the bare payload."""
        call = self.replay.call(tool_name, dict(args or {}))
        if call.divergence is not None and call.divergence["reason"] == "unknown_tool":
            raise UnknownToolError(tool_name, self.replay.index.tool_names)
        if FAULT_EXTRA_KEY in call.extra:
            _raise_in_process(call)
        return call.result

    def call_log(self) -> list[MCPCall]:
        """Every call so far, in arrival order."""
        return self.replay.call_log()

    def reset_call_log(self) -> None:
        """Forget the calls so far and what sequence-mode tools consumed: the next run starts
        as a fresh server would (windtunnel-bench's runner calls this between runs)."""
        self.replay.reset()


def _raise_in_process(call: MCPCall) -> None:
    """In process, a fault that is no answer (`error`, `timeout`, `drop`) raises
    `InjectedFaultError`; a delay is not waited (a synchronous call has no clock to wait on)."""
    evidence = call.extra[FAULT_EXTRA_KEY]
    if evidence["kind"] in ("error", "timeout", "drop"):
        raise InjectedFaultError(call.tool_name, evidence)


class InjectedFaultError(WindtunnelError):
    """An in-process `call_tool` whose call drew a fault that gives no answer."""

    def __init__(self, tool_name: str, evidence: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.evidence = evidence
        super().__init__(f"fault {evidence['id']!r} ({evidence['kind']}) on {tool_name!r}")
