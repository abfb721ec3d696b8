"""`wt watch URL`: print a fleet's live event feed, one JSON object per line."""

from __future__ import annotations

import argparse
import json
import signal
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import trio
from trio_websocket import (
    ConnectionClosed,
    HandshakeError,
    WebSocketConnection,
    open_websocket_url,
    wrap_client_stream,
)

from .._groups import unwrap_single_error
from ..errors import ConfigError
from ..terminal_text import escape_terminal
from .commands import command_help

__all__ = ["register_watch"]


def register_watch(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("watch", help=command_help("watch"))
    parser.add_argument("url", metavar="URL")
    parser.add_argument(
        "--event",
        action="append",
        default=[],
        metavar="NAME",
        help="only these events (repeatable), e.g. --event universe_divergence",
    )
    parser.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    if not args.url.startswith(("ws://", "wss://")):
        raise ConfigError("expected a ws:// or wss:// URL", file="URL")
    return trio.run(watch, args.url, set(args.event))


async def watch(url: str, only: set[str]) -> int:
    """Print events until the feed closes (exit 0) or Ctrl-C (exit 0)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()

            nursery.start_soon(stop_on_signal)
            try:
                async with _open_feed(url) as ws:
                    while True:
                        message = await ws.get_message()
                        if only:
                            name = json.loads(message).get("event")
                            if name not in only:
                                continue
                        if isinstance(message, bytes):
                            message = message.decode("utf-8", "replace")
                        print(escape_terminal(message), flush=True)
            except ConnectionClosed:
                pass
            except (OSError, HandshakeError) as exc:
                print(f"wt: error: cannot follow {url}: {exc}", file=sys.stderr)
                return 2
            finally:
                nursery.cancel_scope.cancel()
    return 0


@asynccontextmanager
async def _open_feed(url: str) -> AsyncIterator[WebSocketConnection]:
    """`open_websocket_url`, with a `Host` a feed bound to an IPv6 address accepts: for one,
    trio-websocket (0.12) writes `::1:PORT`, which no server can read as a host and a port, so
    the stream is opened here and the handshake sent with `[::1]:PORT`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" not in host:
        async with open_websocket_url(url) as ws:
            yield ws
        return
    secure = parts.scheme == "wss"
    port = parts.port or (443 if secure else 80)
    stream: trio.SocketStream | trio.SSLStream[trio.SocketStream]
    if secure:
        context = ssl.create_default_context()
        stream = await trio.open_ssl_over_tcp_stream(
            host, port, ssl_context=context, https_compatible=True
        )
    else:
        stream = await trio.open_tcp_stream(host, port)
    resource = parts.path or "/"
    if parts.query:
        resource += f"?{parts.query}"
    # As `open_websocket_url` does, a lone error (the feed closing) leaves as itself.
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:
            try:
                ws = await wrap_client_stream(nursery, stream, f"[{host}]:{port}", resource)
            except BaseException:
                await stream.aclose()
                raise
            try:
                yield ws
            finally:
                await ws.aclose()
