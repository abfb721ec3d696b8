"""`wt verify`: its options (`verify_main` verifies; it loads only when the command runs)."""

from __future__ import annotations

import argparse

from ..record.limits import DEFAULT_TIMEOUT_S
from .commands import command_help, run_later
from .redaction_options import add_redaction_options

__all__ = ["add_verify_options", "register_verify"]


def register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "verify",
        help=command_help("verify"),
        description=(
            "Check universes against the live server they were recorded from: the surface "
            "(initialize, tools/list and the other lists the universe holds) diffed and "
            "classified breaking or informational, then the recorded calls of read-only tools "
            "(readOnlyHint: true, or named by --allow) re-sent and compared by shape (or value). "
            "The upstream is what the universe recorded in meta.upstream, or --against URL, or "
            "-- COMMAND ARGS... at the end. Exit 0 clean, 1 on breaking drift (any drift with "
            "--fail-on any), 2 on usage or connection errors."
        ),
    )
    add_verify_options(parser)
    parser.add_argument("words", nargs=argparse.REMAINDER, metavar="UNIVERSE... [-- COMMAND]")
    parser.set_defaults(func=run_later("verify_main", "run_verify"))


def add_verify_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--against", metavar="URL", help="the live upstream's Streamable HTTP URL")
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="also re-send this tool's calls although it is not annotated read-only (repeatable)",
    )
    parser.add_argument(
        "--compare",
        choices=["shape", "value"],
        default="shape",
        help="compare re-sent answers by result shape (default) or by value",
    )
    parser.add_argument(
        "--compare-tool",
        action="append",
        default=[],
        metavar="TOOL=shape|value",
        help="how one tool's answers are compared (repeatable)",
    )
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument(
        "--fail-on",
        choices=["breaking", "any"],
        default="breaking",
        help="exit 1 on breaking drift (default) or on any drift",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rewrite each universe as the live server is now (atomically, redacted)",
    )
    add_redaction_options(parser, what="what --update writes, as wt record")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"deadline on each upstream answer (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument("--log-format", choices=["auto", "json", "console"], default="auto")
