"""A recording's server messages exchanged again with the live client (issue 25).

What the recorded server sent while answering a call (`Recording.server_messages`) is sent again,
in order, before the answer, through the SDK session of the live request:

- notifications as recorded (log messages through the SDK's log gate: from 2026-07-28 only to a
  request that opted in), progress notifications with the live request's `progressToken` (none
  is sent when the live request asked for no progress); a notification the SDK's models do not
  accept is not sent (and logged);
- requests to the client (`sampling/createMessage`, `elicitation/create`, `roots/list`, `ping`)
  are issued to the live client, and its answer is compared with the recorded one (both read
  through the SDK's model of that result; errors compare by code). The first that differs ends
  the exchange: the replay engine answers the call as a divergence (`client_answer_differs`,
  with what was asked and both answers) by the tool's miss policy.

A 2026-07-28 client is asked in `input_required` rounds instead (`_input_rounds`): the call is
answered `input_required` until the client has retried it with an answer to every round, then
answered as above; an answer that differs from the recorded one ends the exchange the same way.
Where the connection can carry no request at all (a handshake-era request outside a session),
the requests are not sent and are counted unsent.

Only a transport that can carry messages during a request does this: stdio, and Streamable HTTP
with sessions (`_http.serve_http(sessions=True)`: each call is answered on its own SSE stream,
which carries these messages related to its request id, and the client's answers come back
through the session). A stateless HTTP server answers in JSON, with no stream for them: a server
with such recordings is always served with sessions (`MCPServer.needs_sessions`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import mcp_types as types
import pydantic
import structlog
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import is_version_at_least

from ..canonical import canonical_key
from ..replay import ClientExchange, InputRequired
from ._input_rounds import Round, StateError, open_state, plan, seal_state

__all__ = ["exchange_messages"]

logger = structlog.get_logger("windtunnel.mcp")

_RESULTS: dict[str, type[pydantic.BaseModel]] = {
    "sampling/createMessage": types.CreateMessageResult,
    "elicitation/create": types.ElicitResult,
    "roots/list": types.ListRootsResult,
    "ping": types.EmptyResult,
}
_INPUT_REQUIRED_SINCE = "2026-07-28"


async def exchange_messages(
    ctx: ServerRequestContext[Any], messages: Sequence[dict[str, Any]]
) -> ClientExchange:
    """Send `messages` on the request `ctx` answers, in order; say what went unsent and where
    the live client answered otherwise than the recorded one."""
    if not ctx.session.can_send_request and _asks_in_rounds(ctx):
        return await _exchange_in_rounds(ctx, messages)
    unsent = 0
    for message in messages:
        if "response" not in message:
            await _notify(ctx, message)
            continue
        if not ctx.session.can_send_request or message["method"] not in _RESULTS:
            unsent += 1
            continue
        differs = await _ask(ctx, message)
        if differs is not None:
            return ClientExchange(unsent=unsent, differs=differs)
    return ClientExchange(unsent=unsent)


def _asks_in_rounds(ctx: ServerRequestContext[Any]) -> bool:
    version = ctx.session.protocol_version
    return bool(version) and is_version_at_least(version, _INPUT_REQUIRED_SINCE)


async def _exchange_in_rounds(
    ctx: ServerRequestContext[Any], messages: Sequence[dict[str, Any]]
) -> ClientExchange:
    """One request of a 2026-07-28 exchange: check the client's answers to the round its state
    says it answered, then send the notifications up to the next round and ask it (raising
    `InputRequired`), or, after the last round, those left, for the call to be answered."""
    rounds = plan(messages)
    params = ctx.params or {}
    tool, arguments = params.get("name"), params.get("arguments")
    done = 0
    if params.get("requestState") is not None:
        try:
            done = open_state(params["requestState"], tool, arguments, messages)
        except StateError as exc:
            logger.warning("request_state_refused", reason=str(exc))
            done = len(rounds.rounds) + 1
        if done > len(rounds.rounds):
            raise MCPError(code=types.INVALID_PARAMS, message="invalid requestState")
        differs = _answered(rounds.rounds[done - 1], params.get("inputResponses"))
        if differs is not None:
            return ClientExchange(unsent=rounds.unsendable, differs=differs)
    if done < len(rounds.rounds):
        asking = rounds.rounds[done]
        for note in asking.before:
            await _notify(ctx, note)
        raise InputRequired(
            {
                "resultType": "input_required",
                "inputRequests": {
                    key: {"method": message["method"], "params": message.get("params") or {}}
                    for key, message in asking.requests
                },
                "requestState": seal_state(tool, arguments, messages, done + 1),
            }
        )
    for note in rounds.after:
        await _notify(ctx, note)
    return ClientExchange(unsent=rounds.unsendable)


def _answered(asked: Round, responses: Any) -> dict[str, Any] | None:
    """The evidence for the first request of `asked` the client answered otherwise than when
    recorded (an answer left out included), or None."""
    responses = responses if isinstance(responses, dict) else {}
    for key, message in asked.requests:
        question = {"method": message["method"], "params": message.get("params") or {}}
        if key not in responses:
            return {"asked": question, "answered_then": message["response"], "answered_now": None}
        now = {"result": responses[key]}
        if not _same(message["response"], now, _RESULTS[message["method"]]):
            return {"asked": question, "answered_then": message["response"], "answered_now": now}
    return None


async def _notify(ctx: ServerRequestContext[Any], message: dict[str, Any]) -> None:
    params = dict(message.get("params") or {})
    if message["method"] == "notifications/progress":
        meta = (ctx.params or {}).get("_meta")  # as sent: `progressToken`
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not isinstance(token, str | int) or isinstance(token, bool):
            return
        params["progressToken"] = token
    try:
        notification = types.server_notification_adapter.validate_python(
            {"method": message["method"], "params": params}, by_name=False
        )
    except pydantic.ValidationError:
        logger.warning("server_message_not_sent", method=message["method"])
        return
    if isinstance(notification, types.LoggingMessageNotification):
        # Through the SDK's log gate: from 2026-07-28 a log message is sent only to a request
        # that opted in, at or above its level (the handshake era sends it).
        logged = notification.params
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await ctx.session.send_log_message(
                logged.level, logged.data, logged.logger, related_request_id=ctx.request_id
            )
        return
    await ctx.session.send_notification(notification, related_request_id=ctx.request_id)


async def _ask(ctx: ServerRequestContext[Any], message: dict[str, Any]) -> dict[str, Any] | None:
    """Issue a recorded request to the live client; the evidence when its answer differs."""
    result_type = _RESULTS[message["method"]]
    asked = {"method": message["method"], "params": message.get("params") or {}}
    then = message["response"]
    try:
        request = types.server_request_adapter.validate_python(asked, by_name=False)
    except pydantic.ValidationError:
        logger.warning("server_message_not_sent", method=message["method"])
        return None
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    now: dict[str, Any]
    try:
        answer = await ctx.session.send_request(request, result_type, metadata=metadata)
    except MCPError as exc:
        now = {"error": {"code": exc.code, "message": exc.message}}
    except pydantic.ValidationError as exc:
        now = {"error": {"code": types.INVALID_PARAMS, "message": str(exc)}}
    else:
        now = {"result": _wire(answer)}
    if _same(then, now, result_type):
        return None
    return {"asked": asked, "answered_then": then, "answered_now": now}


def _wire(model: pydantic.BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _same(then: dict[str, Any], now: dict[str, Any], result_type: type[pydantic.BaseModel]) -> bool:
    if "error" in then or "error" in now:
        then_error, now_error = then.get("error"), now.get("error")
        return (
            isinstance(then_error, dict)
            and isinstance(now_error, dict)
            and then_error.get("code") == now_error.get("code")
        )
    try:
        recorded = _wire(result_type.model_validate(then["result"], by_name=False))
    except pydantic.ValidationError:
        return False
    return bool(canonical_key(recorded) == canonical_key(now["result"]))
