"""What a transport does for an injected fault besides its answer (`faults.engine` rewrote that).

- `delay`: the answer after the fault's seconds, on Trio's clock (tests use autojump clocks);
- `error`: the JSON-RPC error, raised as the SDK's `MCPError` (both paths map it the same way);
- `timeout`: no answer until the client gives up: over HTTP until its connection closes, else
  until the SDK cancels the request (`notifications/cancelled`) or the server stops;
- `drop`: over HTTP, the connection is closed mid-call; over stdio, the server process goes
  away (`ProcessDropped` unwinds it, and `wt serve` exits with status 1).

The HTTP worker says which connection a request came on through `_connection.CONNECTION` (a
context variable its request tasks inherit). Inside a Streamable HTTP session the SDK answers a
request in the session's own task group, but it runs each handler in the context of the task
that delivered the request (`JSONRPCDispatcher._spawn`: `sender_ctx.run(...)`, in every SDK
version we support, 2.1.1 to 2.3.x): there too the connection is the one the call's `POST` came
on, so a `drop` ends that call's event stream only and a `timeout` ends when that client goes
(`tests/faults/test_sessions.py`). Where none is set (stdio; an ASGI server other than ours),
`drop` ends the request with no answer, like `timeout`.
"""

from __future__ import annotations

from typing import Any

from ..calls import MCPCall
from ..faults.spec import FAULT_EXTRA_KEY
from ._connection import CONNECTION

__all__ = ["ProcessDropped", "carry_out"]


class ProcessDropped(BaseException):
    """Raised through the SDK and Trio (a `BaseException`, so no handler turns it into an
    answer) to end a stdio server whose call drew a `drop` fault."""


async def carry_out(call: MCPCall, *, stdio: bool) -> None:
    """Do what the fault injected into `call` asks of the transport; return to send its answer."""
    evidence: dict[str, Any] | None = call.extra.get(FAULT_EXTRA_KEY)
    if evidence is None:
        return
    # The SDK loads only once a fault is carried out: a plain stdio replay starts without it.
    import trio  # like the SDK: `windtunnel.mcp` loads without Trio
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR

    kind = evidence["kind"]
    if kind == "delay":
        await trio.sleep(evidence["waited"])
    elif kind == "error":
        raise MCPError(code=evidence["code"], message=evidence["message"])
    elif kind == "timeout":
        await _until_client_gives_up()
    elif kind == "drop":
        if stdio:
            raise ProcessDropped(f"fault {evidence['id']!r}: the process goes away mid-call")
        connection = CONNECTION.get()
        if connection is None:
            await trio.sleep_forever()  # no connection of ours to drop: never answer
        connection.drop()
        # Closed: this error ends the request, and nothing can be written after it.
        raise MCPError(code=INTERNAL_ERROR, message="the connection was dropped")


async def _until_client_gives_up() -> None:
    import trio
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR

    connection = CONNECTION.get()
    if connection is None:
        await trio.sleep_forever()  # cancelled by the SDK (the client's cancel) or the server
    else:
        await connection.wait_closed()
        # The client is gone: this error ends the request, and no one reads it.
        raise MCPError(code=INTERNAL_ERROR, message="the client went away")
