"""A recording's server messages sent again while its call is answered (issue 25).

What the recorded server sent while answering a call (`Recording.server_messages`) is sent again,
in order, before the answer, through the SDK session of the live request: notifications such as
log messages (through the SDK's log gate: from 2026-07-28 only to a request that opted in), list
changes and resource updates as recorded, and progress notifications with the
live request's `progressToken` (none is sent when the live request asked for no progress). A
notification the SDK's models do not accept is not sent (and logged). Requests to the client
(`sampling/createMessage`, `elicitation/create`, `roots/list`: messages with a `response`) are not
re-issued: the replay engine reports them as `server_messages_not_replayed`.

Only a transport that can deliver a notification during a request does this: stdio. Over HTTP the
server answers in stateless JSON mode, with no stream to carry them (the engine reports them).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import mcp_types as types
import pydantic
import structlog
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

__all__ = ["send_recorded_notifications"]

logger = structlog.get_logger("windtunnel.mcp")


async def send_recorded_notifications(
    ctx: ServerRequestContext[Any], messages: Sequence[dict[str, Any]]
) -> None:
    """Send the notifications among `messages` on the request `ctx` answers, in order."""
    for message in messages:
        if "response" in message:
            continue  # a request to the client: not re-issued (reported by the engine)
        params = dict(message.get("params") or {})
        if message["method"] == "notifications/progress":
            meta = (ctx.params or {}).get("_meta")  # as sent: `progressToken`
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            if not isinstance(token, str | int) or isinstance(token, bool):
                continue
            params["progressToken"] = token
        try:
            notification = types.server_notification_adapter.validate_python(
                {"method": message["method"], "params": params}, by_name=False
            )
        except pydantic.ValidationError:
            logger.warning("server_message_not_sent", method=message["method"])
            continue
        if isinstance(notification, types.LoggingMessageNotification):
            # Through the SDK's log gate: from 2026-07-28 a log message is sent only to a
            # request that opted in, at or above its level (the handshake era sends it).
            logged = notification.params
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await ctx.session.send_log_message(
                    logged.level, logged.data, logged.logger, related_request_id=ctx.request_id
                )
            continue
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)
