"""Everything Wind Tunnel takes from the MCP SDK beyond its public API, in one place.

Why: the fast path answers a plain `tools/call` with the exact bytes the SDK would send, so it
follows the SDK's own rules with the SDK's own helpers: how a 2026-07-28 request is classified
(`classify_inbound_request`), how a handler's exception becomes a JSON-RPC error
(`handler_exception_to_error_data`, `modern_error_data`) and, over Streamable HTTP in the
2026-07-28 era, an HTTP status (`ERROR_CODE_HTTP_STATUS`), which protocol versions are modern. The
stdio transport stands in for the SDK's and hands it `SessionMessage`s. A handler keeps what
belongs to an MCP session in the SDK's per-connection state (`session_state`), which its
low-level request context does not expose. These are importable but
not documented as stable, so they are imported here and nowhere else.

Checked against mcp 2.1.1 to 2.3.0, the range pyproject.toml allows; CI runs tests/mcp on both ends
(`.venv` has the newest, `.venvs/sdk-lowest` 2.1.1: tests/mcp/test_sdk_range.py). Differences
inside the range are bridged here (`SERVER_TAKES_SCHEMA_LOOKUP`). To widen the range: run
tests/mcp under the new version, then update pyproject.toml, the requirements of
`.venvs/sdk-lowest` and the versions here.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.runner import modern_error_data
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = [
    "ERROR_CODE_HTTP_STATUS",
    "MODERN_PROTOCOL_VERSIONS",
    "SERVER_TAKES_SCHEMA_LOOKUP",
    "InboundModernRoute",
    "SessionMessage",
    "classify_inbound_request",
    "handler_exception_to_error_data",
    "modern_error_data",
    "session_state",
]

SERVER_TAKES_SCHEMA_LOOKUP = (
    "get_tool_input_schema" in inspect.signature(Server.__init__).parameters
)
"""`Server(get_tool_input_schema=...)` exists from mcp 2.3: without it the 2026-07-28 path runs
`tools/list` again on every call to check its headers (slower, the same answers)."""


def session_state(ctx: ServerRequestContext[Any]) -> dict[str, Any] | None:
    """The state of the Streamable HTTP session `ctx`'s request belongs to (the SDK's
    `Connection.state`, which lives and ends with the session); None where there is no session:
    stateless HTTP (a connection per request), 2026-07-28, stdio.

    `ServerRequestContext` carries the session (`ServerSession`), whose connection is private
    (`_connection`, in 2.1.1 to 2.3.0); the public `Context.connection` is not what low-level
    handlers get."""
    connection = getattr(ctx.session, "_connection", None)
    if connection is None or getattr(connection, "session_id", None) is None:
        return None
    state: dict[str, Any] = connection.state
    return state
