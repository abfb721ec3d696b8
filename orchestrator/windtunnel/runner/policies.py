"""The constraint layer: policies that pass or fail a trace with a specific reason.

Policies read the server-side call log (`trace.mcp_calls`), so any agent can be judged as a black
box. Calls are numbered from 1 in call-log order and named `upstream.tool(args)` in reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..calls import MCPCall
from ..canonical import canonical_json, canonical_key
from ..divergence import divergence_label
from ..errors import ConfigError
from .trace import Trace, Verdict, divergent_calls

__all__ = [
    "CallBudget",
    "CallOrder",
    "Coverage",
    "ForbiddenCall",
    "NoDivergence",
    "Policy",
    "RequiredCall",
    "args_match",
    "call_budget",
    "call_order",
    "coverage",
    "describe_call",
    "forbidden_call",
    "no_divergence",
    "required_call",
]

_ARGS_LIMIT = 120


@runtime_checkable
class Policy(Protocol):
    """A constraint: `check` passes or fails a trace and says why."""

    @property
    def name(self) -> str: ...

    def check(self, trace: Trace) -> Verdict: ...


def render_json(value: Any, limit: int = _ARGS_LIMIT) -> str:
    """Compact canonical JSON, cut to `limit` characters with an ellipsis."""
    try:
        text = canonical_json(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_call(number: int, call: MCPCall) -> str:
    """`call 3 crm.client_lookup({"query":"x"})`: how reasons name a call; a request of another
    method names it first: `call 4 crm resources/read test://a({})`."""
    what = divergence_label(
        {"upstream": call.upstream, "method": call.method, "tool": call.tool_name}
    )
    return f"call {number} {what}({render_json(call.args)})"


def _tool_label(tool: str, upstream: str | None) -> str:
    return f"{upstream}.{tool}" if upstream else tool


def args_match(subset: Mapping[str, Any] | None, args: Mapping[str, Any]) -> bool:
    """Every key of `subset` is in `args` with a canonically equal value."""
    if not subset:
        return True
    return all(
        key in args and canonical_key(args[key]) == canonical_key(value)
        for key, value in subset.items()
    )


@dataclass(frozen=True)
class NoDivergence:
    """Fails a trace with any call that left the recording."""

    name: str = "no_divergence"

    def check(self, trace: Trace) -> Verdict:
        diverged = divergent_calls(trace.mcp_calls)
        if diverged:
            reasons = [
                f"{describe_call(n, call)} diverged: {(call.divergence or {}).get('reason')}"
                for n, call in diverged
            ]
            return Verdict(name=self.name, passed=False, reason="; ".join(reasons))
        if trace.divergence_count:
            # A results row keeps its warnings but not its call log.
            reasons = [
                f"{_tool_label(str(w.get('tool')), w.get('upstream'))}"
                f"({render_json(w.get('args'))}) diverged: {w.get('reason')}"
                for w in trace.warnings
                if w.get("event") == "universe_divergence"
            ]
            return Verdict(name=self.name, passed=False, reason="; ".join(reasons))
        count = len(trace.mcp_calls)
        return Verdict(name=self.name, passed=True, reason=f"no divergence in {_calls(count)}")


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def _matching_calls(
    trace: Trace, tool: str, args: Mapping[str, Any] | None, upstream: str | None
) -> tuple[list[tuple[int, MCPCall]], list[tuple[int, MCPCall]]]:
    """(calls to the tool with matching args, calls to the tool at all)."""
    to_tool = [
        (n, call)
        for n, call in enumerate(trace.mcp_calls, 1)
        if call.tool_name == tool and (upstream is None or call.upstream == upstream)
    ]
    return [(n, c) for n, c in to_tool if args_match(args, c.args)], to_tool


def _with_args(args: Mapping[str, Any] | None) -> str:
    return f" with args matching {render_json(dict(args))}" if args else ""


@dataclass(frozen=True)
class RequiredCall:
    """Passes when the tool was called (with args containing `args`, if given)."""

    tool: str
    args: Mapping[str, Any] | None = None
    upstream: str | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"required_call({self.tool})")

    def check(self, trace: Trace) -> Verdict:
        matching, to_tool = _matching_calls(trace, self.tool, self.args, self.upstream)
        label = _tool_label(self.tool, self.upstream)
        if matching:
            n, call = matching[0]
            return Verdict(name=self.name, passed=True, reason=f"{describe_call(n, call)} made")
        reason = f"no call to {label}{_with_args(self.args)}"
        if to_tool:
            reason += f" ({_calls(len(to_tool))} to {label} had other args)"
        return Verdict(name=self.name, passed=False, reason=reason)


@dataclass(frozen=True)
class ForbiddenCall:
    """Fails when the tool was called (with args containing `args`, if given)."""

    tool: str
    args: Mapping[str, Any] | None = None
    upstream: str | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"forbidden_call({self.tool})")

    def check(self, trace: Trace) -> Verdict:
        matching, _ = _matching_calls(trace, self.tool, self.args, self.upstream)
        if matching:
            reason = "; ".join(f"{describe_call(n, call)} is forbidden" for n, call in matching)
            return Verdict(name=self.name, passed=False, reason=reason)
        label = _tool_label(self.tool, self.upstream)
        return Verdict(
            name=self.name, passed=True, reason=f"no call to {label}{_with_args(self.args)}"
        )


@dataclass(frozen=True)
class CallBudget:
    """Fails when more than `max_calls` calls were made (to `tool`, if given)."""

    max_calls: int
    tool: str | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.max_calls < 0:
            raise ConfigError(f"call_budget needs max_calls >= 0, got {self.max_calls}")
        if not self.name:
            scope = f"{self.tool}, " if self.tool else ""
            object.__setattr__(self, "name", f"call_budget({scope}{self.max_calls})")

    def check(self, trace: Trace) -> Verdict:
        if self.tool is None:
            count = len(trace.mcp_calls)
            scope = ""
        else:
            count = sum(1 for call in trace.mcp_calls if call.tool_name == self.tool)
            scope = f" for {self.tool}"
        if count > self.max_calls:
            return Verdict(
                name=self.name,
                passed=False,
                reason=f"budget {self.max_calls}{scope} exceeded: {_calls(count)}",
            )
        return Verdict(
            name=self.name,
            passed=True,
            reason=f"{_calls(count)} within budget {self.max_calls}{scope}",
        )


@dataclass(frozen=True)
class CallOrder:
    """Passes when the tools were each called, in this relative order (others may interleave)."""

    tools: Sequence[str]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.tools:
            raise ConfigError("call_order needs at least one tool")
        object.__setattr__(self, "tools", tuple(self.tools))
        if not self.name:
            object.__setattr__(self, "name", f"call_order({', '.join(self.tools)})")

    def check(self, trace: Trace) -> Verdict:
        names = [call.tool_name for call in trace.mcp_calls]
        position = 0
        found: list[str] = []
        previous: tuple[str, int] | None = None
        for tool in self.tools:
            # Greedy earliest match: the tools form a subsequence iff this finds them all.
            try:
                index = names.index(tool, position)
            except ValueError:
                if previous is None or tool not in names:
                    reason = f"{tool} never called"
                else:
                    reason = f"{tool} not called after {previous[0]} (call {previous[1]})"
                return Verdict(name=self.name, passed=False, reason=reason)
            previous = (tool, index + 1)
            found.append(f"{tool} (call {index + 1})")
            position = index + 1
        return Verdict(name=self.name, passed=True, reason="in order: " + ", ".join(found))


@dataclass(frozen=True)
class Coverage:
    """Passes when the unit's calls were served from at least `minimum` (a fraction) of the
    recordings: of `tool` if given, on `upstream` if given, else of every universe it ran on."""

    tool: str | None = None
    upstream: str | None = None
    minimum: float = 1.0
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.minimum <= 1.0:
            raise ConfigError(f"coverage needs minimum within [0, 1], got {self.minimum}")
        if not self.name:
            scope = _tool_label(self.tool, self.upstream) if self.tool else self.upstream
            object.__setattr__(self, "name", f"coverage({scope or 'all'}, {self.minimum:g})")

    def check(self, trace: Trace) -> Verdict:
        recordings = served = 0
        unused: list[str] = []
        for upstream, cov in trace.coverage.items():
            if self.upstream is not None and upstream != self.upstream:
                continue
            if self.tool is None:
                recordings += cov.recordings
                served += cov.served
                unused += [f"{upstream}#{i}" for i in cov.unused]
            elif self.tool in cov.tools:
                tool = cov.tools[self.tool]
                recordings += tool.recordings
                served += tool.served
                unused += [f"{upstream}#{i}" for i in tool.unused]
        scope = _tool_label(self.tool, self.upstream) if self.tool else self.upstream
        what = f"recordings of {scope}" if scope else "recordings"
        if recordings == 0:
            return Verdict(
                name=self.name, passed=False, reason=f"no {what} in this unit's universes"
            )
        passed = served >= self.minimum * recordings
        reason = f"{served} of {recordings} {what} served (minimum {self.minimum:.0%})"
        if unused:
            shown = ", ".join(unused[:10]) + (
                f" and {len(unused) - 10} more" if len(unused) > 10 else ""
            )
            reason += f"; never used: {shown}"
        return Verdict(name=self.name, passed=passed, reason=reason)


def no_divergence() -> NoDivergence:
    """A policy that fails a trace that left the recording."""
    return NoDivergence()


def required_call(
    tool: str, args: Mapping[str, Any] | None = None, upstream: str | None = None
) -> RequiredCall:
    """A policy that requires a call to `tool` (args: a subset matched with canonical equality)."""
    return RequiredCall(tool, dict(args) if args is not None else None, upstream)


def forbidden_call(
    tool: str, args: Mapping[str, Any] | None = None, upstream: str | None = None
) -> ForbiddenCall:
    """A policy that forbids calls to `tool` (args: only calls containing this subset)."""
    return ForbiddenCall(tool, dict(args) if args is not None else None, upstream)


def call_budget(max_calls: int, tool: str | None = None) -> CallBudget:
    """A policy that caps the number of calls (to one tool, if given)."""
    return CallBudget(max_calls, tool)


def call_order(tools: Sequence[str]) -> CallOrder:
    """A policy that requires these tools to be called in this relative order."""
    return CallOrder(tuple(tools))


def coverage(
    tool: str | None = None, upstream: str | None = None, minimum: float = 1.0
) -> Coverage:
    """A policy that requires the recordings (of `tool`, on `upstream`) to be used: every one
    by default, or at least the fraction `minimum`."""
    return Coverage(tool, upstream, minimum)
