"""The universe file: models, loading, validation and writing (DESIGN §3).

Within version 1 the format is forward tolerant (windtunnel-bench design 0001): a field this
release does not know loads, takes no part in matching and is not written back;
`universe_warnings` names each one with its JSON path.

A universe is data only. Loading never executes anything from the file; the only code a
universe can reach is a `synthesize` hook the user passes from their own Python.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Iterable
from typing import Any, Literal, TypeAlias

import msgspec

from .atomic_write import atomic_write
from .canonical import nested_deeper_than
from .errors import UniverseError
from .faults.spec import Fault, faults_from_tables
from .input_files import read_input
from .load_pacing import gc_in_steps
from .universe_scan import recording_spans
from .universe_surface import MAX_NESTING as _SURFACE_MAX_NESTING
from .universe_surface import (
    CompletionRecord,
    PromptGet,
    ResourceRead,
    ServerSurface,
    check_server_messages,
    check_surface,
)

__all__ = [
    "FORMAT_VERSION",
    "MATCHING_FIELDS",
    "MAX_NESTING",
    "POLICIES",
    "REQUEST_METHODS",
    "CompletionRecord",
    "Matching",
    "MissPolicy",
    "PromptGet",
    "Recording",
    "RequestMissPolicy",
    "ResourceRead",
    "ServerSurface",
    "ToolMode",
    "Universe",
    "UniverseTool",
    "decode_universe",
    "encode_universe",
    "flatten_wire_args",
    "load_universe",
    "matching_from_file",
    "tool_from_file",
    "validate_universe",
    "with_modes",
    "write_universe",
]

FORMAT_VERSION = 1
MAX_NESTING = _SURFACE_MAX_NESTING
"""Deepest nesting of arrays and objects in a recording's args or result or a tool's schemas.
The official MCP SDK client reads no message nested much past 200 levels (a served result sits a
few levels down in its JSON-RPC answer), and a recording no client can read replays nothing: it
is refused when the file loads, so `wt validate`, `wt serve` and `wt run` agree."""
MissPolicy: TypeAlias = Literal["fail_call", "empty", "nearest", "synthesize"]
ToolMode: TypeAlias = Literal["stateless", "sequence"]
POLICIES: tuple[str, ...] = ("fail_call", "empty", "nearest", "synthesize")
RequestMissPolicy: TypeAlias = Literal["fail_call", "empty"]
"""How a request other than `tools/call` that no entry answers is answered: the JSON-RPC error
its method prescribes (`fail_call`), or the method's empty result (`empty`)."""
REQUEST_METHODS = ("resources/read", "prompts/get", "completion/complete")
"""The requests besides `tools/call` that a universe answers from recordings."""


def _object_schema() -> dict[str, Any]:
    return {"type": "object"}


