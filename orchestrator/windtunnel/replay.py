"""The replay engine: one server instance's view of a universe (DESIGN §4).

Every answer a recorded server gives comes from `Replay.call`: it resolves the call, applies the
miss policy, builds the divergence evidence, appends the call log, emits `universe_divergence` and
tells listeners (the router). Transports only translate.

Calls may arrive from two threads (over stdio, the reader thread answers plain calls while Trio
serves the rest): one lock orders resolution, the log and the listeners. A transport that answers
on the critical path may ask for the listeners to be told after its answer is written
(`tell_listeners=False`, then `tell_listeners()`); they still hear every call once, in log order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from .calls import MCPCall, is_tool_result
from .canonical import is_json_value
from .errors import HookRequiredError
from .matching import Hit, Miss, SequenceState, UniverseIndex
from .miss_answers import SynthesizeHook, empty_result, fail_call_result, unknown_tool_result
from .universe import Universe, validate_universe

__all__ = ["CallListener", "Replay"]

CallListener = Callable[[MCPCall], None]
logger = structlog.get_logger("windtunnel")


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
        self.listeners: list[CallListener] = []
        self.log_events = True
        self._state = SequenceState(len(universe.recordings))
        self._log: list[MCPCall] = []
        self._untold: list[MCPCall] = []
        # Reentrant: a listener or a synthesize hook may look at the call log.
        self._lock = threading.RLock()

    def call_log(self) -> list[MCPCall]:
        with self._lock:
            return list(self._log)

    def call(self, tool_name: str, args: dict[str, Any], *, tell_listeners: bool = True) -> MCPCall:
        """Answer one call and record it; with `tell_listeners=False` the listeners hear of it
        at the next `tell_listeners()` (or the next call that tells them)."""
        with self._lock:
            call = self._answer(tool_name, args)
            self._log.append(call)
            if self.listeners:
                self._untold.append(call)
            if tell_listeners:
                self.tell_listeners()
        return call

    def tell_listeners(self) -> None:
        """Tell the listeners of every call logged and not told yet, in log order."""
        with self._lock:
            untold, self._untold = self._untold, []
            for call in untold:
                for listener in self.listeners:
                    listener(call)

    def _answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        started_at = time.time()
        t0 = time.perf_counter()
        outcome = self.index.resolve(tool_name, args, self._state)
        if isinstance(outcome, Hit):
            result = self.universe.recordings[outcome.index].result
            call = MCPCall(
                tool_name=tool_name,
                args=args,
                result=result,
                extra={"match": {"tier": outcome.tier, "index": outcome.index}},
                upstream=self.upstream,
                is_error=is_tool_result(result) and result.get("isError") is True,
            )
        else:
            call = self._miss(tool_name, args, outcome)
        call.started_at = started_at
        call.duration_ms = (time.perf_counter() - t0) * 1000.0
        return call

    def _miss(self, tool_name: str, args: dict[str, Any], miss: Miss) -> MCPCall:
        known = miss.reason != "unknown_tool"
        nearest = (
            self.index.nearest(tool_name, args)[0]
            if known and self.index.recordings_of(tool_name)
            else None
        )
        policy = miss.policy
        is_error = False
        fault: str | None = None
        result: Any
        if not known:
            result = unknown_tool_result(tool_name)
            is_error = True
        elif policy == "nearest" and nearest is not None:
            result = self.universe.recordings[nearest.index].result
        elif policy == "empty":
            result = empty_result(self.index, tool_name)
        elif policy == "synthesize":
            assert self.synthesize is not None  # checked at construction
            try:
                result = self.synthesize(tool_name, dict(args), self.universe)
            except Exception as exc:  # a user hook may fail in any way; the server must not
                fault = f"the synthesize hook raised {type(exc).__name__}: {exc}"
            else:
                if not is_json_value(result):
                    # It would fail the answer's encoding, and later the trace's, far from here.
                    fault = f"the synthesize hook returned {type(result).__name__}, not JSON data"
            if fault is not None:
                logger.error(
                    "synthesize_failed",
                    tool=tool_name,
                    error=fault,
                    upstream=self.upstream,
                    scenario=self.scenario,
                )
                result = {"error": "synthesize_failed", "tool": tool_name, "message": fault}
                is_error = True
        else:
            # `fail_call`, and `nearest` on a tool with no recordings.
            policy = "fail_call"
            result = fail_call_result(tool_name, miss, nearest)
            is_error = True
        divergence = {
            "tool": tool_name,
            "args": args,
            "reason": miss.reason,
            "policy": policy,
            "nearest": nearest.to_dict() if nearest is not None else None,
        }
        if self.log_events:
            logger.warning(
                "universe_divergence", **divergence, upstream=self.upstream, scenario=self.scenario
            )
        extra: dict[str, Any] = {"divergence": divergence}
        if fault is not None:
            extra["fault"] = fault  # the orchestrator fails the scenario with this reason
        return MCPCall(
            tool_name=tool_name,
            args=args,
            result=result,
            extra=extra,
            upstream=self.upstream,
            is_error=is_error,
        )
