"""A plain `tools/call` answered without the SDK's session: what both fast paths share.

The fast paths (`_fast_call` for Streamable HTTP, `_stdio_fast` for stdio) each decide which
protocol version a request is served at, the way the SDK's transport would. The rest is here and
the same for both: recognise a plain `tools/call` of a declared tool in a decoded JSON-RPC
message, ask the SDK's own validators whether it would reach our handler, run that handler's
answer (`answer_call`), and build the reply the SDK would write, byte for byte: the same result
mapping and sieve, the same 2026-07-28 stamps as `mcp.server.runner.ServerRunner._serialize`,
the same exception-to-error mapping as its dispatchers, the same serializer as its transports.

Two memos keep the SDK's pydantic work off the hot path without changing any answer; both hold
outcomes of pure functions, keyed by exact JSON encodings:

- whether a call passes validation depends only on the version and its `_meta` (name and
  arguments are already known to be a string and an object, which every version accepts);
- the wire form of a result depends only on the result, its error flag and the version, and the
  same recordings are served over and over. Only JSON data is memoized: a result whose encoding
  does not decode back to an equal value (a mock's datetime, a NaN) is mapped every time.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import msgspec
import pydantic
from mcp.server import Server
from mcp.server.runner import modern_error_data
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import INTERNAL_ERROR, SERVER_INFO_META_KEY
from mcp_types import methods as sdk_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..calls import MCPCall
from ._bridge import Answer, answer_call, to_call_tool_result

__all__ = ["PlainCall", "PlainCalls"]

# Bounds on the memos: entries, and the largest result worth keying by its encoding.
_MEMO_ENTRIES = 1024
_MEMO_MAX_RESULT = 64 * 1024
_INVALID_RESULT = "Handler returned an invalid result"  # the SDK's words


@dataclass(frozen=True, slots=True)
class PlainCall:
    """A `tools/call` request whose shape needs nothing from the SDK but its handler."""

    id: int | str
    name: str
    args: dict[str, Any]
    params: dict[str, Any]


class PlainCalls:
    """Recognises, validates and answers plain `tools/call`s for one SDK server."""

    def __init__(self, server: Server[Any], tools: Collection[str], answer: Answer) -> None:
        self._server = server
        self._tools = frozenset(tools)
        self._answer = answer
        self._accepted: dict[tuple[str, bytes], bool] = {}
        self._wire: dict[tuple[str, bool, bytes], dict[str, Any]] = {}

    def parse(self, message: Any) -> PlainCall | None:
        """The call in a decoded JSON-RPC message, if it is a plain `tools/call` of a declared
        tool: exactly the four JSON-RPC keys, an integer or string id, and params with `name`,
        `arguments` (an object, or absent) and `_meta` (an object, or absent), nothing else."""
        if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
            return None
        request_id = message["id"]
        params = message["params"]
        if (
            message["jsonrpc"] != "2.0"
            or message["method"] != "tools/call"
            or type(request_id) not in (int, str)  # never a bool, which JSON-RPC ids are not
            or not isinstance(params, dict)
            or not params.keys() <= {"name", "arguments", "_meta"}
        ):
            return None
        name = params.get("name")
        args = params.get("arguments")
        if not isinstance(name, str) or name not in self._tools:
            return None
        if args is None:
            args = {}
        if not isinstance(args, dict) or not isinstance(params.get("_meta", {}), dict):
            return None
        return PlainCall(request_id, name, args, params)

    def accepted(self, call: PlainCall, version: str) -> bool:
        """Whether the SDK's request validation at `version` lets `call` reach the handler."""
        key = (version, msgspec.json.encode(call.params.get("_meta")))
        verdict = self._accepted.get(key)
        if verdict is None:
            try:
                sdk_methods.validate_client_request("tools/call", version, call.params)
                types.CallToolRequestParams.model_validate(call.params, by_name=False)
            except Exception:  # a ValidationError, or an unknown version: the SDK's to answer
                verdict = False
            else:
                verdict = True
            _remember(self._accepted, key, verdict)
        return verdict

    async def reply(self, call: PlainCall, version: str) -> bytes:
        """Answer `call` at `version`: the JSON-RPC response the SDK would write for it."""
        message: types.JSONRPCResponse | types.JSONRPCError
        try:
            answered = await answer_call(self._answer, call.name, call.args)
            wire = self._wire_result(answered, version)
            message = types.JSONRPCResponse(jsonrpc="2.0", id=call.id, result=wire)
        except Exception as exc:
            message = types.JSONRPCError(jsonrpc="2.0", id=call.id, error=_error(exc, version))
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()

    def _wire_result(self, call: MCPCall, version: str) -> dict[str, Any]:
        key = _json_key(call.result)
        if key is None:
            return self._serialize(call, version)
        memo_key = (version, call.is_error, key)
        wire = self._wire.get(memo_key)
        if wire is None:
            wire = self._serialize(call, version)
            _remember(self._wire, memo_key, wire)
        return wire

    def _serialize(self, call: MCPCall, version: str) -> dict[str, Any]:
        """`ServerRunner._serialize` for our handler's result: the version's sieve, then, from
        2026-07-28 on, `resultType` and the `serverInfo` stamp. Our results never carry a claimed
        (extension) `resultType` and our server sets no cache hints: those branches do not apply."""
        dumped = to_call_tool_result(call).model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            dumped = sdk_methods.serialize_server_result("tools/call", version, dumped)
        except pydantic.ValidationError:  # e.g. a non-object `structuredContent` for 2025
            logging.getLogger("windtunnel").exception("tool call result invalid at %s", version)
            raise MCPError(code=INTERNAL_ERROR, message=_INVALID_RESULT) from None
        if version in MODERN_PROTOCOL_VERSIONS:
            if dumped.get("resultType") is None:
                dumped["resultType"] = "complete"
            meta = dumped.get("_meta")
            if meta is None:
                dumped["_meta"] = {SERVER_INFO_META_KEY: self._server.server_info_stamp}
            elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
                dumped["_meta"] = {**meta, SERVER_INFO_META_KEY: self._server.server_info_stamp}
        return dumped


def _json_key(value: Any) -> bytes | None:
    """`value`'s JSON encoding when it is plain JSON data that encoding identifies exactly."""
    try:
        key = msgspec.json.encode(value)
    except (TypeError, UnicodeEncodeError, OverflowError):
        return None
    if len(key) > _MEMO_MAX_RESULT or msgspec.json.decode(key) != value:
        return None
    return key


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_ENTRIES:
        memo.clear()  # a bound, not a cache policy: the hot entries come straight back
    memo[key] = value


def _error(exc: Exception, version: str) -> types.ErrorData:
    """The error the SDK's dispatcher writes when the handler raised `exc`."""
    error = handler_exception_to_error_data(exc)  # MCPError and pydantic's ValidationError
    if error is not None:
        return error
    if version in MODERN_PROTOCOL_VERSIONS:
        return modern_error_data(exc)  # logs, and keeps the exception's text off the wire
    # The handshake era's dispatcher answers anything else with code 0 and the exception's text.
    logging.getLogger("windtunnel").exception("tool call failed")
    return types.ErrorData(code=0, message=str(exc))
