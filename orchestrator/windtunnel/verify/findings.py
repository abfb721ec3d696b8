"""What `wt verify` found: one `Finding` per change between a universe and its live server. Pure.

A finding is **breaking** when a replay of the universe now shows the agent a world the live
server no longer is in a way that matters to a caller (a tool or a recorded resource gone, a
parameter newly required, a type narrowed, a result of another shape), and **informational**
otherwise (a tool added, a description or the instructions reworded, an optional parameter).
`kind` is a snake_case name a CI script can match on; `subject` names what changed (`tool
lookup`, `tool lookup: input query`); `detail` says how, in words.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "BREAKING",
    "INFORMATIONAL",
    "CallOutcome",
    "Finding",
    "Severity",
    "UniverseReport",
    "breaking",
    "informational",
]

Severity = Literal["breaking", "informational"]
BREAKING: Severity = "breaking"
INFORMATIONAL: Severity = "informational"


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One change, as every output format shows it."""

    kind: str
    severity: Severity
    subject: str
    detail: str


def breaking(kind: str, subject: str, detail: str) -> Finding:
    return Finding(kind=kind, severity=BREAKING, subject=subject, detail=detail)


def informational(kind: str, subject: str, detail: str) -> Finding:
    return Finding(kind=kind, severity=INFORMATIONAL, subject=subject, detail=detail)


class CallOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What became of one recording: re-sent and compared (`by` shape or value), or skipped
    with the reason (`resent` false)."""

    index: int
    tool: str
    resent: bool
    by: str | None = None
    reason: str | None = None


class UniverseReport(msgspec.Struct, kw_only=True):
    """One universe verified: the file, the upstream it was checked against (as printed:
    redacted, URL credentials masked), every finding and what became of each recording."""

    file: str
    upstream: str
    findings: list[Finding] = msgspec.field(default_factory=list)
    calls: list[CallOutcome] = msgspec.field(default_factory=list)
    updated: str | None = None
    """Where `--update` wrote the refreshed universe, when it did."""

    @property
    def breaking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == BREAKING]

    @property
    def informational(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == INFORMATIONAL]

    @property
    def resent(self) -> list[CallOutcome]:
        return [c for c in self.calls if c.resent]

    @property
    def skipped(self) -> list[CallOutcome]:
        return [c for c in self.calls if not c.resent]
