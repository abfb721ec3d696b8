"""What a JSON-RPC capture shows of an upstream beyond its tool calls (issue 25). Pure: no I/O.

`SurfaceCollector` takes the answers the `mcp-jsonrpc` adapter pairs, one upstream at a time,
with the rules `wt record` keeps them by (docs/universe.md, "The whole surface"):

- `initialize` (handshake era) gives `server`: `protocolVersion`, `serverInfo`, `instructions`,
  `capabilities`, each as sent. `server/discover` (2026-07-28) gives the same, the server info
  from the result's `_meta`, the protocol version from the first request's `_meta`.
- `resources/list`, `resources/templates/list`, `prompts/list`: every page, in first-seen order; a
  later answer replaces an earlier one's entry of the same `uri` / `uriTemplate` / `name`.
- `resources/read`, `prompts/get`, `completion/complete`: the first answer to each request (as
  replay matches it: the URI; the name and canonical arguments; the canonical request).

Payloads lose only the protocol's envelope (`resultType`, `_meta` keys under
`io.modelcontextprotocol/`). Anything the universe could not hold (a list entry without its key,
a read without `contents`, ...) is left out with a warning naming the capture line, so the import
never writes a universe its own loader refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..calls import without_envelope
from ..canonical import canonical_key, nested_deeper_than
from ..universe_surface import MAX_NESTING
from .envelope import Surface

__all__ = ["PROTOCOL_VERSION_META", "SERVER_INFO_META", "SurfaceCollector"]

SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"

_LISTS = {
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "resource_templates", "uriTemplate"),
    "prompts/list": ("prompts", "prompts", "name"),
}
"""method -> (the result's list, the surface's section, the key an entry is known by)."""

SURFACE_METHODS = frozenset(
    {"initialize", "server/discover", "resources/read", "prompts/get", "completion/complete"}
    | _LISTS.keys()
)

_INFO_KEYS = ("name", "version")

Warn = Callable[[str, str], None]


@dataclass
class _Sections:
    server: dict[str, Any] = field(default_factory=dict)
    listed: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"resources": {}, "resource_templates": {}, "prompts": {}}
    )
    reads: dict[Any, dict[str, Any]] = field(default_factory=dict)
    gets: dict[Any, dict[str, Any]] = field(default_factory=dict)
    completions: dict[Any, dict[str, Any]] = field(default_factory=dict)


class SurfaceCollector:
    """Collects each upstream's surface from its answered requests, in capture order."""

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self._by_upstream: dict[str, _Sections] = {}

    def _sections(self, upstream: str) -> _Sections:
        return self._by_upstream.setdefault(upstream, _Sections())

    def request(self, upstream: str, params: Any) -> None:
        """A client request: in the 2026-07-28 era its `_meta` names the protocol version."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
        server = self._sections(upstream).server
        if isinstance(version, str) and "protocol_version" not in server:
            server["protocol_version"] = version

    def answered(
        self, upstream: str, where: str, method: str, params: Any, result: dict[str, Any]
    ) -> None:
        """A successful answer to a client request of a surface method (`SURFACE_METHODS`)."""
        if nested_deeper_than(result, MAX_NESTING):
            self._warn(
                "surface_too_deep",
                f"{where}: the {method} answer nests deeper than {MAX_NESTING} levels, which "
                "MCP clients cannot read; left out of the universe",
            )
            return
        params = params if isinstance(params, dict) else {}
        sections = self._sections(upstream)
        if method in ("initialize", "server/discover"):
            self._server(sections, where, method, result)
        elif method in _LISTS:
            self._listed(sections, where, method, result)
        elif method == "resources/read":
            self._read(sections, where, params, result)
        elif method == "prompts/get":
            self._get(sections, where, params, result)
        elif method == "completion/complete":
            self._complete(sections, where, params, result)

    def _server(self, sections: _Sections, where: str, method: str, result: dict[str, Any]) -> None:
        server = sections.server
        if method == "initialize":
            if isinstance(result.get("protocolVersion"), str):
                server["protocol_version"] = result["protocolVersion"]
            info, info_path = result.get("serverInfo"), "result.serverInfo"
        else:
            meta = result.get("_meta")
            info = meta.get(SERVER_INFO_META) if isinstance(meta, dict) else None
            info_path = f"result._meta.{SERVER_INFO_META}"
        named = isinstance(info, dict) and all(isinstance(info.get(k), str) for k in _INFO_KEYS)
        if named:
            server["info"] = info
        elif info is not None:
            self._warn(
                "server_info_malformed",
                f"{where}: {info_path} is not an object with string `name` and `version`; the "
                "universe keeps no server identity from it",
            )
        for key, kind, what in (
            ("instructions", str, "a string"),
            ("capabilities", dict, "an object"),
        ):
            value = result.get(key)
            if isinstance(value, kind):
                server[key] = value
            elif value is not None:
                self._warn(
                    "server_surface_malformed",
                    f"{where}: result.{key} is not {what}; left out of the universe",
                )

    def _listed(self, sections: _Sections, where: str, method: str, result: dict[str, Any]) -> None:
        items, section, key = _LISTS[method]
        entries = result.get(items)
        if not isinstance(entries, list):
            self._warn(
                "surface_list_malformed",
                f"{where}: the {method} answer has no `{items}` array; left out of the universe",
            )
            return
        listed = sections.listed[section]
        for i, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get(key), str) and entry[key]:
                listed[entry[key]] = entry
            else:
                self._warn(
                    "surface_list_malformed",
                    f"{where}: result.{items}[{i}] is not an object with a non-empty string "
                    f"`{key}`; left out of the universe",
                )

    def _read(
        self, sections: _Sections, where: str, params: dict[str, Any], result: dict[str, Any]
    ) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            self._warn("resource_read_malformed", f"{where}: answers a read of no string `uri`")
            return
        if not isinstance(result.get("contents"), list):
            self._warn(
                "resource_read_malformed",
                f"{where}: the resources/read answer for {uri!r} has no `contents` array; left "
                "out of the universe",
            )
            return
        sections.reads.setdefault(uri, {"uri": uri, "result": without_envelope(result)})

    def _get(
        self, sections: _Sections, where: str, params: dict[str, Any], result: dict[str, Any]
    ) -> None:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            self._warn("prompt_get_malformed", f"{where}: answers a prompts/get of no `name`")
            return
        if not isinstance(result.get("messages"), list):
            self._warn(
                "prompt_get_malformed",
                f"{where}: the prompts/get answer for {name!r} has no `messages` array; left "
                "out of the universe",
            )
            return
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        entry = {"name": name, "arguments": arguments, "result": without_envelope(result)}
        sections.gets.setdefault((name, canonical_key(arguments)), entry)

    def _complete(
        self, sections: _Sections, where: str, params: dict[str, Any], result: dict[str, Any]
    ) -> None:
        ref, argument = params.get("ref"), params.get("argument")
        completion = result.get("completion")
        problem = None
        if not isinstance(ref, dict) or not isinstance(ref.get("type"), str):
            problem = "its request has no `ref` with a string `type`"
        elif not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            problem = "its request has no `argument` with a string `name`"
        elif not argument["name"]:
            problem = "its request's `argument.name` is empty"
        elif not isinstance(completion, dict) or not isinstance(completion.get("values"), list):
            problem = "it has no `completion` with a `values` array"
        elif "context" in params and not isinstance(params["context"], dict):
            problem = "its request's `context` is not an object"
        if problem is not None:
            self._warn(
                "completion_malformed",
                f"{where}: a completion/complete answer {problem}; left out of the universe",
            )
            return
        request: dict[str, Any] = {
            k: params[k] for k in ("ref", "argument", "context") if k in params
        }
        sections.completions.setdefault(
            canonical_key(request), {**request, "result": without_envelope(result)}
        )

    def fill(self, surface_of: Callable[[str], Surface]) -> None:
        """Put each upstream's sections into its envelope surface."""
        for upstream, sections in self._by_upstream.items():
            surface = surface_of(upstream)
            if sections.server:
                surface.server = dict(sections.server)
            surface.resources = list(sections.listed["resources"].values())
            surface.resource_templates = list(sections.listed["resource_templates"].values())
            surface.prompts = list(sections.listed["prompts"].values())
            surface.resource_reads = list(sections.reads.values())
            surface.prompt_gets = list(sections.gets.values())
            surface.completions = list(sections.completions.values())
