"""A plain `tools/call` answered without the SDK's session: what both fast paths share.

The fast paths (`_fast_call` for Streamable HTTP, `_stdio_fast` for stdio) each decide which
protocol version a request is served at, the way the SDK's transport would. The rest is here and
is the same for both: recognise a plain `tools/call` of a declared tool in a decoded JSON-RPC
message, ask the SDK's own validators whether it would reach our handler, run that handler's body
(`resolve_call`), and build the reply the SDK would write, byte for byte: the same result sieve
and 2026-07-28 stamps as `mcp.server.runner.ServerRunner._serialize`, the same exception-to-error
mapping as its dispatchers, the same serializer as its transports.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic
from mcp.server import Server
from mcp.server.runner import modern_error_data
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import INTERNAL_ERROR, SERVER_INFO_META_KEY
from mcp_types import methods as sdk_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._bridge import Answer, resolve_call

__all__ = ["PlainCall", "plain_call", "reply"]


@dataclass(frozen=True, slots=True)
class PlainCall:
    """A `tools/call` request whose shape needs nothing from the SDK but its handler."""

    id: int | str
    name: str
    args: dict[str, Any]
    params: dict[str, Any]

    def accepted_at(self, version: str) -> bool:
        """Whether the SDK's request validation at `version` lets this call reach the handler."""
        try:
            sdk_methods.validate_client_request("tools/call", version, self.params)
            types.CallToolRequestParams.model_validate(self.params, by_name=False)
        except Exception:  # ValidationError, or an unknown version: the SDK's to answer
            return False
        return True


def plain_call(message: Any, tools: Collection[str]) -> PlainCall | None:
    """The call in a decoded JSON-RPC message, if it is a plain `tools/call` of one of `tools`.

    Plain: exactly the four JSON-RPC keys, an integer or string id, params with only `name`,
    `arguments` (an object or absent) and `_meta` (an object or absent). Anything else is None.
    """
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
    if not isinstance(name, str) or name not in tools:
        return None
    if args is None:
        args = {}
    if not isinstance(args, dict) or not isinstance(params.get("_meta", {}), dict):
        return None
    return PlainCall(request_id, name, args, params)


async def reply(call: PlainCall, version: str, server: Server[Any], answer: Answer) -> bytes:
    """Answer `call` at `version` and return the JSON-RPC response the SDK would write for it."""
    message: types.JSONRPCResponse | types.JSONRPCError
    try:
        result = await resolve_call(answer, call.name, call.args)
        wire = _serialize(result, version, server)
        message = types.JSONRPCResponse(jsonrpc="2.0", id=call.id, result=wire)
    except Exception as exc:
        message = types.JSONRPCError(jsonrpc="2.0", id=call.id, error=_error(exc, version))
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _serialize(result: types.CallToolResult, version: str, server: Server[Any]) -> dict[str, Any]:
    """`ServerRunner._serialize` for a `tools/call` result: the version's sieve, then, from
    2026-07-28 on, `resultType` and the `serverInfo` stamp. Our results never carry a claimed
    (extension) `resultType` and our server sets no cache hints, so those branches do not apply."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        dumped = sdk_methods.serialize_server_result("tools/call", version, dumped)
    except pydantic.ValidationError:
        # e.g. a recorded non-object `structuredContent` served to a pre-2026 client
        logging.getLogger("windtunnel").exception("tool call result invalid at %s", version)
        raise MCPError(code=INTERNAL_ERROR, message="Handler returned an invalid result") from None
    if version in MODERN_PROTOCOL_VERSIONS:
        if dumped.get("resultType") is None:
            dumped["resultType"] = "complete"
        meta = dumped.get("_meta")
        if meta is None:
            dumped["_meta"] = {SERVER_INFO_META_KEY: server.server_info_stamp}
        elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
            dumped["_meta"] = {**meta, SERVER_INFO_META_KEY: server.server_info_stamp}
    return dumped


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
