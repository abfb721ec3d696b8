"""The SDK's answers to a plain stdio session, written without importing it (issue 31).

A spawned `wt serve --stdio` answers `initialize`, `ping`, `tools/list`, `server/discover` and
plain `tools/call`s before the MCP SDK is loaded (`_stdio_lite`); every byte must be the one the
SDK would write (`tests/mcp/test_stdio_lite.py` compares whole sessions of both eras with the
SDK's, under the lowest and the newest SDK of the supported range). What the SDK does to these
answers, and so what is reproduced here:

- each result is validated and re-dumped by the protocol version's surface
  (`mcp_types.methods.serialize_server_result`): keys in the order of that version's generated
  model (alphabetical), unknown keys of closed models dropped, those of open ones (a tool's
  `inputSchema`) after the declared ones, in their own order. A tool's `inputSchema` declares
  `$schema`, `properties`, `required`, `type` up to 2025-11-25 and only `$schema`, `type` at
  2026-07-28: the same schema is written in two orders;
- a 2026-07-28 result gets `resultType` and the `serverInfo` stamp last in `_meta`
  (`ServerRunner._serialize`), and the cacheable ones (`tools/list`, `server/discover`) the
  model defaults `ttlMs` 0 and `cacheScope` "private";
- `initialize` negotiates as `ServerRunner._negotiate_initialize` does: a handshake version
  the SDK knows is echoed, any other string gets the latest handshake version;
- JSON as pydantic-core writes it: compact, UTF-8, the same escapes as msgspec's encoder for
  strings and integers (checked by the tests), but floats, which the two format differently.

Only what is certain is answered here. Every check errs towards the SDK: a tool, a result, a
client capability or an envelope outside the shapes below is `None` ("the SDK's to answer"),
and `_stdio_lite` hands the session over to it. The SDK's own constants (protocol versions,
`_meta` keys) are copied here, and the tests hold them equal to the installed SDK's.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..calls import MCPCall, is_tool_result
from ._plain_call import remember
from ._shapes import tool_text

__all__ = [
    "CHECKED_SDKS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "MODERN_VERSION",
    "PROTOCOL_VERSION_KEY",
    "LiteAnswers",
    "client_capabilities_ok",
    "envelope_ok",
    "implementation_ok",
    "installed_sdk",
    "wire_json",
]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""`mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`."""
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
MODERN_VERSION = "2026-07-28"
"""`mcp_types.version.MODERN_PROTOCOL_VERSIONS`' one version."""
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

CHECKED_SDKS: dict[str, dict[str, Any]] = {"2.1.1": {"experimental": {}}, "2.3.0": {}}
"""The SDK versions (`mcp` and `mcp-types` alike) whose answers this module writes, and what
sets each apart: the `initialize` capabilities of 2.1.1 carry an empty `experimental`. Under any
other version the SDK serves from the start. To add one: run tests/mcp/test_stdio_lite.py under
it (as `test_sdk_range` runs the lowest) and record here what differs."""

_TOOL_KEYS = ("annotations", "description", "inputSchema", "name", "outputSchema", "title")
"""A tool's keys answered here, in the order of both eras' `Tool` (`_meta`, `execution` and
`icons` are the SDK's to render)."""
_ANNOTATION_KEYS = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title")
_SCHEMA_DECLARED = {
    "legacy": ("$schema", "properties", "required", "type"),
    "modern": ("$schema", "type"),
}
_OUTPUT_DECLARED = {"legacy": ("$schema", "properties", "required", "type"), "modern": ("$schema",)}
_MAX_DEPTH = 64
"""Deeper JSON is left to the SDK (the walk below is recursive)."""


def wire_json(value: Any) -> bytes | None:
    """`value` as pydantic-core's `to_json` writes it, when that is certain: JSON data of
    strings, integers, booleans, null, lists and string-keyed objects (no floats, no lone
    surrogates); else None."""
    if not _plain(value, 0):
        return None
    try:
        return msgspec.json.encode(value)
    except (TypeError, UnicodeEncodeError, OverflowError):
        return None


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if depth >= _MAX_DEPTH:
        return False
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False


