"""A recording at rest: the universe and the capture log of one upstream, redacted. Pure.

Tools come from the live `tools/list` (name, description, input schema); a tool that was called but
never listed is declared with an open object schema and reported. A tool whose identical calls got
different answers is frozen in `"mode": "sequence"` (every call kept, in order); the rest keep the
first of identical calls (`freeze_universe`). Redaction runs over everything first.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import __version__
from ..calls import MCPCall
from ..canonical import args_key, canonical_key, encode_json
from ..freeze import freeze_universe
from ..importing.secrets import scan_secrets
from ..universe import Universe, UniverseTool
from .redact import Redactor
from .tap import SessionTap

__all__ = ["Recording", "RecordingBuilder", "detect_modes", "redacted_calls", "universe_tools"]


@dataclass
class Recording:
    """What `wt record` writes for one upstream, and what it tells the user about it."""

    universe: Universe
    log_lines: list[bytes]
    unlisted_tools: list[str] = field(default_factory=list)
    secrets_left: list[tuple[str, str]] = field(default_factory=list)
    """`(json_path, kind)` for values that still look like secrets (as `wt validate` warns)."""
    redacted: dict[str, int] = field(default_factory=dict)


def detect_modes(calls: Sequence[MCPCall]) -> dict[str, str]:
    """`sequence` for tools whose identical calls (canonical args) got different results."""
    answers: dict[tuple[str, Any], Any] = {}
    sequence: set[str] = set()
    for call in calls:
        key = (call.tool_name, args_key(call.args))
        result = canonical_key(call.result)
        if answers.setdefault(key, result) != result:
            sequence.add(call.tool_name)
    return {call.tool_name: "sequence" for call in calls if call.tool_name in sequence}


def universe_tools(
    listed: dict[str, dict[str, Any]], calls: Sequence[MCPCall]
) -> tuple[list[UniverseTool], list[str]]:
    """The listed tools (in list order), then any tool called without being listed."""
    modes = detect_modes(calls)
    tools: list[UniverseTool] = []
    for name, tool in listed.items():
        schema = tool.get("inputSchema")
        description = tool.get("description")
        tools.append(
            UniverseTool(
                name=name,
                input_schema=schema if isinstance(schema, dict) else {"type": "object"},
                description=description if isinstance(description, str) else "",
                mode="sequence" if modes.get(name) == "sequence" else "stateless",
            )
        )
    unlisted: list[str] = []
    for call in calls:
        if call.tool_name not in listed and call.tool_name not in unlisted:
            unlisted.append(call.tool_name)
            sequence = modes.get(call.tool_name) == "sequence"
            tools.append(
                UniverseTool(name=call.tool_name, mode="sequence" if sequence else "stateless")
            )
    return tools, unlisted


def redacted_calls(tap: SessionTap, redactor: Redactor) -> list[MCPCall]:
    """The tap's calls with every secret found so far replaced."""
    return [
        msgspec.structs.replace(
            call, args=redactor.apply(call.args), result=redactor.apply(call.result)
        )
        for call in tap.calls
    ]


def _lists_tools(message: dict[str, Any]) -> bool:
    """A `tools/list` answer: schemas, not data (a key rule for `api_key` must not take the
    schema of an `api_key` parameter for a secret)."""
    result = message.get("result")
    return isinstance(result, dict) and "tools" in result


class RecordingBuilder:
    """Builds a tap's `Recording` again and again as the session grows (every checkpoint).

    Secrets are looked for only in what arrived since the last build, and capture lines are
    encoded once, unless a new secret turned up since (then every line is encoded again, so the
    new placeholder reaches the old lines too).
    """

    def __init__(self, tap: SessionTap, redactor: Redactor) -> None:
        self.tap = tap
        self.redactor = redactor
        self._calls_seen = 0
        self._log_seen = 0
        self._lines: list[bytes] = []
        self._lines_stamp = 0

    def see_new(self) -> None:
        """Let the redactor find secrets in the calls and messages not seen yet."""
        tap, redactor = self.tap, self.redactor
        for call in tap.calls[self._calls_seen :]:
            redactor.see_call(call.args, call.result)
        self._calls_seen = len(tap.calls)
        for record in tap.log[self._log_seen :]:
            if not _lists_tools(record.msg):
                redactor.see(record.msg)
        self._log_seen = len(tap.log)

    def log_lines(self) -> list[bytes]:
        if self.redactor.distinct != self._lines_stamp:
            self._lines, self._lines_stamp = [], self.redactor.distinct
        apply = self.redactor.apply
        for record in self.tap.log[len(self._lines) :]:
            self._lines.append(encode_json(msgspec.structs.replace(record, msg=apply(record.msg))))
        return list(self._lines)

    def build(
        self,
        *,
        source: str,
        started_at: float,
        with_log: bool = True,
        find_secrets: bool = True,
    ) -> Recording:
        """Redact, then freeze: the universe (and the log lines), nothing unredacted.

        `find_secrets=False` skips looking for what still looks like a secret (a checkpoint:
        the scan costs ~0.5 s per MiB of text and holds the event loop, so only the last build
        before the report does it)."""
        self.see_new()
        tap, redactor = self.tap, self.redactor
        calls = redacted_calls(tap, redactor)
        listed = {name: redactor.apply(tool) for name, tool in tap.tools.items()}
        tools, unlisted = universe_tools(listed, calls)
        meta = {
            "recorded_by": f"wt record (windtunnel {__version__})",
            "upstream": {"name": tap.upstream, "source": redactor.apply(source)},
            "recorded_at": datetime.datetime.fromtimestamp(started_at, datetime.UTC).isoformat(),
            "windtunnel_version": __version__,
            "calls": len(tap.calls),
        }
        if redactor.active:
            meta["redacted"] = {
                "distinct_values": redactor.distinct,
                "by_rule": redactor.summary(),
            }
        universe = freeze_universe(calls, tools=tools, path=None, meta=meta)
        secrets = (
            scan_secrets(msgspec.to_builtins(universe.recordings), root="$.recordings")
            if find_secrets
            else []
        )
        return Recording(
            universe=universe,
            log_lines=self.log_lines() if with_log else [],
            unlisted_tools=unlisted,
            secrets_left=secrets,
            redacted=redactor.summary(),
        )
