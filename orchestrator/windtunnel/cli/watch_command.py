"""`wt watch URL`: print a fleet's live event feed, one JSON object per line."""

from __future__ import annotations

import argparse
import json
import signal
import sys

import trio
from trio_websocket import ConnectionClosed, HandshakeError, open_websocket_url

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
                async with open_websocket_url(url) as ws:
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