def installed_sdk() -> str | None:
    """The version of the installed SDK, read without importing it (`importlib.metadata`
    costs more than this whole start-up saves on a small one): the `dist-info` folders next to
    `mcp` and `mcp_types`; None when they are missing or disagree."""
    found = set()
    for package in ("mcp", "mcp_types"):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            return None
        folder = os.path.dirname(os.path.dirname(spec.origin))
        versions = [
            name[len(package) + 1 : -len(".dist-info")]
            for name in os.listdir(folder)
            if name.startswith(package + "-") and name.endswith(".dist-info")
        ]
        if len(versions) != 1:
            return None
        found.add(versions[0])
    return found.pop() if len(found) == 1 else None


def implementation_ok(info: Any) -> bool:
    """A client's `Implementation` every SDK of the range accepts: name and version, and
    perhaps a title and a description, all strings."""
    return (
        type(info) is dict
        and {"name", "version"} <= info.keys() <= {"name", "version", "title", "description"}
        and all(type(v) is str for v in info.values())
    )


def client_capabilities_ok(capabilities: Any) -> bool:
    """Client capabilities every SDK of the range accepts: none, or empty `sampling`,
    `elicitation` and `experimental`, and `roots` with at most a boolean `listChanged`."""
    if type(capabilities) is not dict:
        return False
    for key, value in capabilities.items():
        if type(value) is not dict:
            return False
        if key == "roots":
            if not value.keys() <= {"listChanged"} or any(
                type(v) is not bool for v in value.values()
            ):
                return False
        elif key not in ("sampling", "elicitation", "experimental") or value:
            return False
    return True


def envelope_ok(meta: Any) -> bool:
    """A 2026-07-28 request envelope (`params._meta`) the SDK serves at 2026-07-28: the version,
    plain capabilities and perhaps a plain client identity, and nothing else in `_meta`."""
    return (
        type(meta) is dict
        and {PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY}
        <= meta.keys()
        <= {PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY}
        and meta[PROTOCOL_VERSION_KEY] == MODERN_VERSION
        and client_capabilities_ok(meta[CLIENT_CAPABILITIES_KEY])
        and (CLIENT_INFO_KEY not in meta or implementation_ok(meta[CLIENT_INFO_KEY]))
    )


