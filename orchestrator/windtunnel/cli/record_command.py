"""`wt record`: its options (`record_main` records; it loads only when the command runs)."""

from __future__ import annotations

import argparse

from ..record.limits import DEFAULT_TIMEOUT_S
from .commands import command_help, run_later
from .listener_options import add_allow_options
from .otel_options import add_otel_options
from .redaction_options import add_redaction_options

__all__ = ["add_record_options", "register_record"]


def register_record(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "record",
        help=command_help("record"),
        description=(
            "Forward an agent's MCP traffic to live upstreams unchanged and write one universe "
            "per upstream: the live tools/list, every answered tools/call verbatim, sequence mode "
            "for tools whose identical calls got different answers. UPSTREAM is URL, NAME=URL, "
            "-- COMMAND ARGS..., or NAME=-- COMMAND ARGS... (a command runs until the next "
            "NAME=URL or NAME=-- word). Options go before the first command."
        ),
    )
    add_record_options(parser)
    parser.add_argument("upstreams", nargs=argparse.REMAINDER, metavar="UPSTREAM...")
    parser.set_defaults(func=run_later("record_main", "run_record"))


def add_record_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="universe file (one upstream) or directory (several: NAME.universe.json each)",
    )
    parser.add_argument("--stdio", action="store_true", help="speak stdio to the agent")
    parser.add_argument("--log", metavar="FILE", help="also write the raw JSON-RPC capture log")
    add_redaction_options(parser, what="everything recorded, printed or logged")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=(
            "deadline on each upstream answer, in total: a stream kept alive does not extend "
            f"it (default {DEFAULT_TIMEOUT_S:g})"
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (one upstream only; default: OS)")
    add_allow_options(parser)
    parser.add_argument("--log-format", choices=["auto", "json", "console"], default="auto")
    add_otel_options(parser)
