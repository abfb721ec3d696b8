"""`wt serve --stdio` answering a plain session before the MCP SDK is loaded (issue 31).

Importing the SDK (`mcp`, `mcp_types`, pydantic) costs about 0.7 s of CPU, paid by every
spawned server before its first answer, and clients spawn many (a session per tool call in
langchain-mcp-adapters' default tools, a server per test). A plain session needs none of it:
this module reads stdin and answers, byte for byte as the SDK would (`_lite_answers`), the
`initialize` handshake (and `notifications/initialized`), `ping`, `tools/list`, and in the
2026-07-28 era (`_meta` envelopes) `server/discover` and `tools/list`, and plain `tools/call`s
through the server's own answers (`SyncAnswer`), as the stdio fast path does.

The first line it cannot answer with certainty (any other method or notification, a `_meta` or
capability outside the plain shapes, a line that is not JSON) hands the session to the SDK: the
SDK is imported, the usual stdio loop (`_stdio.serve_fds`) starts on the same fds with what was
read but not answered (`pending`), and first sees the lines that made the session's state
(`prelude`), whose answers are already written and so dropped:

- handshake era: each `initialize` answered here (under an id of its own, so its answer is
  recognised) and each `notifications/initialized`, in order: the SDK's connection negotiates
  the same version and holds the same client parameters;
- 2026-07-28: one `server/discover` with the envelope of the first request answered here,
  which opens the connection in that era (every later request carries its own envelope).

From then on every answer is the SDK's or its fast path's, as if it had served from the start.
A tool call answered here whose result is not one of the shapes `_lite_answers` writes (a
float, a resource block, a result the era's surface refuses) is written by the SDK's fast-path
code (`FastPath.reply_answered`), imported then: the call is answered once, never twice.

Only a server for which a plain session needs nothing else starts this way (`lite_session`):
no recorded identity or surface (resources, prompts, completions), no recorded handshake-era
protocol version (`_protocol_era`), no server messages, answers
without Trio (no faults, no router), no OpenTelemetry export, and an installed SDK whose
answers `_lite_answers` was checked against. Any other starts with the SDK.

When is the SDK imported for a hand-over? On the line that needs it: that line waits for the
import (about half a second of wall time here). Importing it up front in a background thread
would spend the 0.7 s of CPU on every spawn, competing for the GIL with the very answers this
module exists to speed up, for sessions that mostly never need it. Instead the SDK is imported
in a background thread once the client has been idle for `WARM_AFTER_IDLE_S` after an answer:
a session that lives on (an agent between turns) has it loaded before it could be needed, and
the spawn-per-call pattern, which closes stdin right after its answer, never pays for it.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from .. import __version__, trace_context
from ._lite_answers import (
    CHECKED_SDKS,
    HANDSHAKE_VERSIONS,
    MODERN_VERSION,
    PROTOCOL_VERSION_KEY,
    LiteAnswers,
    client_capabilities_ok,
    envelope_ok,
    implementation_ok,
    installed_sdk,
    negotiated,
)
from ._plain_call import PlainCall, decode_message, plain_call
from ._shapes import SyncAnswer
from ._stdio_fds import Stdout, claimed_stdio, client_gone_ends_serving, read_some

if TYPE_CHECKING:
    from mcp.server import Server

    from ._fast_path import FastPath
    from ._stdio import Resume
    from .spi import MCPServer

__all__ = [
    "WARM_AFTER_IDLE_S",
    "Interruptible",
    "LiteSession",
    "NeedsSDK",
    "lite_session",
    "run_lite",
    "serve_fds_lazily",
    "serve_handed_over",
    "serve_here",
    "serve_lazily",
]

WARM_AFTER_IDLE_S = 0.5
"""How long the client may be silent after an answer before the SDK is imported in the
background (see the module docstring)."""

_INITIALIZE_KEYS = {"protocolVersion", "capabilities", "clientInfo"}


class NeedsSDK(Exception):
    """The line in hand is the SDK's to answer: the session is handed over."""


