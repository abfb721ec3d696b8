"""The replay engine: one server instance's view of a universe (DESIGN §4).

Every answer a recorded server gives comes from `Replay.call`: it resolves the call, applies the
miss policy, records a divergence (`divergence`), appends the call log and tells its listeners
(`call_log`: the router, or the transport once its answer is written). Transports only translate.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import msgspec
import structlog

from .call_log import CallListener, CallLog
from .calls import MCPCall, is_tool_result
from .canonical import is_json_value
from .divergence import (
    Divergence,
    divergence_call,
    log_divergence,
    request_divergence_call,
    unknown_tool_call,
)
from .errors import HookRequiredError
from .faults.engine import FaultInjector, log_injected
from .matching import Hit, Miss, Nearest, SequenceState, UniverseIndex
from .miss_answers import SynthesizeHook, empty_result, fail_call_result
from .surface_matching import SurfaceIndex
from .universe import Universe, flatten_wire_args, validate_universe

__all__ = ["CallListener", "ClientExchange", "InputRequired", "MissAnswer", "Replay"]

logger = structlog.get_logger("windtunnel")


class ClientExchange(NamedTuple):
    """How a recording's server messages went with the live client (stdio): how many were not
    sent, and for the first request the client answered otherwise than when recorded, the
    evidence (`asked`, `answered_then`, `answered_now`)."""

    unsent: int = 0
    differs: dict[str, Any] | None = None


class InputRequired(Exception):
    """Raised by an exchange instead of answering: the live request is answered with this
    2026-07-28 `input_required` result (`inputRequests`, `requestState`), and the call is neither
    answered nor logged until the client retries it with the input."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input_required")
        self.result = result


class MissAnswer(NamedTuple):
    """What a miss policy gives the agent: the payload, whether it is a tool error, the
    recording it served (`matched`) and a fault that fails the scenario (a broken hook)."""

    result: Any
    is_error: bool = False
    matched: int | None = None
    fault: str | None = None


