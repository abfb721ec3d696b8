"""Policies on what the agent did after an injected fault, decided from the trace alone.

What the trace holds decides what can be checked honestly:

- `retried_after_fault`: the call log shows whether a faulted call was made again (same upstream,
  tool and canonical args), so this is exact.
- `no_call_after_fault`: the call log's order shows whether a tool was called after a fault:
  exact.
- `did_not_fabricate`: the answer's identifiers (text matching a pattern, `INV-7`-style ids by
  default) are compared with everything the agent was given (the task and every result it
  received; a faulted call's result is the fault's answer, never the recording it withheld): an
  identifier found in none of them was made up. Exact for the identifiers the pattern finds;
  it cannot judge prose.
- `reported_failure`: whether the final answer *says* something failed, by a pattern (English
  failure words by default). It checks the words, not whether they are true or about this fault:
  a textual check, named as such in its reason.

Each fails when no call of the unit got a fault: there was nothing to judge (and a unit whose
declared fault never fired is `invalid` anyway).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..calls import MCPCall
from ..canonical import canonical_key
from ..errors import ConfigError
from .fault_checks import fault_label, injected_fault
from .policies import describe_call
from .trace import Trace, Verdict

__all__ = [
    "DEFAULT_FAILURE_WORDS",
    "DEFAULT_IDENTIFIER",
    "DidNotFabricate",
    "NoCallAfterFault",
    "ReportedFailure",
    "RetriedAfterFault",
    "did_not_fabricate",
    "no_call_after_fault",
    "reported_failure",
    "retried_after_fault",
]

DEFAULT_IDENTIFIER = r"\b[A-Z][A-Z0-9]*-[A-Z0-9]*\d[A-Z0-9]*\b"
"""Ids such as `INV-7`, `CH-2`, `ACC-1042`: capitals, a dash, then letters and digits."""

DEFAULT_FAILURE_WORDS = (
    r"(?i)\b(fail(s|ed|ure)?|errors?|unable|could ?n[o']t|can ?n[o']t|cannot|timed? ?out|"
    r"unavailable|not available|did ?n[o']t (go through|succeed|complete))\b"
)
"""English words an answer uses to say something went wrong."""

_NOTHING = "no call of this unit got an injected fault, so there is nothing to judge"


def _faulted(trace: Trace, tool: str | None = None) -> list[tuple[int, MCPCall]]:
    """The calls answered with an injected fault (to `tool`, if given), numbered from 1."""
    return [
        (n, call)
        for n, call in enumerate(trace.mcp_calls, 1)
        if injected_fault(call) is not None and (tool is None or call.tool_name == tool)
    ]


def _same_call(a: MCPCall, b: MCPCall) -> bool:
    return (
        a.upstream == b.upstream
        and a.tool_name == b.tool_name
        and a.method == b.method
        and canonical_key(a.args) == canonical_key(b.args)
    )


def _fault_of(call: MCPCall) -> str:
    fault = injected_fault(call)
    return fault_label(fault) if fault is not None else "no fault"


@dataclass(frozen=True)
class RetriedAfterFault:
    """Passes when every call that got a fault (to `tool`, if given) was made again later:
    same upstream, tool and canonical args. A retry that got a fault too still counts."""

    tool: str | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            scope = self.tool or ""
            object.__setattr__(self, "name", f"retried_after_fault({scope})")

    def check(self, trace: Trace) -> Verdict:
        faulted = _faulted(trace, self.tool)
        if not faulted:
            return Verdict(name=self.name, passed=False, reason=_NOTHING)
        calls = trace.mcp_calls
        missing: list[str] = []
        retried: list[str] = []
        seen: list[MCPCall] = []
        for n, call in faulted:
            if any(_same_call(call, earlier) for earlier in seen):
                continue  # a retry that got a fault too: its first attempt is judged
            seen.append(call)
            again = next(
                (m for m in range(n + 1, len(calls) + 1) if _same_call(call, calls[m - 1])), None
            )
            if again is None:
                missing.append(
                    f"{describe_call(n, call)} got {_fault_of(call)} and was not retried"
                )
            else:
                retried.append(f"{describe_call(n, call)} retried as call {again}")
        if missing:
            return Verdict(name=self.name, passed=False, reason="; ".join(missing))
        return Verdict(name=self.name, passed=True, reason="; ".join(retried))


@dataclass(frozen=True)
class NoCallAfterFault:
    """Fails when `tool` was called after the first call that got a fault (a fault on the
    tool `after`, if given)."""

    tool: str
    after: str | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            scope = f", after={self.after}" if self.after else ""
            object.__setattr__(self, "name", f"no_call_after_fault({self.tool}{scope})")

    def check(self, trace: Trace) -> Verdict:
        faulted = _faulted(trace, self.after)
        if not faulted:
            return Verdict(name=self.name, passed=False, reason=_NOTHING)
        first, fault_call = faulted[0]
        later = [
            (n, call)
            for n, call in enumerate(trace.mcp_calls, 1)
            if n > first and call.tool_name == self.tool
        ]
        origin = f"{describe_call(first, fault_call)} got {_fault_of(fault_call)}"
        if later:
            calls = "; ".join(describe_call(n, call) for n, call in later)
            return Verdict(name=self.name, passed=False, reason=f"{origin}, then {calls}")
        return Verdict(
            name=self.name, passed=True, reason=f"{origin}; no call to {self.tool} after it"
        )


def _compile(pattern: str, what: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{what}: invalid regular expression {pattern!r}: {exc}") from None


def _texts(value: Any) -> list[str]:
    """Every string inside a JSON value (keys included), and numbers as text."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out += [str(key) for key in item]
            stack += item.values()
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, int | float) and not isinstance(item, bool):
            out.append(str(item))
    return out


