"""The universe's surface beyond tool calls (issue 25, /docs/universe.md "The whole surface").

What the recorded server showed the agent besides its tools' results: its identity, instructions
and capabilities (`server`), the resources, resource templates and prompts it listed, the reads,
prompt gets and completions it answered, and per recording the messages it sent while answering
(`server_messages`). Every part is optional and left out of the file when absent, so a universe of
tools alone is written exactly as before.

Payloads that came from the wire are kept as the upstream sent them (key order included): they
are plain dicts, checked here for the few keys replay relies on, each problem one `UniverseError`
with its JSON path.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from .canonical import nested_deeper_than
from .errors import UniverseError

__all__ = [
    "CompletionRecord",
    "PromptGet",
    "ResourceRead",
    "ServerSurface",
    "check_nesting",
    "check_server_messages",
    "check_surface",
]

MAX_NESTING = 128  # the same limit as universe.MAX_NESTING (which re-exports this one)


class ServerSurface(msgspec.Struct, omit_defaults=True, frozen=True):
    """The recorded server's identity: what `initialize` (or `server/discover`) answered.

    `info` is the `serverInfo` object and `capabilities` the capabilities object, both exactly as
    sent; `instructions` is absent when the server sent none."""

    protocol_version: str | None = None
    info: dict[str, Any] | None = None
    instructions: str | None = None
    capabilities: dict[str, Any] | None = None


class ResourceRead(msgspec.Struct, frozen=True):
    """A `resources/read` answered: the URI asked for and the `ReadResourceResult` sent."""

    uri: str
    result: dict[str, Any]


class PromptGet(msgspec.Struct, frozen=True, kw_only=True):
    """A `prompts/get` answered: the prompt, its arguments (`{}` when none) and the result."""

    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    result: dict[str, Any]


class CompletionRecord(msgspec.Struct, omit_defaults=True, frozen=True, kw_only=True):
    """A `completion/complete` answered: the request's `ref`, `argument` and `context` (as sent,
    without `_meta`) and the `CompleteResult`."""

    ref: dict[str, Any]
    argument: dict[str, Any]
    context: dict[str, Any] | None = None
    result: dict[str, Any]

    def request(self) -> dict[str, Any]:
        """The request params matching compares (canonically)."""
        params: dict[str, Any] = {"ref": self.ref, "argument": self.argument}
        if self.context is not None:
            params["context"] = self.context
        return params


def check_nesting(value: Any, file: str, path: str) -> None:
    if nested_deeper_than(value, MAX_NESTING):
        raise UniverseError(
            f"nested deeper than {MAX_NESTING} levels; MCP clients cannot read it",
            file=file,
            path=path,
        )


def _need_string(entry: dict[str, Any], key: str, file: str, path: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise UniverseError(f"needs a non-empty string `{key}`", file=file, path=f"{path}.{key}")
    return value


def _check_listed(
    entries: Sequence[dict[str, Any]], key: str, what: str, file: str, field: str
) -> None:
    """A listed resource, template or prompt: an object with its key, each key listed once."""
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        path = f"$.{field}[{i}]"
        value = _need_string(entry, key, file, path)
        if value in seen:
            raise UniverseError(
                f"{what} {value!r} is listed twice", file=file, path=f"{path}.{key}"
            )
        seen.add(value)
        check_nesting(entry, file, path)


def check_surface(
    *,
    server: ServerSurface | None,
    resources: Sequence[dict[str, Any]],
    resource_templates: Sequence[dict[str, Any]],
    resource_reads: Sequence[ResourceRead],
    prompts: Sequence[dict[str, Any]],
    prompt_gets: Sequence[PromptGet],
    completions: Sequence[CompletionRecord],
    file: str,
) -> None:
    """Raise a `UniverseError` (file and JSON path) for the first problem in the surface parts."""
    if server is not None and server.info is not None:
        for key in ("name", "version"):
            if not isinstance(server.info.get(key), str):
                raise UniverseError(
                    f"serverInfo needs a string `{key}`", file=file, path=f"$.server.info.{key}"
                )
    if server is not None:
        check_nesting(server.info, file, "$.server.info")
        check_nesting(server.capabilities, file, "$.server.capabilities")
    _check_listed(resources, "uri", "resource", file, "resources")
    _check_listed(
        resource_templates, "uriTemplate", "resource template", file, "resource_templates"
    )
    _check_listed(prompts, "name", "prompt", file, "prompts")
    for i, read in enumerate(resource_reads):
        if not read.uri:
            raise UniverseError(
                "needs a non-empty `uri`", file=file, path=f"$.resource_reads[{i}].uri"
            )
        _check_result_list(read.result, "contents", file, f"$.resource_reads[{i}].result")
    for i, get in enumerate(prompt_gets):
        if not get.name:
            raise UniverseError(
                "needs a non-empty `name`", file=file, path=f"$.prompt_gets[{i}].name"
            )
        check_nesting(get.arguments, file, f"$.prompt_gets[{i}].arguments")
        _check_result_list(get.result, "messages", file, f"$.prompt_gets[{i}].result")
    for i, completion in enumerate(completions):
        path = f"$.completions[{i}]"
        if not isinstance(completion.ref.get("type"), str):
            raise UniverseError("needs a string `type`", file=file, path=f"{path}.ref.type")
        _need_string(completion.argument, "name", file, f"{path}.argument")
        check_nesting(completion.request(), file, path)
        completed = completion.result.get("completion")
        if not isinstance(completed, dict) or not isinstance(completed.get("values"), list):
            raise UniverseError(
                "needs `completion` with a `values` array",
                file=file,
                path=f"{path}.result.completion",
            )
        check_nesting(completion.result, file, f"{path}.result")


def _check_result_list(result: dict[str, Any], key: str, file: str, path: str) -> None:
    if not isinstance(result.get(key), list):
        raise UniverseError(f"needs a `{key}` array", file=file, path=f"{path}.{key}")
    check_nesting(result, file, path)


_MESSAGE_KEYS = frozenset({"method", "params", "response", "input_round", "input_key"})


def check_server_messages(messages: Iterable[Any], file: str, path: str) -> None:
    """A recording's `server_messages`: notifications (`method`, `params`) and server requests
    with the client's answer (`response`: exactly one of `result` or `error`); a request the
    server made in a 2026-07-28 `input_required` result also names that result's round
    (`input_round`, from 1) and its key there (`input_key`)."""
    for j, message in enumerate(messages):
        where = f"{path}[{j}]"
        if not isinstance(message, dict):
            raise UniverseError("a server message must be an object", file=file, path=where)
        unknown = sorted(message.keys() - _MESSAGE_KEYS)
        if unknown:
            raise UniverseError(
                f"unknown key `{unknown[0]}` (expected method, params, response, input_round,"
                " input_key)",
                file=file,
                path=f"{where}.{unknown[0]}",
            )
        _need_string(message, "method", file, where)
        if "params" in message and not isinstance(message["params"], dict):
            raise UniverseError("`params` must be an object", file=file, path=f"{where}.params")
        if "response" in message:
            response = message["response"]
            if (
                not isinstance(response, dict)
                or len(response) != 1
                or not (response.keys() <= {"result", "error"})
            ):
                raise UniverseError(
                    '`response` must be {"result": ...} or {"error": ...}',
                    file=file,
                    path=f"{where}.response",
                )
        _check_input_round(message, file, where)
        check_nesting(message, file, where)


def _check_input_round(message: dict[str, Any], file: str, where: str) -> None:
    if "input_round" not in message and "input_key" not in message:
        return
    if "response" not in message:
        raise UniverseError(
            "`input_round` and `input_key` belong to a request with its `response`",
            file=file,
            path=where,
        )
    round_ = message.get("input_round")
    if not isinstance(round_, int) or isinstance(round_, bool) or round_ < 1:
        raise UniverseError(
            "`input_round` must be an integer from 1", file=file, path=f"{where}.input_round"
        )
    key = message.get("input_key")
    if not isinstance(key, str) or not key:
        raise UniverseError(
            "`input_key` must be a non-empty string", file=file, path=f"{where}.input_key"
        )
