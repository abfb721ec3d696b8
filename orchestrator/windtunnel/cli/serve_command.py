"""`wt serve`: its options (`serve_main` serves; it loads only when the command runs)."""

from __future__ import annotations

import argparse

from .commands import command_help, run_later
from .listener_options import add_allow_options
from .otel_options import add_otel_options
from .redaction_options import add_redaction_options

__all__ = ["register_serve"]


def register_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help=command_help("serve"),
        description=(
            "Serve one or more universes under one supervisor. Give FILE or NAME=FILE; with "
            "several, every upstream gets its own URL and an `mcpServers` client config is "
            "printed. Events (one JSON object per line) go to stderr, or --events FILE. A "
            "stderr that is not read never stalls the servers: lines that do not fit are "
            "dropped and counted (events_dropped)."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="[NAME=]FILE")
    parser.add_argument("--host", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (one universe only; default: OS)")
    add_allow_options(parser)
    parser.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout instead")
    parser.add_argument(
        "--synthesize", metavar="MODULE:FUNCTION", help="hook for the `synthesize` miss policy"
    )
    parser.add_argument("--events", metavar="FILE", help="write events to FILE instead of stderr")
    parser.add_argument(
        "--feed-port",
        type=int,
        metavar="PORT",
        help="serve a live WebSocket event feed (0: any free port); follow it with `wt watch`",
    )
    parser.add_argument("--log-format", choices=["auto", "json", "console"], default="auto")
    add_otel_options(parser)
    parser.add_argument(
        "--no-fast-path",
        dest="fast_path",
        action="store_false",
        help="answer every request through the MCP SDK, plain tools/call included (the same "
        "bytes, more CPU per call): rules the fast path out when chasing a bug",
    )
    parser.add_argument(
        "--own-identity",
        action="store_true",
        help="present Wind Tunnel's own serverInfo and capabilities and no instructions, not "
        "the recorded server's",
    )
    parser.add_argument(
        "--both-eras",
        action="store_true",
        help="serve both MCP protocol eras (the initialize handshake and 2026-07-28) even when "
        "the recorded server spoke only the handshake; by default a replay keeps the recorded "
        "server's era and version",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="TOOL=KIND[:ARGS]",
        help="inject a fault (repeatable): TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS], KIND one "
        "of error[:CODE[:MESSAGE]], is_error[:TEXT], timeout, delay:SECONDS|recorded, "
        "bad_schema, not_json, empty, drop; e.g. charge#2=timeout, lookup@0.3=is_error:down "
        "(docs/universe.md, Faults)",
    )
    parser.add_argument(
        "--fault-seed",
        type=int,
        default=0,
        metavar="N",
        help="the seed a fault's @FRACTION is drawn from (default 0)",
    )
    parser.add_argument(
        "--record-mode",
        choices=["none", "once", "new_episodes", "all"],
        help="none (default; or $WT_RECORD_MODE): a miss is a divergence; once: record FILE if it "
        "does not exist; new_episodes: a miss goes to the live upstream, is served, appended to "
        "FILE and reported as recorded_live; all: record FILE again",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL|COMMAND",
        help="the live server for a record mode (default: the universe's meta.upstream)",
    )
    add_redaction_options(parser, what="what a record mode writes, as wt record")
    parser.set_defaults(func=run_later("serve_main", "run_serve"))
