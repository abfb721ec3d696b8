"""A plain `tools/call` answered without the SDK's session: what both fast paths share.

The fast paths (`_fast_path_http` for Streamable HTTP, `_fast_path_stdio` for stdio) each decide
which protocol version a request is served at, the way the SDK's transport would. The rest is here
and the same for both: recognise a plain `tools/call` of a declared tool in a decoded JSON-RPC
message, ask the SDK's own validators whether it would reach our handler, run that handler's answer
(`answer_call`), and build the reply the SDK would write, byte for byte: the same result mapping and
sieve, the same 2026-07-28 stamps as `mcp.server.runner.ServerRunner._serialize`, the same
exception-to-error mapping as its dispatchers, the same serializer as its transports. That last
one depends on the transport: stdio, and Streamable HTTP in the handshake era, write pydantic's
JSON (`model_dump_json`, UTF-8); Streamable HTTP writes 2026-07-28 replies itself
(`mcp.server._streamable_http_modern._write`: `json.dumps`, non-ASCII escaped, and an HTTP
status for some error codes), so a `FastPath` is made for one transport (`http`).

Memos keep the SDK's pydantic work off the hot path without changing any answer; they hold
outcomes of pure functions:

- whether a call passes validation depends only on the version and its `_meta` (name and
  arguments are already known to be a string and an object, which every version accepts), keyed
  by the exact JSON of `_meta`;
- the JSON of a result's wire form depends only on the result, its error flag and the version,
  and the same recordings are served over and over. A recorded hit's result is the universe's own
  object, which nothing mutates: it is keyed by identity (the memo holds it, so the identity
  cannot be reused). Any other result is keyed by its JSON encoding when it is plain JSON data
  that the encoding identifies exactly; a mock's datetime or a NaN is mapped every time.

The response is that JSON with the request's id spliced in: the bytes the SDK writes for its
`JSONRPCResponse` (`tests/mcp/test_stdio_fast_path.py` and `tests/mcp/test_fast_path.py` compare
them), without building one per call.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from typing import Any, NamedTuple

import mcp_types as types
import msgspec
import pydantic
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, SERVER_INFO_META_KEY
from mcp_types import methods as sdk_methods
from pydantic_core import to_json

from .. import trace_context
from ..calls import MCPCall
from ._plain_call import SDK_MAX_DEPTH, PlainCall, decode_message, plain_call, remember
from ._sdk_internals import (
    MODERN_PROTOCOL_VERSIONS,
    handler_exception_to_error_data,
    modern_error_data,
)
from ._sdk_server import Answer, SyncAnswer, answer_call, answer_call_now, to_call_tool_result

__all__ = ["SDK_MAX_DEPTH", "FastPath", "PlainCall", "Reply", "decode_message", "remember"]

# Bounds on the memos: the largest result worth keying by its encoding.
_MEMO_MAX_RESULT = 64 * 1024
_INVALID_RESULT = "Handler returned an invalid result"  # the SDK's words


class Reply(NamedTuple):
    """A JSON-RPC response as the SDK writes it, and its error code if it is an error."""

    body: bytes
    error_code: int | None = None


class FastPath:
    """Recognises, validates and answers plain `tools/call`s for one SDK server, as its
    transport writes them (`http`: Streamable HTTP, else stdio)."""

    def __init__(
        self, server: Server[Any], tools: Collection[str], answer: Answer, *, http: bool = False
    ) -> None:
        self._server = server
        self._tools = frozenset(tools)
        self._answer = answer
        self._http = http
        self._accepted: dict[tuple[str, bytes], bool] = {}
        self._wire: dict[tuple[str, bool, bytes], bytes] = {}
        self._recorded: dict[tuple[str, bool, int], tuple[Any, bytes]] = {}

    def parse(self, message: Any) -> PlainCall | None:
        """The call in a decoded JSON-RPC message, if it is a plain `tools/call` of a declared
        tool (`plain_call`)."""
        return plain_call(message, self._tools)

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
            remember(self._accepted, key, verdict)
        return verdict

    async def reply(
        self,
        call: PlainCall,
        version: str,
        traceparent: str | None = None,
        *,
        answer: Answer | None = None,
    ) -> Reply:
        """Answer `call` at `version`: the JSON-RPC response the SDK would write for it
        (`traceparent`: the HTTP request's header, for an OpenTelemetry export; `answer`: how
        this call is answered, if not as every other: in an HTTP session, with its state)."""
        answering = self._answer if answer is None else answer
        try:
            if trace_context.capturing:
                with trace_context.carried_by(call.params.get("_meta"), traceparent):
                    answered = await answer_call(answering, call.name, call.args)
                    trace_context.note(answered)
            else:
                answered = await answer_call(answering, call.name, call.args)
        except Exception as exc:
            return self._error_reply(call, exc, version)
        return self._reply(call, answered, version)

    def reply_now(self, call: PlainCall, version: str, answer: SyncAnswer) -> Reply:
        """`reply` with a `SyncAnswer`, without Trio (from the stdio reader thread)."""
        try:
            if trace_context.capturing:
                with trace_context.carried_by(call.params.get("_meta")):
                    answered = answer_call_now(answer, call.name, call.args)
                    trace_context.note(answered)
            else:
                answered = answer_call_now(answer, call.name, call.args)
        except Exception as exc:
            return self._error_reply(call, exc, version)
        return self._reply(call, answered, version)

    def reply_answered(self, call: PlainCall, answered: MCPCall, version: str) -> Reply:
        """The reply to `call`, already answered (`answered`) elsewhere: the stdio start-up
        hands over a result its own encoder declines (`_stdio_lite`)."""
        return self._reply(call, answered, version)

    def reply_failed(self, call: PlainCall, exc: Exception, version: str) -> Reply:
        """The reply to `call` whose answer raised `exc` elsewhere (`_stdio_lite`)."""
        return self._error_reply(call, exc, version)

    def _writes_itself(self, version: str) -> bool:
        """Whether the SDK's transport writes replies at `version` itself (see the module
        docstring), not through pydantic's serializer."""
        return self._http and version in MODERN_PROTOCOL_VERSIONS

    def _reply(self, call: PlainCall, answered: MCPCall, version: str) -> Reply:
        try:
            result = self._result_json(answered, version)
        except Exception as exc:  # the result is invalid at `version` (see `_serialize`)
            return self._error_reply(call, exc, version)
        request_id = _dumps(call.id) if self._writes_itself(version) else to_json(call.id)
        return Reply(b'{"jsonrpc":"2.0","id":' + request_id + b',"result":' + result + b"}")

    def _error_reply(self, call: PlainCall, exc: Exception, version: str) -> Reply:
        error = _error(exc, version)
        message = types.JSONRPCError(jsonrpc="2.0", id=call.id, error=error)
        if self._writes_itself(version):
            body = _dumps(message.model_dump(mode="json", by_alias=True, exclude_none=True))
        else:
            body = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        return Reply(body, error.code)

    def _result_json(self, call: MCPCall, version: str) -> bytes:
        result = call.result
        if "match" in call.extra:  # a recorded hit: keyed by identity (see the module docstring)
            recorded_key = (version, call.is_error, id(result))
            held = self._recorded.get(recorded_key)
            if held is not None and held[0] is result:
                return held[1]
            encoded = self._result_json_by_content(call, version)
            remember(self._recorded, recorded_key, (result, encoded))
            return encoded
        return self._result_json_by_content(call, version)

    def _result_json_by_content(self, call: MCPCall, version: str) -> bytes:
        key = _json_key(call.result)
        if key is None:
            return self._encode_result(call, version)
        memo_key = (version, call.is_error, key)
        encoded = self._wire.get(memo_key)
        if encoded is None:
            encoded = self._encode_result(call, version)
            remember(self._wire, memo_key, encoded)
        return encoded

    def _encode_result(self, call: MCPCall, version: str) -> bytes:
        serialized = self._serialize(call, version)
        return _dumps(serialized) if self._writes_itself(version) else to_json(serialized)

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


def _dumps(value: Any) -> bytes:
    """JSON as the SDK's Streamable HTTP transport writes 2026-07-28 replies."""
    return json.dumps(value, separators=(",", ":")).encode()


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
