"""A recording at rest: the universe and the capture log of one upstream, redacted. Pure.

Tools come from the live `tools/list` (name, description, input schema, and every other field the
server gave: title, annotations, output schema, icons, execution, `_meta`), in list order; a tool
that was called but never listed is declared with an open object schema and reported. A tool whose
identical calls got different answers is frozen in `"mode": "sequence"` (every call kept, in
order); the rest keep the first of identical calls (`freeze_universe`). Each kept call brings the
server messages sent while it was answered; the universe also gets the server's identity,
resources, prompts and completions (`surface_additions`). Redaction runs over everything first.

The additions are put into the universe and checked by its own loader (`with_additions`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import __version__
from ..calls import MCPCall
from ..canonical import args_key, canonical_key, encode_json
from ..freeze import RECORDED_DURATION, RECORDING_META, freeze_universe, rounded_ms
from ..importing.secrets import scan_secrets
from ..universe import (
    Universe,
    UniverseTool,
    decode_universe,
    encode_universe,
    flatten_wire_args,
)
from .redact import Redactor
from .tap import SERVER_MESSAGES, ServerSurface, SessionTap

__all__ = [
    "Additions",
    "Recording",
    "RecordingBuilder",
    "detect_modes",
    "kept_calls",
    "redacted_calls",
    "surface_additions",
    "timed_calls",
    "tool_additions",
    "universe_tools",
    "with_additions",
]

_TOOL_FIELDS: dict[str, tuple[str, type[Any]]] = {
    "title": ("title", str),
    "annotations": ("annotations", dict),
    "outputSchema": ("output_schema", dict),
    "icons": ("icons", list),
    "execution": ("execution", dict),
    "_meta": ("_meta", dict),
}
"""A listed tool's field -> (its name in the universe, the JSON type it must have)."""


