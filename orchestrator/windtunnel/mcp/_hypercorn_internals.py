"""Everything Wind Tunnel takes from hypercorn's and h11's internals, in one place.

Why: `wt serve` runs hypercorn's HTTP protocol code under a leaner Trio worker of our own
(`_http_worker`: a `TCPServer` subclass with its own read loop, timers and writes), and answers a
plain `tools/call` inside hypercorn's HTTP/1.1 protocol before h11 and ASGI see it
(`_fast_path_h11`: an `H11Protocol` subclass that reads h11's connection states and writes the bytes
h11 would). None of that is hypercorn's public API, so every name it needs is imported here and
nowhere else: an upgrade shows up as one module to re-check.

Checked against hypercorn 0.18.0 and h11 0.16.0, the versions pyproject.toml pins
(`hypercorn>=0.18,<0.19`, `h11>=0.16,<0.17`). To upgrade: widen the pin, run tests/mcp (the worker
parity tests in `test_http_worker.py` run every behaviour against hypercorn's own worker, and
`test_fast_path.py` compares the in-protocol bytes with the SDK path's), then update the versions
here.

Worked around in hypercorn 0.18.0 (re-check on upgrade): `TCPServer.protocol_send` closes the
connection on `Closed` in the sending task, unshielded, and the protocol sends it from the app's
task at the keep-alive limit; an app that cancels that task (sse-starlette's SSE responses do)
left the socket open. `_http_worker._Connection.protocol_send` shields the close
(`test_fast_path_sessions.py::test_the_last_answer_a_connection_carries_closes_it_as_the_sdk_does`).
"""

from __future__ import annotations

import h11
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Config as HypercornConfig
from hypercorn.config import Sockets
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol import ProtocolWrapper
from hypercorn.protocol.events import Body, Data, EndBody
from hypercorn.protocol.h11 import STREAM_ID, H11Protocol
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import (
    AppWrapper,
    ASGIReceiveEvent,
    ASGISendEvent,
    ConnectionState,
    LifespanState,
    Scope,
    TaskGroup,
)
from hypercorn.typing import WorkerContext as WorkerContextType
from hypercorn.utils import parse_socket_addr, repr_socket_addr

__all__ = [
    "MAX_RECV",
    "STREAM_ID",
    "ASGIReceiveEvent",
    "ASGISendEvent",
    "ASGIWrapper",
    "AppWrapper",
    "Body",
    "Closed",
    "ConnectionState",
    "Data",
    "EndBody",
    "Event",
    "H11Protocol",
    "HypercornConfig",
    "Lifespan",
    "LifespanState",
    "ProtocolWrapper",
    "RawData",
    "Scope",
    "Sockets",
    "TCPServer",
    "TaskGroup",
    "Updated",
    "WorkerContext",
    "WorkerContextType",
    "h11",
    "parse_socket_addr",
    "repr_socket_addr",
]