def lite_session(server: MCPServer) -> LiteSession | None:
    """A session answered without the SDK until it needs it, when `server` allows one (see the
    module docstring); None: serve with the SDK from the start."""
    if sys.platform == "win32" or not server.fast_path or trace_context.capturing:
        return None
    now = server.sync_answer()
    surface = server.surface()
    plain_surface = not (
        surface.server is not None
        or surface.resources
        or surface.resource_templates
        or surface.prompts
        or surface.requests
        # A replay of a handshake-era server (`_protocol_era`; also under `--own-identity`):
        # its `server/discover` and `initialize` are not answered as here.
        or surface.protocol_version in HANDSHAKE_VERSIONS
    )
    if now is None or not plain_surface or server.messaging_tools():
        return None
    sdk = installed_sdk()
    if sdk not in CHECKED_SDKS:
        return None
    listed = [t.listed() for t in server.tool_specs()]
    answers = LiteAnswers(server.name, __version__, listed, sdk)
    if not answers.ok:
        return None
    return LiteSession(
        answers, server.fast_path_tools(), now, partial(server.sdk_server, notify=True)
    )


class LiteSession:
    """One stdio session's answers and state until the hand-over (see the module docstring).
    `step` takes one line and returns what to write (None: nothing), or raises `NeedsSDK`."""

    def __init__(
        self,
        answers: LiteAnswers,
        tools: frozenset[str],
        now: SyncAnswer,
        build_sdk_server: Callable[[], Server[Any]],
    ) -> None:
        self._answers = answers
        self._tools = tools
        self._now = now
        self._build_sdk_server = build_sdk_server
        self._sdk_server: Server[Any] | None = None
        self._sdk_replies: FastPath | None = None
        self.era: str | None = None
        self._version: str | None = None
        """Handshake era: the version the last `initialize` negotiated."""
        self._prelude: list[bytes] = []
        self._silenced: list[str] = []
        self._tag = os.urandom(6).hex()
        self._id = b"null"
        """The JSON of the id of the request in hand."""
        self.called = False
        """The last line answered was a tool call: its listeners are due once it is written."""

    def sdk_server(self) -> Server[Any]:
        """The SDK server this session hands over to (built once, on first need)."""
        if self._sdk_server is None:
            self._sdk_server = self._build_sdk_server()
        return self._sdk_server

    def resume(self, pending: bytes) -> Resume:
        from ._stdio import Resume

        return Resume(tuple(self._prelude), frozenset(self._silenced), pending)

    def written(self) -> None:
        """The last answer is on the wire: a tool call's listeners hear of it now."""
        if self.called:
            self.called = False
            self._now.written()

    def step(self, line: bytes) -> bytes | None:
        message = decode_message(line)
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            raise NeedsSDK
        method = message.get("method")
        if "id" not in message:
            initialized = message.keys() == {"jsonrpc", "method"} and (
                method == "notifications/initialized"
            )
            if initialized and self.era == "legacy" and self._version is not None:
                self._prelude.append(line)  # the SDK's connection must hear of it too
                return None
            raise NeedsSDK
        request_id = message["id"]
        if type(request_id) not in (int, str) or not message.keys() <= {
            "jsonrpc",
            "id",
            "method",
            "params",
        }:
            raise NeedsSDK
        params = message.get("params", {})
        if type(params) is not dict:
            raise NeedsSDK
        try:
            self._id = msgspec.json.encode(request_id)
        except UnicodeEncodeError:  # a lone surrogate: the SDK's to refuse
            raise NeedsSDK from None
        era = self.era
        if era is None:
            if method == "initialize":
                era = "legacy"
            elif isinstance(params.get("_meta"), dict) and PROTOCOL_VERSION_KEY in params["_meta"]:
                era = "modern"
            else:
                raise NeedsSDK  # what comes before the handshake: the SDK's
        if era == "legacy":
            result = self._legacy(message, method, params)
        else:
            result = self._modern(message, method, params)
        if self.era is None:
            self.era = era
            if era == "modern":  # what opens the SDK's connection in this era
                self._opening(params["_meta"])
        return result

    def _legacy(self, message: dict[str, Any], method: Any, params: dict[str, Any]) -> bytes:
        if method == "initialize":
            if (
                params.keys() != _INITIALIZE_KEYS
                or type(params["protocolVersion"]) is not str
                or not client_capabilities_ok(params["capabilities"])
                or not implementation_ok(params["clientInfo"])
            ):
                raise NeedsSDK
            version = negotiated(params["protocolVersion"])
            result = self._answers.initialize(version)
            if result is None:
                raise NeedsSDK
            self._version = version
            self._silence({**message})
            return self._response(result)
        if self._version is None:
            raise NeedsSDK  # before a handshake: the SDK's refusals
        if method == "ping" and "params" not in message:
            return self._response(b"{}")
        if method == "tools/list" and not params:
            return self._response(self._listing("legacy"))
        if method == "tools/call" and "_meta" not in params:
            return self._call(message, "legacy", self._version)
        raise NeedsSDK

    def _modern(self, message: dict[str, Any], method: Any, params: dict[str, Any]) -> bytes:
        if not envelope_ok(params.get("_meta")):
            raise NeedsSDK
        if method == "tools/call":
            return self._call(message, "modern", MODERN_VERSION)
        if params.keys() != {"_meta"}:
            raise NeedsSDK
        if method == "tools/list":
            return self._response(self._listing("modern"))
        if method == "server/discover":
            discovered = self._answers.discover()
            if discovered is None:
                raise NeedsSDK
            return self._response(discovered)
        if method == "ping":  # not a method of the 2026-07-28 protocol
            error = b'{"code":-32601,"message":"Method not found","data":"ping"}'
            return b'{"jsonrpc":"2.0","id":' + self._id + b',"error":' + error + b"}"
        raise NeedsSDK

    def _listing(self, era: str) -> bytes:
        listing = self._answers.listing(era)
        if listing is None:
            raise NeedsSDK
        return listing

    def _call(self, message: dict[str, Any], era: str, version: str) -> bytes:
        call = plain_call(message, self._tools)
        if call is None:
            raise NeedsSDK
        try:
            answered = self._now.answer(call.name, call.args)
        except Exception as exc:
            from ._sdk_server import call_failed

            self.called = True
            return self._replies().reply_failed(call, call_failed(call.name, exc), version).body
        self.called = True
        divergence = answered.divergence
        if divergence is not None and divergence.get("reason") == "unknown_tool":
            return self._sdk_reply(call, answered, version)
        try:
            result = self._answers.call_result(answered, era)
        except Exception:  # the call is consumed: whatever its result, the SDK writes it
            logging.getLogger("windtunnel").debug("result left to the SDK", exc_info=True)
            result = None
        if result is None:
            return self._sdk_reply(call, answered, version)
        return self._response(result)

    def _sdk_reply(self, call: PlainCall, answered: Any, version: str) -> bytes:
        """The reply the SDK's fast-path code writes for an answered call (see the module
        docstring); an unknown tool's error too."""
        from ._sdk_server import checked_call

        replies = self._replies()
        try:
            checked_call(answered, call.name)
        except Exception as exc:
            return replies.reply_failed(call, exc, version).body
        return replies.reply_answered(call, answered, version).body

    def _replies(self) -> FastPath:
        if self._sdk_replies is None:
            from ._fast_path import FastPath

            self._sdk_replies = FastPath(self.sdk_server(), self._tools, _never)
        return self._sdk_replies

    def _response(self, result: bytes) -> bytes:
        return b'{"jsonrpc":"2.0","id":' + self._id + b',"result":' + result + b"}"

    def _silence(self, message: dict[str, Any]) -> None:
        """Keep `message` (a request answered here) for the prelude, under an id of its own."""
        silenced = f"windtunnel-handover-{self._tag}-{len(self._silenced)}"
        self._silenced.append(silenced)
        self._prelude.append(msgspec.json.encode({**message, "id": silenced}))

    def _opening(self, meta: dict[str, Any]) -> None:
        self._silence(
            {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}
        )


