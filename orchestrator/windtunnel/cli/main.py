"""`wt`: parse arguments, dispatch to a command, turn project errors into exit code 2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import WindtunnelError
from ..terminal_text import escape_terminal
from . import commands

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `wt` parser; given the arguments, only the command they run is loaded in full."""
    parser: argparse.ArgumentParser = _Parser(
        prog="wt",
        description="Wind Tunnel: rerun AI agents against recorded MCP upstreams.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    sub._parser_class = _Parser  # subcommands also exit 2 on usage errors
    commands.add_commands(sub, commands.COMMANDS if argv is None else commands.chosen_command(argv))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        # The command's module is imported here: Ctrl-C while it loads is an interrupt too.
        args = build_parser(argv).parse_args(argv)
        return _run(args)
    except KeyboardInterrupt:
        print("wt: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.func(args)
        return code
    except WindtunnelError as exc:
        if args.debug:
            raise
        print(f"wt: error: {escape_terminal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        # Our decoders name the file; this is the net under any input nested past Python's stack.
        if args.debug:
            raise
        print("wt: error: input nested too deeply to process", file=sys.stderr)
        return EXIT_USAGE