class Replay:
    """Resolves calls against one universe, with its own sequence state and call log."""

    def __init__(
        self,
        universe: Universe,
        *,
        synthesize: SynthesizeHook | None = None,
        upstream: str | None = None,
        scenario: str | None = None,
        index: UniverseIndex | None = None,
    ) -> None:
        if index is None:
            validate_universe(universe)
            index = UniverseIndex(universe)
        needs_hook = universe.uses_synthesize()
        if needs_hook and synthesize is None:
            raise HookRequiredError(
                "the universe answers misses with `synthesize` for "
                f"{', '.join(needs_hook)}; pass synthesize=<callable>"
            )
        self.universe = universe
        self.index = index
        self.synthesize = synthesize
        self.upstream = upstream
        self.scenario = scenario
        self.log = CallLog()
        self.log_events = True
        self.faults: FaultInjector | None = None
        """Faults injected into tools/call answers (`faults.engine`); None serves the recording."""
        self._state = SequenceState(len(universe.recordings))
        self._surface: SurfaceIndex | None = None

    def request(self, method: str, target: str, args: dict[str, Any]) -> MCPCall:
        """Answer a request other than `tools/call` (`surface_matching.REQUEST_METHODS`, logged
        as `MCPCall` describes) from the recording, and record it; one the recording does not
        answer is a divergence, answered by the method's miss policy: its JSON-RPC error (sent
        by the transport for an error entry) or its empty result."""
        with self.log.lock:
            started_at = time.time()
            t0 = time.perf_counter()
            if self._surface is None:
                self._surface = SurfaceIndex(self.universe)
            index = self._surface.find(method, target, args)
            if index is None:
                call = request_divergence_call(
                    method,
                    target,
                    args,
                    upstream=self.upstream,
                    policy=self.universe.matching.policy_for_request(method),
                )
                if self.log_events:
                    log_divergence(call, scenario=self.scenario)
            else:
                call = MCPCall(
                    method=method,
                    tool_name=target,
                    args=args,
                    result=self._recorded_answer(method, index),
                    extra={"match": Hit(tier="exact", index=index).to_dict()},
                    upstream=self.upstream,
                )
            call.started_at = started_at
            call.duration_ms = (time.perf_counter() - t0) * 1000.0
            self.log.append(call)
        return call

    def _recorded_answer(self, method: str, index: int) -> dict[str, Any]:
        universe = self.universe
        if method == "resources/read":
            return universe.resource_reads[index].result
        if method == "prompts/get":
            return universe.prompt_gets[index].result
        return universe.completions[index].result

    @property
    def listeners(self) -> list[CallListener]:
        return self.log.listeners

    def call_log(self) -> list[MCPCall]:
        return self.log.calls()

    def reset(self) -> None:
        """Forget every call and every consumed recording (listeners stay)."""
        with self.log.lock:
            self.log.clear()
            self._state = SequenceState(len(self.universe.recordings))
            if self.faults is not None:
                self.faults.reset()

    def call(self, tool_name: str, args: dict[str, Any], *, tell_listeners: bool = True) -> MCPCall:
        """Answer one call and record it; with `tell_listeners=False` the listeners hear of it
        at the next `tell_listeners()` (or the next call that tells them)."""
        # Resolved under the log's lock (reentrant: a synthesize hook may read the log), so the
        # sequence state and the log order agree when two threads answer.
        args = flatten_wire_args(tool_name, args)
        with self.log.lock:
            call = self._answer(tool_name, args)
            if self.faults is not None:
                self._inject(call)
            self.log.append(call, tell_listeners=tell_listeners)
        return call

    def _inject(self, call: MCPCall) -> None:
        assert self.faults is not None
        if self.faults.apply(call) is not None and self.log_events:
            log_injected(call, scenario=self.scenario)

    def session_sequence_state(self) -> SequenceState:
        """A fresh sequence position for one MCP session (Streamable HTTP with sessions): a
        sequence-mode tool's recordings are consumed per session, so two agents sharing one
        server do not take each other's. Where the protocol has no session (stateless HTTP,
        2026-07-28, stdio's one connection), the server's own state is used."""
        return SequenceState(len(self.universe.recordings))

    def begin(
        self,
        tool_name: str,
        args: dict[str, Any],
        *,
        sequence: SequenceState | None = None,
    ) -> tuple[Hit | Miss, list[dict[str, Any]]]:
        """The first half of a call whose recorded server messages the transport exchanges with
        the live client before answering (stdio, HTTP sessions): resolve it (a sequence-mode
        tool consumes its recording now, from `sequence`, the session's position, if given)
        and give the recording's messages; nothing is logged until `finish`."""
        state = self._state if sequence is None else sequence
        with self.log.lock:
            outcome = self.index.resolve(tool_name, args, state)
        if isinstance(outcome, Hit):
            return outcome, self.universe.recordings[outcome.index].server_messages or []
        return outcome, []

    def release(self, outcome: Hit | Miss, *, sequence: SequenceState | None = None) -> None:
        """Undo `begin` for a call that was not answered (it asked the client for input first):
        a sequence-mode recording it consumed is consumed again by the retry."""
        if isinstance(outcome, Hit):
            (self._state if sequence is None else sequence).release(outcome.index)

    def finish(
        self,
        tool_name: str,
        args: dict[str, Any],
        outcome: Hit | Miss,
        exchange: ClientExchange,
    ) -> MCPCall:
        """Answer and record a call `begin` resolved: the recording's answer, or, when the live
        client answered a request otherwise than when recorded, a divergence
        (`client_answer_differs`, with the exchange as evidence) answered by the tool's policy."""
        with self.log.lock:
            started_at = time.time()
            t0 = time.perf_counter()
            if isinstance(outcome, Hit) and exchange.differs is None:
                call = self._hit(tool_name, args, outcome)
                if exchange.unsent:
                    self._messages_not_replayed(call, outcome.index, exchange.unsent)
            elif isinstance(outcome, Hit):
                miss = Miss(
                    reason="client_answer_differs",
                    policy=self.universe.matching.policy_for(tool_name),
                )
                call = self._apply_policy(
                    tool_name, args, miss, recording=outcome.index, client=exchange.differs
                )
                if self.log_events:
                    log_divergence(call, scenario=self.scenario)
            else:
                call = self._miss(tool_name, args, outcome)
            call.started_at = started_at
            call.duration_ms = (time.perf_counter() - t0) * 1000.0
            if self.faults is not None:
                self._inject(call)
            self.log.append(call)
        return call

    def _hit(self, tool_name: str, args: dict[str, Any], outcome: Hit) -> MCPCall:
        result = self.universe.recordings[outcome.index].result
        return MCPCall(
            tool_name=tool_name,
            args=args,
            result=result,
            extra={"match": outcome.to_dict()},
            upstream=self.upstream,
            is_error=is_tool_result(result) and result.get("isError") is True,
        )

    def tell_listeners(self) -> None:
        """Tell the listeners of every call logged and not told yet, in log order."""
        self.log.tell_listeners()

    def _answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        started_at = time.time()
        t0 = time.perf_counter()
        outcome = self.index.resolve(tool_name, args, self._state)
        if isinstance(outcome, Hit):
            recording = self.universe.recordings[outcome.index]
            result = recording.result
            call = MCPCall(
                tool_name=tool_name,
                args=args,
                result=result,
                extra={"match": outcome.to_dict()},
                upstream=self.upstream,
                is_error=is_tool_result(result) and result.get("isError") is True,
            )
            if recording.server_messages:  # a transport that exchanges them uses `begin`
                self._messages_not_replayed(call, outcome.index, len(recording.server_messages))
        else:
            call = self._miss(tool_name, args, outcome)
        call.started_at = started_at
        call.duration_ms = (time.perf_counter() - t0) * 1000.0
        return call

    def _messages_not_replayed(self, call: MCPCall, index: int, count: int) -> None:
        """The recording holds messages the server sent while answering that were not sent
        again (over HTTP, any; over stdio, requests the connection cannot carry), and says so:
        in the call (and so the trace) and, outside a fleet, as a warning."""
        call.extra["server_messages_not_replayed"] = count
        if self.log_events:
            logger.warning(
                "server_messages_not_replayed",
                tool=call.tool_name,
                recording=index,
                messages=count,
                upstream=self.upstream,
                scenario=self.scenario,
            )

    def _miss(self, tool_name: str, args: dict[str, Any], miss: Miss) -> MCPCall:
        if miss.reason == "unknown_tool":
            call = unknown_tool_call(tool_name, args, upstream=self.upstream)
        else:
            call = self._apply_policy(tool_name, args, miss)
        if self.log_events:
            log_divergence(call, scenario=self.scenario)
        return call

    def _apply_policy(
        self,
        tool_name: str,
        args: dict[str, Any],
        miss: Miss,
        *,
        recording: int | None = None,
        client: dict[str, Any] | None = None,
    ) -> MCPCall:
        """Answer a call of a declared tool that no recording matches, by the tool's policy,
        and make its divergence record (`recording` and `client`: the evidence of a
        `client_answer_differs` miss)."""
        nearest = (
            self.index.nearest(tool_name, args)[0] if self.index.recordings_of(tool_name) else None
        )
        answer = self._policy_answer(tool_name, args, miss, nearest)
        divergence = Divergence(
            tool=tool_name,
            args=args,
            reason=miss.reason,
            policy=miss.policy,
            matched=answer.matched,
            nearest=nearest,
            recording=msgspec.UNSET if recording is None else recording,
            client=msgspec.UNSET if client is None else client,
        )
        return divergence_call(
            divergence,
            result=answer.result,
            is_error=answer.is_error,
            upstream=self.upstream,
            fault=answer.fault,
        )

    def _policy_answer(
        self, tool_name: str, args: dict[str, Any], miss: Miss, nearest: Nearest | None
    ) -> MissAnswer:
        """What the miss policy gives the agent (`miss_answers` has the values)."""
        policy = miss.policy
        if policy == "nearest":
            served = self._serve_nearest(tool_name, args, nearest)
            if served is not None:
                return MissAnswer(self.universe.recordings[served].result, matched=served)
        elif policy == "empty":
            return MissAnswer(empty_result(self.index, tool_name))
        elif policy == "synthesize":
            return self._synthesized(tool_name, args)
        # `fail_call`, and `nearest` with no recording left to serve.
        return MissAnswer(fail_call_result(tool_name, args, miss, nearest), is_error=True)

    def _serve_nearest(
        self, tool_name: str, args: dict[str, Any], nearest: Nearest | None
    ) -> int | None:
        """The recording the `nearest` policy serves: of a sequence-mode tool, the nearest not
        yet consumed, consumed now (consume-once holds on every path)."""
        tool = self.index.tool(tool_name)
        if tool is not None and tool.mode == "sequence":
            taken = self.index.take_nearest(tool_name, args, self._state)
            return taken.index if taken is not None else None
        return nearest.index if nearest is not None else None

    def _synthesized(self, tool_name: str, args: dict[str, Any]) -> MissAnswer:
        """The hook's answer; a hook that fails (or answers what is not JSON) is a fault."""
        assert self.synthesize is not None  # checked at construction
        try:
            result = self.synthesize(tool_name, dict(args), self.universe)
        except Exception as exc:  # a user hook may fail in any way; the server must not
            fault = f"the synthesize hook raised {type(exc).__name__}: {exc}"
        else:
            if is_json_value(result):
                return MissAnswer(result)
            # It would fail the answer's encoding, and later the trace's, far from here.
            fault = f"the synthesize hook returned {type(result).__name__}, not JSON data"
        logger.error(
            "synthesize_failed",
            tool=tool_name,
            error=fault,
            upstream=self.upstream,
            scenario=self.scenario,
        )
        failed = {"error": "synthesize_failed", "tool": tool_name, "message": fault}
        return MissAnswer(failed, is_error=True, fault=fault)