async def _never(name: str, args: dict[str, Any]) -> Any:
    raise AssertionError("the SDK's replies here are for calls already answered")


class Interruptible(Protocol):
    """How a caller without Trio stops `run_lite` on a signal: `waiting` is True while it waits
    for input, when the signal's handler may raise to interrupt the wait; `received` set
    (a signal number) stops it before its next wait."""

    received: int | None
    waiting: bool


def run_lite(
    session: LiteSession, read_fd: int, stdout: Stdout, stop: Interruptible | None = None
) -> bytes | None:
    """Answer lines from `read_fd` until it ends or a stop (None), or one needs the SDK: then
    what was read and not answered, from that line on."""
    buffer = bytearray()
    warmed = False
    while stop is None or stop.received is None:
        if stop is not None:
            stop.waiting = True
        try:
            if not warmed and session.era is not None and not buffer:
                warmed = _warm_when_idle(read_fd)
            chunk = read_some(read_fd)
        finally:
            if stop is not None:
                stop.waiting = False
        if not chunk:
            break
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            if not _answer(session, bytes(buffer[: end + 1]), stdout):
                return bytes(buffer)
            del buffer[: end + 1]
    else:
        return None  # stopped
    if buffer and not _answer(session, bytes(buffer), stdout):  # a last line without newline
        return bytes(buffer)
    return None