@dataclass
class Additions:
    """What the universe holds beyond tools and recordings (the format of issue 25)."""

    top: dict[str, Any] = field(default_factory=dict)
    """`server`, `resources`, `resource_templates`, `resource_reads`, `prompts`, `prompt_gets`,
    `completions`: each only when not empty."""
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per tool name: `title`, `annotations`, `output_schema`, `icons`, `execution`, `_meta`."""
    server_messages: list[list[dict[str, Any]]] = field(default_factory=list)
    """Per recording (same order as the universe's): what the server sent while answering."""


@dataclass
class Recording:
    """What `wt record` writes for one upstream, and what it tells the user about it."""

    universe: Universe
    log_lines: list[bytes]
    unlisted_tools: list[str] = field(default_factory=list)
    secrets_left: list[tuple[str, str]] = field(default_factory=list)
    """`(json_path, kind)` for values that still look like secrets (as `wt validate` warns)."""
    redacted: dict[str, int] = field(default_factory=dict)
    additions: Additions = field(default_factory=Additions)
    """Everything recorded beyond tools and calls (see `with_additions`)."""


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


def tool_additions(tool: dict[str, Any]) -> dict[str, Any]:
    """A listed tool's fields beyond name, description and input schema, as the universe names
    them (`outputSchema` is `output_schema`); a field of the wrong JSON type is left out."""
    kept: dict[str, Any] = {}
    for wire, (name, kind) in _TOOL_FIELDS.items():
        value = tool.get(wire)
        if isinstance(value, kind):
            kept[name] = value
    return kept


def kept_calls(calls: Sequence[MCPCall], modes: Mapping[str, str]) -> list[MCPCall]:
    """The calls `freeze_universe` turns into recordings, in the same order: every call of a
    sequence tool, the first of identical calls of the rest."""
    seen: set[tuple[str, Any]] = set()
    kept: list[MCPCall] = []
    for call in calls:
        if call.divergence is not None:
            continue
        if modes.get(call.tool_name) != "sequence":
            key = (call.tool_name, canonical_key(flatten_wire_args(call.tool_name, call.args)))
            if key in seen:
                continue
            seen.add(key)
        kept.append(call)
    return kept


def surface_additions(
    surface: ServerSurface,
    listed: dict[str, dict[str, Any]],
    kept: Sequence[MCPCall],
    redactor: Redactor,
) -> Additions:
    """The universe's additions from what the tap saw, redacted (`listed` already is)."""
    apply = redactor.apply
    top: dict[str, Any] = {}
    if surface.server:
        top["server"] = apply(surface.server)
    sections: list[tuple[str, dict[Any, dict[str, Any]]]] = [
        ("resources", surface.resources),
        ("resource_templates", surface.resource_templates),
        ("resource_reads", surface.resource_reads),
        ("prompts", surface.prompts),
        ("prompt_gets", surface.prompt_gets),
        ("completions", surface.completions),
    ]
    for name, entries in sections:
        if entries:
            top[name] = [apply(entry) for entry in entries.values()]
    tools = {name: extra for name, tool in listed.items() if (extra := tool_additions(tool))}
    messages = [apply(call.extra.get(SERVER_MESSAGES, [])) for call in kept]
    return Additions(top=top, tools=tools, server_messages=messages)


def with_additions(universe: Universe, additions: Additions) -> Universe:
    """The universe with the additions, decoded (and so validated) by the format's own loader:
    a file `wt record` writes always loads."""
    if not (additions.top or additions.tools or any(additions.server_messages)):
        return universe
    document = msgspec.json.decode(encode_universe(universe))
    document.update(additions.top)
    for tool in document["tools"]:
        tool.update(additions.tools.get(tool["name"], {}))
    recordings = document.get("recordings", [])
    for recording, messages in zip(recordings, additions.server_messages, strict=True):
        if messages:
            recording[SERVER_MESSAGES] = messages
    return decode_universe(msgspec.json.encode(document), file="<recording>")


def redacted_calls(tap: SessionTap, redactor: Redactor) -> list[MCPCall]:
    """The tap's calls with every secret found so far replaced."""
    return [
        msgspec.structs.replace(
            call, args=redactor.apply(call.args), result=redactor.apply(call.result)
        )
        for call in tap.calls
    ]


def timed_calls(calls: Sequence[MCPCall]) -> list[MCPCall]:
    """The calls with each witnessed one's duration in the meta its recording gets
    (`meta.duration_ms`, what `delay:recorded` replays). A call that was not witnessed now (a
    recording `wt verify --update` keeps: no `started_at`) keeps the meta it carries."""
    timed: list[MCPCall] = []
    for call in calls:
        if call.started_at > 0:
            meta = dict(call.extra.get(RECORDING_META) or {})
            meta[RECORDED_DURATION] = rounded_ms(call.duration_ms)
            call = msgspec.structs.replace(call, extra={**call.extra, RECORDING_META: meta})
        timed.append(call)
    return timed


def _data_of(message: dict[str, Any]) -> dict[str, Any] | None:
    """What of a message redaction looks for secrets in: schemas are not data (a key rule for
    `api_key` must not take the schema of an `api_key` parameter for a secret). A `tools/list`
    answer is all schemas (None); an elicitation request's `requestedSchema` is left out."""
    result = message.get("result")
    if isinstance(result, dict) and "tools" in result:
        return None
    params = message.get("params")
    if message.get("method") == "elicitation/create" and isinstance(params, dict):
        return {**message, "params": {k: v for k, v in params.items() if k != "requestedSchema"}}
    return message


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
            data = _data_of(record.msg)
            if data is not None:
                redactor.see(data)
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
        universe = freeze_universe(timed_calls(calls), tools=tools, path=None, meta=meta)
        modes = {tool.name: tool.mode for tool in tools}
        additions = surface_additions(tap.surface, listed, kept_calls(calls, modes), redactor)
        universe = with_additions(universe, additions)
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
            additions=additions,
        )