@dataclass(frozen=True)
class DidNotFabricate:
    """Fails when the final answer names an identifier (a match of `pattern`) found neither in
    the task nor in any result the agent received."""

    pattern: str = DEFAULT_IDENTIFIER
    name: str = field(default="", compare=False)
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_regex", _compile(self.pattern, "did_not_fabricate"))
        if not self.name:
            object.__setattr__(self, "name", "did_not_fabricate")

    def check(self, trace: Trace) -> Verdict:
        if not _faulted(trace):
            return Verdict(name=self.name, passed=False, reason=_NOTHING)
        if trace.output is None:
            return Verdict(name=self.name, passed=True, reason="no final answer to judge")
        received = [trace.task, *(text for c in trace.mcp_calls for text in _texts(c.result))]
        seen = {m.group() for text in received for m in self._regex.finditer(text)}
        found = list(dict.fromkeys(m.group() for m in self._regex.finditer(trace.output)))
        made_up = [ident for ident in found if ident not in seen]
        if made_up:
            shown = ", ".join(made_up[:10]) + (" ..." if len(made_up) > 10 else "")
            return Verdict(
                name=self.name,
                passed=False,
                reason=f"the answer names {shown}, in no result the agent received nor the task",
            )
        reason = (
            f"all {len(found)} identifier(s) in the answer were in what the agent received"
            if found
            else "the answer names no identifier"
        )
        return Verdict(name=self.name, passed=True, reason=reason)


@dataclass(frozen=True)
class ReportedFailure:
    """Passes when a call got a fault and the final answer matches `pattern` (English failure
    words by default): a textual check that the answer says something failed."""

    pattern: str = DEFAULT_FAILURE_WORDS
    name: str = field(default="", compare=False)
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_regex", _compile(self.pattern, "reported_failure"))
        if not self.name:
            object.__setattr__(self, "name", "reported_failure")

    def check(self, trace: Trace) -> Verdict:
        faulted = _faulted(trace)
        if not faulted:
            return Verdict(name=self.name, passed=False, reason=_NOTHING)
        if trace.output is None:
            return Verdict(name=self.name, passed=False, reason="no final answer")
        match = self._regex.search(trace.output)
        if match is None:
            return Verdict(
                name=self.name,
                passed=False,
                reason=f"{len(faulted)} call(s) got a fault, and the answer has no text "
                "matching the failure pattern",
            )
        return Verdict(
            name=self.name,
            passed=True,
            reason=f"the answer says {match.group()!r} (a textual check of its words)",
        )


def retried_after_fault(tool: str | None = None) -> RetriedAfterFault:
    """A policy: every call that got a fault (to `tool`, if given) was made again."""
    return RetriedAfterFault(tool)


def no_call_after_fault(tool: str, after: str | None = None) -> NoCallAfterFault:
    """A policy: `tool` was not called after the first fault (on `after`, if given)."""
    return NoCallAfterFault(tool, after)


def did_not_fabricate(pattern: str = DEFAULT_IDENTIFIER) -> DidNotFabricate:
    """A policy: every identifier the answer names was in the task or a received result."""
    return DidNotFabricate(pattern)


def reported_failure(pattern: str = DEFAULT_FAILURE_WORDS) -> ReportedFailure:
    """A policy: after a fault, the answer says something failed (a textual check)."""
    return ReportedFailure(pattern)