def negotiated(requested: str) -> str:
    """`ServerRunner._negotiate_initialize`'s choice for a client's `protocolVersion`."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION


class LiteAnswers:
    """The result JSON of each answer, for a server with no recorded identity and no surface
    (the SDK's own `initialize` answer: its name and version, and the tools capability).

    `tools` is the listing of `tools/list` (each tool as `ToolSpec.listed()` gives it); `ok`
    says whether every one of them can be written here (else the SDK lists them)."""

    def __init__(
        self, name: str, version: str, tools: Sequence[Mapping[str, Any]], sdk: str
    ) -> None:
        self._stamp = {"name": name, "version": version}
        self._capabilities = {**CHECKED_SDKS[sdk], "tools": {"listChanged": False}}
        self._listings = {era: _tools_json(tools, era) for era in ("legacy", "modern")}
        self._recorded: dict[tuple[str, bool, int], tuple[Any, bytes | None]] = {}
        """A recorded hit's result JSON by era, error flag and the result's identity, as the
        fast path keeps it (`_fast_path`): the same recordings are served over and over, and
        nothing mutates the universe's objects (the memo holds each, so its id is not reused)."""
        self.ok = (
            wire_json(self._stamp) is not None
            and self._listings["legacy"] is not None
            and self._listings["modern"] is not None
        )

    def initialize(self, version: str) -> bytes | None:
        result = {
            "capabilities": self._capabilities,
            "protocolVersion": version,
            "serverInfo": self._stamp,
        }
        return wire_json(result)

    def discover(self) -> bytes | None:
        return wire_json(
            self._modern(
                {
                    "cacheScope": "private",
                    "capabilities": {"tools": {"listChanged": False}},
                    "resultType": "complete",
                    "supportedVersions": [MODERN_VERSION],
                    "ttlMs": 0,
                }
            )
        )

    def listing(self, era: str) -> bytes | None:
        """The whole `tools/list` result at `era`."""
        listed = self._listings[era]
        if listed is None:
            return None
        if era == "legacy":
            return b'{"tools":' + listed + b"}"
        stamp = wire_json({SERVER_INFO_KEY: self._stamp})
        assert stamp is not None  # checked in `ok`
        head = b'{"cacheScope":"private","resultType":"complete","tools":'
        return head + listed + b',"ttlMs":0,"_meta":' + stamp + b"}"

    def call_result(self, call: MCPCall, era: str) -> bytes | None:
        """The result of an answered `tools/call` (`_sdk_server.to_call_tool_result`, then the
        era's sieve and stamps), or None when the SDK must write it (a shape not covered here,
        or one the era's surface refuses: the SDK's error answer)."""
        if "match" not in call.extra:  # not a recorded hit: a fresh object every time
            return self._call_result(call, era)
        key = (era, call.is_error, id(call.result))
        held = self._recorded.get(key)
        if held is not None and held[0] is call.result:
            return held[1]
        encoded = self._call_result(call, era)
        remember(self._recorded, key, (call.result, encoded))
        return encoded

    def _call_result(self, call: MCPCall, era: str) -> bytes | None:
        result = call.result
        if is_tool_result(result):
            if not result.keys() <= {"content", "structuredContent", "isError"}:
                return None
            blocks = result["content"]
            if not all(block.keys() == {"type", "text"} for block in blocks):
                return None
            if not all(b["type"] == "text" and type(b["text"]) is str for b in blocks):
                return None
            texts = [b["text"] for b in blocks]
            is_error = result.get("isError", False)
            if type(is_error) is not bool:
                return None
            has_structured = "structuredContent" in result
            structured = result.get("structuredContent")
            if has_structured and type(structured) is not dict:
                return None
        else:
            try:
                texts = [tool_text(result)["text"]]
            except (TypeError, ValueError):  # not JSON data: the SDK's answer
                return None
            is_error = call.is_error
            has_structured = isinstance(result, dict)
            structured = result
        wire: dict[str, Any] = {
            "content": [{"text": text, "type": "text"} for text in texts],
            "isError": is_error,
        }
        if era == "modern":
            wire["resultType"] = "complete"
        if has_structured:
            wire["structuredContent"] = structured
        return wire_json(self._modern(wire) if era == "modern" else wire)

    def _modern(self, result: dict[str, Any]) -> dict[str, Any]:
        result["_meta"] = {SERVER_INFO_KEY: dict(self._stamp)}
        return result


def _tools_json(tools: Sequence[Mapping[str, Any]], era: str) -> bytes | None:
    rendered = []
    for tool in tools:
        entry = _tool(tool, era)
        if entry is None:
            return None
        rendered.append(entry)
    return wire_json(rendered)


def _tool(tool: Mapping[str, Any], era: str) -> dict[str, Any] | None:
    if not tool.keys() <= set(_TOOL_KEYS) or type(tool.get("name")) is not str:
        return None
    if any(key in tool and type(tool[key]) is not str for key in ("title", "description")):
        return None
    out: dict[str, Any] = {}
    for key in _TOOL_KEYS:
        if key not in tool:
            continue
        value = tool[key]
        if key == "annotations":
            value = _annotations(value)
        elif key == "inputSchema":
            value = _schema(value, _SCHEMA_DECLARED[era])
        elif key == "outputSchema":
            value = _schema(value, _OUTPUT_DECLARED[era])
        if value is None:
            return None
        out[key] = value
    return out if "inputSchema" in out else None


def _annotations(value: Any) -> dict[str, Any] | None:
    if type(value) is not dict or not value.keys() <= set(_ANNOTATION_KEYS):
        return None
    for key, item in value.items():
        if type(item) is not (str if key == "title" else bool):
            return None
    return {key: value[key] for key in _ANNOTATION_KEYS if key in value}


def _schema(value: Any, declared: tuple[str, ...]) -> dict[str, Any] | None:
    """A tool's input or output schema as the era's open model re-dumps it: the declared keys
    in their order, then the others in their own; None for one any era's model refuses (or
    whose top-level nulls the re-dump drops)."""
    if type(value) is not dict or value.get("type") != "object":
        return None
    if any(item is None for item in value.values()):
        return None
    if "$schema" in value and type(value["$schema"]) is not str:
        return None
    properties = value.get("properties", {})
    if type(properties) is not dict or any(
        type(p) not in (dict, bool) for p in properties.values()
    ):
        return None
    required = value.get("required", [])
    if type(required) is not list or any(type(r) is not str for r in required):
        return None
    ordered = {key: value[key] for key in declared if key in value}
    ordered.update((key, item) for key, item in value.items() if key not in ordered)
    return ordered