class UniverseTool(msgspec.Struct, omit_defaults=True, frozen=True):
    """A tool the universe offers: what the agent sees in `tools/list`."""

    name: str
    input_schema: dict[str, Any] = msgspec.field(default_factory=_object_schema)
    description: str = ""
    result_schema: dict[str, Any] | None = None
    mode: ToolMode = "stateless"
    # What else `tools/list` gave, each served as recorded (left out of the file when absent).
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    icons: list[Any] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    def listed(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it, each recorded field as recorded."""
        tool: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            tool["title"] = self.title
        if self.description:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        for key, value in (
            ("outputSchema", self.output_schema),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("execution", self.execution),
            ("_meta", self.meta),
        ):
            if value is not None:
                tool[key] = value
        return tool


class Recording(msgspec.Struct, frozen=True, gc=False):
    """A witnessed call at rest: the same shape as an `MCPCall` (tool, flat args, result).

    `meta` is free-form provenance of this one recording (e.g. `{"provenance": "model_view"}`
    for a result taken from a transcript); matching never reads it, and it is not written when
    unset.

    Not tracked by the cyclic GC (`gc=False`), like `MCPCall`: a universe may hold a million
    recordings for the whole run, and every full collection would walk each one. A recording
    holds JSON data and is never part of a reference cycle.
    """

    tool_name: str
    args: dict[str, Any]
    result: Any = None
    meta: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    server_messages: list[dict[str, Any]] | msgspec.UnsetType = msgspec.UNSET
    """What the server sent while answering, in order (notifications, and requests to the client
    with the client's `response`); not written when unset."""


class Matching(msgspec.Struct, omit_defaults=True, frozen=True):
    """How live calls that miss are answered, and which keys identify a call per tool.
    `on_miss` and `per_tool_on_miss` answer tool calls; `per_method_on_miss` the other requests
    (`fail_call` unless it says otherwise)."""

    on_miss: MissPolicy = "fail_call"
    per_tool_on_miss: dict[str, MissPolicy] = msgspec.field(default_factory=dict)
    arg_keys: dict[str, list[str]] = msgspec.field(default_factory=dict)
    per_method_on_miss: dict[str, RequestMissPolicy] = msgspec.field(default_factory=dict)

    def policy_for(self, tool_name: str) -> MissPolicy:
        return self.per_tool_on_miss.get(tool_name, self.on_miss)

    def policy_for_request(self, method: str) -> RequestMissPolicy:
        return self.per_method_on_miss.get(method, "fail_call")


class Universe(msgspec.Struct, omit_defaults=True, frozen=True, weakref=True):
    """A hermetic fake upstream: tools, recordings and matching rules."""

    windtunnel_universe: int
    tools: list[UniverseTool]
    recordings: list[Recording] = msgspec.field(default_factory=list)
    matching: Matching = msgspec.field(default_factory=Matching)
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    server: ServerSurface | None = None
    resources: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_templates: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_reads: list[ResourceRead] = msgspec.field(default_factory=list)
    prompts: list[dict[str, Any]] = msgspec.field(default_factory=list)
    prompt_gets: list[PromptGet] = msgspec.field(default_factory=list)
    completions: list[CompletionRecord] = msgspec.field(default_factory=list)
    faults: list[Fault] = msgspec.field(default_factory=list)
    """Faults injected when this universe is served (`faults.spec`): kept apart from the
    recordings, which stay what was witnessed; left out of the file when there are none."""

    def tool(self, name: str) -> UniverseTool | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    def uses_synthesize(self) -> list[str]:
        """Tools whose miss policy is `synthesize` (they need a hook at serve time)."""
        return [t.name for t in self.tools if self.matching.policy_for(t.name) == "synthesize"]


class _VersionOnly(msgspec.Struct):
    windtunnel_universe: Any = None


class _Outline(msgspec.Struct):
    """A universe whose recordings are still raw JSON (checked for syntax, not yet decoded), and
    whose tools and matching rules are still as written (`tool_from_file`, `matching_from_file`
    read the spellings the format allows)."""

    windtunnel_universe: int
    tools: list[dict[str, Any]]
    recordings: list[msgspec.Raw] = msgspec.field(default_factory=list)
    matching: dict[str, Any] | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    server: ServerSurface | None = None
    resources: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_templates: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_reads: list[ResourceRead] = msgspec.field(default_factory=list)
    prompts: list[dict[str, Any]] = msgspec.field(default_factory=list)
    prompt_gets: list[PromptGet] = msgspec.field(default_factory=list)
    completions: list[CompletionRecord] = msgspec.field(default_factory=list)
    faults: Any = None


_outline_decoder = msgspec.json.Decoder(_Outline)
_recording_decoder = msgspec.json.Decoder(Recording)


_NULL_MEANS_DEFAULT = ("description", "mode")
"""Tool fields a file may write as `null` for "the default" (windtunnel-bench writes
`"description": null` for a tool without one)."""


def tool_from_file(raw: Any, *, file: str = "<universe>", path: str = "$.tools[0]") -> UniverseTool:
    """A tool as a file writes it: `null` for a default where `_NULL_MEANS_DEFAULT` allows it,
    unknown fields left out (`universe_warnings` names them)."""
    if isinstance(raw, dict) and any(raw.get(key, "") is None for key in _NULL_MEANS_DEFAULT):
        raw = {k: v for k, v in raw.items() if not (v is None and k in _NULL_MEANS_DEFAULT)}
    tool: UniverseTool = _convert(raw, UniverseTool, file, path)
    return tool


class _ArgKeysObject(msgspec.Struct):
    """The object form of an `arg_keys` entry: `{"keys": [...], "mode": "sequence"}` (or
    `arg_keys` for `keys`), as windtunnel-bench reads it."""

    keys: list[str] | None = None
    arg_keys: list[str] | None = None
    mode: ToolMode | None = None


class _MatchingFields(msgspec.Struct):
    on_miss: MissPolicy | None = None
    per_tool_on_miss: dict[str, Any] | None = None
    arg_keys: dict[str, Any] | None = None
    modes: dict[str, Any] | None = None
    per_method_on_miss: dict[str, Any] | None = None


MATCHING_FIELDS = frozenset(field.name for field in msgspec.structs.fields(_MatchingFields))
"""The fields `matching` may hold."""


def matching_from_file(
    raw: Any, *, file: str = "<universe>", path: str = "$.matching"
) -> tuple[Matching, dict[str, ToolMode]]:
    """The matching rules as a file writes them, and the tool modes they set.

    Besides `on_miss`, `per_tool_on_miss` and `arg_keys` lists, the spellings windtunnel-bench
    reads load: `null` for any of them (the default), an `arg_keys` entry in object form
    (`{"keys": [...], "mode": ...}`), and `modes` (`{tool: mode}`, which wins over the object
    form's mode, as there). The modes are given back to be set on the tools (`tools[*].mode`
    is where this format keeps a mode). A key listed twice counts once."""
    if raw is None:
        return Matching(), {}
    fields = _convert(raw, _MatchingFields, file, path)
    per_tool: dict[str, MissPolicy] = {}
    for tool_name, policy in (fields.per_tool_on_miss or {}).items():
        where = f"{path}.per_tool_on_miss.{tool_name}"
        per_tool[tool_name] = _convert(policy, MissPolicy, file, where)
    arg_keys: dict[str, list[str]] = {}
    modes: dict[str, ToolMode] = {}
    for tool_name, entry in (fields.arg_keys or {}).items():
        where = f"{path}.arg_keys.{tool_name}"
        if isinstance(entry, dict):
            form = _convert(entry, _ArgKeysObject, file, where)
            keys = form.keys if form.keys is not None else form.arg_keys or []
            if form.mode is not None:
                modes[tool_name] = form.mode
        else:
            keys = _convert(entry, list[str], file, where)
        arg_keys[tool_name] = list(dict.fromkeys(keys))
    for tool_name, mode in (fields.modes or {}).items():
        where = f"{path}.modes.{tool_name}"
        modes[tool_name] = _convert(mode, ToolMode, file, where)
    per_method: dict[str, RequestMissPolicy] = {}
    for method, policy in (fields.per_method_on_miss or {}).items():
        where = f"{path}.per_method_on_miss.{method}"
        per_method[method] = _convert(policy, RequestMissPolicy, file, where)
    matching = Matching(
        on_miss=fields.on_miss or "fail_call",
        per_tool_on_miss=per_tool,
        arg_keys=arg_keys,
        per_method_on_miss=per_method,
    )
    return matching, modes


def with_modes(tools: list[UniverseTool], modes: dict[str, ToolMode]) -> list[UniverseTool]:
    """`tools` with the modes the matching rules set (a mode for an undeclared tool sets none)."""
    if not modes:
        return tools
    return [
        msgspec.structs.replace(tool, mode=modes[tool.name])
        if modes.get(tool.name, tool.mode) != tool.mode
        else tool
        for tool in tools
    ]


def _convert(value: Any, type_: Any, file: str, path: str) -> Any:
    """`msgspec.convert`, its error a `UniverseError` at `path` (plus msgspec's own path)."""
    try:
        return msgspec.convert(value, type_)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        inner = where.rstrip("`").removeprefix("$") if where else ""
        raise UniverseError(message, file=file, path=path + inner) from None


def flatten_wire_args(tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The flat arguments inside a wire wrapper, or `args` itself when it is not one.

    The wrappers runtimes put around a call's arguments, each recognised only in full (its keys
    exactly these; a name, where it has one, this tool's), so a tool whose own parameters are
    called `name`, `arguments`, `args` or `function` keeps them:

    - MCP's params: `{"arguments": {...}}`, `{"name": tool, "arguments": {...}}`;
    - a worker's flat call: `{"name": tool, "args": {...}}`;
    - OpenAI's tool call: `{"function": {"name": tool, "arguments": "<JSON object>"}}`, also
      with its `id` and `type` beside `function` (`arguments` a JSON text or an object).

    One level is flattened: what is inside is taken as flat.
    """
    if len(args) > 3 or ("arguments" not in args and "args" not in args and "function" not in args):
        return args  # the common case, decided without building anything
    keys = args.keys()
    inner: Any = None
    if keys == {"arguments"} or (keys == {"name", "arguments"} and args["name"] == tool_name):
        inner = args["arguments"]
    elif keys == {"name", "args"} and args["name"] == tool_name:
        inner = args["args"]
    elif keys == {"function"} or keys == {"id", "type", "function"}:
        inner = _openai_arguments(tool_name, args["function"])
    return inner if isinstance(inner, dict) else args


def _openai_arguments(tool_name: str, function: Any) -> Any:
    """The arguments object of an OpenAI `function` part, or None when it is not one."""
    if not isinstance(function, dict) or "arguments" not in function:
        return None
    if not function.keys() <= {"name", "arguments"} or function.get("name", tool_name) != tool_name:
        return None
    arguments = function["arguments"]
    if isinstance(arguments, str):
        try:
            return msgspec.json.decode(arguments)
        except (msgspec.DecodeError, RecursionError):
            return None
    return arguments


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)$")


def _split_msgspec_error(exc: msgspec.MsgspecError, data: bytes | str) -> tuple[str, str | None]:
    """msgspec says `... - at `$.path``; malformed JSON says `(byte N)`: make that line:column."""
    text = str(exc)
    message, sep, where = text.partition(" - at `")
    if sep:
        return message, where.rstrip("`")
    offset = _BYTE_OFFSET.search(text)
    if offset is not None:
        raw = data.encode() if isinstance(data, str) else data
        position = int(offset.group(1))
        line = raw.count(b"\n", 0, position) + 1
        column = position - (raw.rfind(b"\n", 0, position) + 1) + 1
        text = f"{text[: offset.start()].rstrip()} (line {line}, column {column})"
    return text, None


def decode_universe(data: bytes | str, *, file: str = "<universe>") -> Universe:
    """Decode and validate universe JSON; any problem is a `UniverseError` naming file and path.

    Recordings are decoded one by one after the file's syntax and outline are checked: msgspec
    holds the GIL for the whole of one call, so one call over a large file would stop every
    other thread, the Trio loop that loads it in a worker thread included, for seconds (4 s for
    67 MB here); one recording at a time it yields every few milliseconds. The cyclic GC runs in
    small steps meanwhile (`load_pacing.gc_in_steps`), never in one pass over the whole load.
    """
    try:
        with gc_in_steps() as steps:
            outline, raws = _outline_and_recordings(data)
            if outline.windtunnel_universe != FORMAT_VERSION:
                raise _version_error(outline.windtunnel_universe, file)
            recordings = []
            for i, raw in enumerate(raws):
                recordings.append(_decode_recording(raw, i, file))
                steps.item()
    except RecursionError:
        # msgspec raises this (not a DecodeError) past its nesting limit.
        raise UniverseError("JSON is nested too deeply to be a universe", file=file) from None
    except msgspec.DecodeError as exc:
        _raise_version_error(data, file)
        message, path = _split_msgspec_error(exc, data)
        raise UniverseError(message, file=file, path=path) from None
    tools = [
        tool_from_file(raw, file=file, path=f"$.tools[{i}]") for i, raw in enumerate(outline.tools)
    ]
    matching, modes = matching_from_file(outline.matching, file=file)
    universe = Universe(
        windtunnel_universe=outline.windtunnel_universe,
        tools=with_modes(tools, modes),
        recordings=recordings,
        matching=matching,
        meta=outline.meta,
        server=outline.server,
        resources=outline.resources,
        resource_templates=outline.resource_templates,
        resource_reads=outline.resource_reads,
        prompts=outline.prompts,
        prompt_gets=outline.prompt_gets,
        completions=outline.completions,
        faults=[]
        if outline.faults is None
        else faults_from_tables(outline.faults, error=UniverseError, file=file, tolerant=True),
    )
    validate_universe(universe, file=file, nesting_checked=True)
    return universe


def decode_outline(data: bytes | str) -> _Outline:
    """The file with its recordings still raw (syntax checked, nothing else decoded)."""
    return _outline_decoder.decode(data)


def _outline_and_recordings(
    data: bytes | str,
) -> tuple[_Outline, Iterable[msgspec.Raw | memoryview]]:
    """The outline and each recording's raw bytes. A large file's recordings are located by a
    child process (`universe_scan`), so no single pass over the whole file holds the GIL here;
    else (or if the child cannot say) one msgspec pass finds them."""
    spans = recording_spans(data) if isinstance(data, bytes) else None
    if spans is not None:
        outline = _outline_decoder.decode(spans.head)
        if not outline.recordings:  # else a key repeated in the file: decode it whole
            return outline, spans
    outline = _outline_decoder.decode(data)
    return outline, outline.recordings


def _decode_recording(raw: msgspec.Raw | memoryview, index: int, file: str) -> Recording:
    try:
        recording: Recording = _recording_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        message, path = _split_msgspec_error(exc, bytes(raw))
        where = f"$.recordings[{index}]" + (path[1:] if path else "")
        raise UniverseError(message, file=file, path=where) from None
    flat = flatten_wire_args(recording.tool_name, recording.args)
    if flat is not recording.args:
        recording = msgspec.structs.replace(recording, args=flat)
    # Nesting needs an opening bracket per level: a recording with few brackets in its bytes
    # (brackets inside strings count too) cannot nest too deep, and is not walked.
    text = bytes(raw)
    if text.count(b"[") + text.count(b"{") > MAX_NESTING:
        _check_nesting(recording.args, file, f"$.recordings[{index}].args")
        _check_nesting(recording.result, file, f"$.recordings[{index}].result")
    if recording.server_messages is not msgspec.UNSET:
        check_server_messages(
            recording.server_messages, file, f"$.recordings[{index}].server_messages"
        )
    return recording


def _version_error(version: Any, file: str) -> UniverseError:
    return UniverseError(
        f"unsupported format version {version!r}; this Wind Tunnel reads version {FORMAT_VERSION}",
        file=file,
        path="$.windtunnel_universe",
    )


def _raise_version_error(data: bytes | str, file: str) -> None:
    """A file of another version gets a version message, not a confusing shape error."""
    try:
        head = msgspec.json.decode(data, type=_VersionOnly)
    except msgspec.DecodeError:
        return
    version = head.windtunnel_universe
    if version is not None and (type(version) is not int or version != FORMAT_VERSION):
        raise _version_error(version, file)


_validated: weakref.WeakValueDictionary[int, Universe] = weakref.WeakValueDictionary()
"""Universes that passed `validate_universe`, by id: each is checked once (Structs are frozen and
nothing changes one after load). Keyed by id: a frozen Struct holding dicts is unhashable."""


def validate_universe(
    universe: Universe, *, file: str = "<universe>", nesting_checked: bool = False
) -> None:
    """Check every cross-reference and the nesting limit (unless the recordings' was already
    checked, as decoding does); raise `UniverseError` for the first problem found. A universe
    that passed once (every loaded one) is not checked again."""
    if _validated.get(id(universe)) is universe:
        return
    _check_references(universe, file, nesting_checked)
    _validated[id(universe)] = universe


_TOOL_PAYLOADS = {
    "input_schema": "input_schema",
    "result_schema": "result_schema",
    "annotations": "annotations",
    "output_schema": "output_schema",
    "icons": "icons",
    "execution": "execution",
    "meta": "_meta",
}
"""A tool's object-valued fields (the nesting limit applies to each) and their names in the file."""


def _check_references(universe: Universe, file: str, nesting_checked: bool) -> None:
    names: set[str] = set()
    for i, tool in enumerate(universe.tools):
        if not tool.name:
            raise UniverseError(
                "a tool needs a non-empty name", file=file, path=f"$.tools[{i}].name"
            )
        if tool.name in names:
            raise UniverseError(
                f"tool {tool.name!r} is declared twice", file=file, path=f"$.tools[{i}].name"
            )
        names.add(tool.name)
    for i, tool in enumerate(universe.tools):
        for field in _TOOL_PAYLOADS:
            _check_nesting(getattr(tool, field), file, f"$.tools[{i}].{_TOOL_PAYLOADS[field]}")
    for i, recording in enumerate(universe.recordings):
        if not nesting_checked:
            _check_nesting(recording.args, file, f"$.recordings[{i}].args")
            _check_nesting(recording.result, file, f"$.recordings[{i}].result")
            if recording.server_messages is not msgspec.UNSET:
                check_server_messages(
                    recording.server_messages, file, f"$.recordings[{i}].server_messages"
                )
        if recording.tool_name not in names:
            raise UniverseError(
                f"recording names undeclared tool {recording.tool_name!r}",
                file=file,
                path=f"$.recordings[{i}].tool_name",
            )
    # `arg_keys` / `per_tool_on_miss` entries naming no declared tool, and empty key lists,
    # load: the format says so, and `universe_warnings` reports them.
    for method in universe.matching.per_method_on_miss:
        if method not in REQUEST_METHODS:
            raise UniverseError(
                f"names {method!r}, not a request a universe answers (expected one of "
                f"{', '.join(REQUEST_METHODS)}; tool calls take on_miss and per_tool_on_miss)",
                file=file,
                path=f"$.matching.per_method_on_miss.{method}",
            )
    if universe.faults:
        # Imported here: the engine reads universes (this module), and loads after it.
        from .faults.engine import check_faults_against

        check_faults_against(universe.faults, universe, error=UniverseError, file=file)
    check_surface(
        server=universe.server,
        resources=universe.resources,
        resource_templates=universe.resource_templates,
        resource_reads=universe.resource_reads,
        prompts=universe.prompts,
        prompt_gets=universe.prompt_gets,
        completions=universe.completions,
        file=file,
    )


def _check_nesting(value: Any, file: str, path: str) -> None:
    if nested_deeper_than(value, MAX_NESTING):
        raise UniverseError(
            f"nested deeper than {MAX_NESTING} levels; MCP clients cannot read it",
            file=file,
            path=path,
        )


def load_universe(path: str | os.PathLike[str]) -> Universe:
    """Read, parse and validate a universe file."""
    file = os.fspath(path)
    data = read_input(file, what="a universe file", error=UniverseError)
    return decode_universe(data, file=file)


def _escape_wrapper_look(recording: Recording) -> Recording:
    if flatten_wire_args(recording.tool_name, recording.args) is recording.args:
        return recording
    return msgspec.structs.replace(recording, args={"arguments": recording.args})


def _sorted_json(value: Any) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(value, order="deterministic"))


def encode_universe(universe: Universe) -> bytes:
    """Deterministic, indented JSON so universe files diff cleanly.

    Arguments, matching rules and `meta` are written with sorted keys (matching never depends on
    key order). What is served keeps the order it was recorded in: results and tool schemas go
    to the agent byte for byte as the upstream sent them. Flat args that themselves look like a
    wire wrapper are written wrapped once more, because the loader flattens exactly one level:
    what is written reads back as the same universe.
    """
    recordings = [
        msgspec.structs.replace(
            escaped,
            args=_sorted_json(escaped.args),
            meta=msgspec.UNSET if escaped.meta is msgspec.UNSET else _sorted_json(escaped.meta),
        )
        for escaped in map(_escape_wrapper_look, universe.recordings)
    ]
    written = msgspec.structs.replace(
        universe,
        # Written even when empty: windtunnel-bench requires the key (and so does design 0001).
        recordings=recordings or msgspec.Raw(b"[]"),
        # Left as they are when empty, so their defaults are still omitted.
        matching=_sorted_json(universe.matching) if universe.matching != Matching() else Matching(),
        meta=_sorted_json(universe.meta) if universe.meta else {},
    )
    compact = msgspec.json.encode(written)
    return msgspec.json.format(compact, indent=2) + b"\n"


def write_universe(universe: Universe, path: str | os.PathLike[str]) -> None:
    """Write atomically: a reader never sees half a universe (`atomic_write`)."""
    atomic_write(path, encode_universe(universe), error=UniverseError)
