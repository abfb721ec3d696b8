"""The HTTP connection a request came on, as an injected fault (`_faulted`) needs it: closed
mid-answer (`drop`), or watched until the client goes (`timeout`).

The worker (`_http_worker`) sets `CONNECTION` for each connection it holds; the requests it
answers inherit it (a context variable). Where none is set (a request answered in an HTTP
session's own task, or over stdio), a fault has no connection to act on. Nothing here loads the
SDK: the worker imports it for every server, faults or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import socket
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import trio

__all__ = ["CONNECTION", "PEER_CHECK_S", "ConnectionControl", "SocketConnection"]


PEER_CHECK_S = 0.5
"""How often a call that is never answered looks whether its client has gone."""


class ConnectionControl(Protocol):
    """The connection a request came on, as an injected fault needs it."""

    def drop(self) -> None:
        """Close the connection now, mid-answer."""

    async def wait_closed(self) -> None:
        """Return once the client's side of the connection is gone."""


CONNECTION: contextvars.ContextVar[ConnectionControl | None] = contextvars.ContextVar(
    "windtunnel_connection", default=None
)


class SocketConnection:
    """`ConnectionControl` for one HTTP connection of the worker (`_http_worker`)."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        import trio  # here: a plain stdio session loads no Trio (`_faulted` imports this)

        self._socket = sock
        self._closed = trio.Event()

    def drop(self) -> None:
        # Both directions at once: the client reads the end of the stream with no answer,
        # and our reader sees it too, which ends the connection as a client's close would.
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)

    def closed(self) -> None:
        """Called by the worker once it reads nothing more from the connection."""
        self._closed.set()

    async def wait_closed(self) -> None:
        # The worker's reader says so when it is reading; a plain call is answered from inside
        # that reader (`_fast_path_h11`), so the socket is also looked at now and then.
        import trio

        while not self._peer_gone():
            with trio.move_on_after(PEER_CHECK_S):
                await self._closed.wait()
                return

    def _peer_gone(self) -> bool:
        """Whether the client closed its end (EOF or reset), without taking any byte it sent."""
        if self._closed.is_set():
            return True
        fd = self._socket.fileno()
        if fd == -1:
            return True
        try:
            with socket.socket(fileno=os.dup(fd)) as peek:
                return peek.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False  # open, nothing sent
        except OSError:
            return True