def _answer(session: LiteSession, line: bytes, stdout: Stdout) -> bool:
    if not line.strip():
        return True  # a blank line is no message: the SDK's transport skips it too
    try:
        reply = session.step(line)
    except NeedsSDK:
        return False
    except Exception:  # nothing was answered or consumed: the SDK answers it, as any other
        logging.getLogger("windtunnel").exception("stdio start-up could not read a line")
        return False
    if reply is not None:
        stdout.write_line(reply)
        session.written()
    return True


def _warm_when_idle(fd: int) -> bool:
    """Wait for input up to `WARM_AFTER_IDLE_S`; if none came, start importing the SDK in the
    background. True once started."""
    readable, _, _ = select.select([fd], [], [], WARM_AFTER_IDLE_S)
    if readable:
        return False
    threading.Thread(target=_import_sdk, name="windtunnel-sdk-warm", daemon=True).start()
    return True


def _import_sdk() -> None:
    try:
        from . import _fast_path_stdio, _sdk_server, _stdio  # noqa: F401
    except Exception:  # the hand-over imports them again and reports what fails
        logging.getLogger("windtunnel").debug("background SDK import failed", exc_info=True)


async def serve_lazily(server: MCPServer, session: LiteSession) -> None:
    """Serve `server` on stdin/stdout until stdin closes, starting with `session`."""
    with claimed_stdio() as (stdin_fd, stdout_fd), client_gone_ends_serving():
        await serve_fds_lazily(server, session, stdin_fd, stdout_fd)


async def serve_fds_lazily(
    server: MCPServer, session: LiteSession, read_fd: int, write_fd: int
) -> bool:
    """`serve_lazily` on lines read from `read_fd` and written to `write_fd` (the fds stay the
    caller's); True if the session was handed over to the SDK."""
    # Duplicates of our own, as in `_stdio.serve_fds`: a read still blocked when a signal
    # abandons the thread keeps its fd, whose number is then never reused under it.
    import trio

    reader_fd, writer_fd = os.dup(read_fd), os.dup(write_fd)
    stdout = Stdout(writer_fd)
    finished = False
    try:
        pending = await trio.to_thread.run_sync(
            run_lite, session, reader_fd, stdout, abandon_on_cancel=True
        )
        finished = True
    finally:
        if stdout.close():
            os.close(writer_fd)
        if finished:
            os.close(reader_fd)
    if pending is None:
        return False
    await serve_handed_over(server, session, read_fd, write_fd, pending)
    return True


def serve_here(
    session: LiteSession, read_fd: int, write_fd: int, stop: Interruptible
) -> bytes | None:
    """`run_lite` on this thread, without Trio, on the caller's fds (see `Interruptible`)."""
    return run_lite(session, read_fd, Stdout(write_fd), stop)


async def serve_handed_over(
    server: MCPServer, session: LiteSession, read_fd: int, write_fd: int, pending: bytes
) -> None:
    """The session `session` began, served on by the SDK (`_stdio.serve_fds`) from `pending`,
    what was read and not answered."""
    from ._fast_path_stdio import StdioFastPath
    from ._stdio import serve_fds

    sdk_server = session.sdk_server()
    fast_path = None
    if server.fast_path:
        fast_path = StdioFastPath(
            sdk_server, server.fast_path_tools(), server.handle_call, server.sync_answer()
        )
    resume = session.resume(pending)
    await serve_fds(sdk_server, read_fd, write_fd, fast_path, server.ordered_tools(), resume)
