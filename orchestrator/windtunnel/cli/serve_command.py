"""`wt serve`: serve universes as MCP servers until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
from typing import Any

import structlog
import trio

from ..agents.base import mcp_config
from ..calls import MCPCall
from ..errors import ConfigError
from ..mcp.recorded import RecordedMCPServer, upstream_name
from ..miss_answers import SynthesizeHook
from .logs import configure_logging

__all__ = ["register_serve"]

logger = structlog.get_logger("windtunnel")


def register_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="serve universes as MCP servers (Streamable HTTP at /mcp, or stdio)",
        description=(
            "Serve one or more universes. Give FILE or NAME=FILE; with several, every upstream "
            "gets its own URL and an `mcpServers` client config is printed."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="[NAME=]FILE")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (one universe only; default: OS)")
    parser.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout instead")
    parser.add_argument(
        "--synthesize", metavar="MODULE:FUNCTION", help="hook for the `synthesize` miss policy"
    )
    parser.add_argument("--log-format", choices=["auto", "json", "console"], default="auto")
    parser.set_defaults(func=run_serve)


def parse_upstreams(specs: list[str]) -> list[tuple[str, str]]:
    """`crm=crm.universe.json` or a bare path (named after the file); names must be unique."""
    pairs: list[tuple[str, str]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = upstream_name(spec), spec
        if not name or not path:
            raise ConfigError(f"expected FILE or NAME=FILE, got {spec!r}", file="<command line>")
        if any(name == other for other, _ in pairs):
            raise ConfigError(
                f"upstream name {name!r} is used twice; name them with NAME=FILE",
                file="<command line>",
            )
        pairs.append((name, path))
    return pairs


def load_hook(spec: str | None) -> SynthesizeHook | None:
    """Import the user's own hook: `package.module:function`."""
    if spec is None:
        return None
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"expected MODULE:FUNCTION, got {spec!r}", file="--synthesize")
    try:
        hook: Any = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import {spec!r}: {exc}", file="--synthesize") from None
    if not callable(hook):
        raise ConfigError(f"{spec!r} is not callable", file="--synthesize")
    return hook  # type: ignore[no-any-return]


def log_call(call: MCPCall) -> None:
    """One structured line per call."""
    match = call.extra.get("match")
    logger.info(
        "tool_call",
        upstream=call.upstream,
        tool=call.tool_name,
        args=call.args,
        tier=match["tier"] if match else "miss",
        recording=match["index"] if match else None,
        is_error=call.is_error,
        duration_ms=round(call.duration_ms, 3),
    )


def run_serve(args: argparse.Namespace) -> int:
    pairs = parse_upstreams(args.files)
    hook = load_hook(args.synthesize)
    if args.stdio and len(pairs) != 1:
        raise ConfigError("--stdio serves exactly one universe", file="<command line>")
    if args.port and len(pairs) != 1:
        raise ConfigError("--port needs exactly one universe", file="<command line>")
    if args.stdio:
        # stdout carries the protocol: logs go to stderr only.
        configure_logging(fmt=args.log_format, stream=sys.stderr)
    else:
        configure_logging(fmt=args.log_format)
    servers = [RecordedMCPServer(path, name=name, synthesize=hook) for name, path in pairs]
    for server in servers:
        server.add_listener(log_call)
    if args.stdio:
        trio.run(servers[0].serve_stdio)
        return 0
    trio.run(_serve_http, servers, args.host, args.port)
    return 0


async def _serve_http(servers: list[RecordedMCPServer], host: str, port: int) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            urls = {
                server.name: await server.start(nursery, host=host, port=port) for server in servers
            }
            for name, url in urls.items():
                logger.info("server_started", upstream=name, url=url)
            if len(urls) == 1:
                print(next(iter(urls.values())), flush=True)
            else:
                print(json.dumps(mcp_config(urls), indent=2), flush=True)
            async for signum in signals:
                logger.info("shutting_down", signal=signal.Signals(signum).name)
                break
            for server in servers:
                await server.stop()
                logger.info("server_stopped", upstream=server.name, calls=len(server.call_log()))
