"""`wt import TRACE`: a production trace → Contract A, universe fixtures, a runnable pack and a
review note."""

from __future__ import annotations

import argparse
import os
import sys

from ..importing.importer import import_trace, write_import
from ..importing.sniff import FORMATS
from ..terminal_text import escape_terminal
from .commands import command_help

__all__ = ["register_import"]


def register_import(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "import",
        help=command_help("import"),
        description="Import a production trace (format sniffed unless --format) and write "
        "trace.wtin.json, one universe per upstream, scenario.toml and IMPORTED.md (the review "
        "note) into DIR, which must be empty or new unless --force.",
    )
    parser.add_argument("trace", metavar="TRACE")
    parser.add_argument("--format", choices=FORMATS, help="force the trace format")
    parser.add_argument(
        "-o", "--output", metavar="DIR", help="output directory (default: ./<trace name>.import)"
    )
    parser.add_argument("--task", metavar="TEXT", help="the task given to the agent")
    parser.add_argument(
        "--upstream",
        metavar="NAME",
        help="name the upstream the trace does not name (chat transcripts), instead of `default`",
    )
    parser.add_argument(
        "--keep-suspect",
        action="store_true",
        help="keep suspect calls (truncated or scrubbed values, unadvertised tools) in the fixture",
    )
    parser.add_argument(
        "--wire-only",
        action="store_true",
        help="keep results the trace holds only as the model saw them (transcripts) out of the "
        "fixture",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty output directory (files of the same name are replaced)",
    )
    parser.set_defaults(func=run_import)


def _stem(trace: str) -> str:
    name = os.path.basename(trace)
    for suffix in (".wtin.json", ".jsonl", ".json", ".ndjson"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name.split(".", 1)[0] or name


def run_import(args: argparse.Namespace) -> int:
    envelope = import_trace(args.trace, format=args.format, task=args.task, upstream=args.upstream)
    stem = _stem(args.trace)
    directory = args.output or f"{stem}.import"
    output = write_import(
        envelope,
        directory,
        name=stem,
        keep_suspect=args.keep_suspect,
        wire_only=args.wire_only,
        force=args.force,
    )
    replayed = len(output.plan.calls)
    # Names, paths and messages come from the trace: escaped before they reach a terminal.
    say = escape_terminal
    print(
        say(
            f"{args.trace}: {envelope.trace.source.format}, {len(envelope.calls)} call(s), "
            f"{replayed} in the fixture, {len(envelope.upstreams)} upstream(s)"
        )
    )
    for file_name in output.files:
        print(say(f"wrote {os.path.join(output.directory, file_name)}"))
    for tool in output.plan.sequence_tools:
        print(
            say(f"note: {tool} answered the same arguments differently; recorded in sequence mode")
        )
    for warning in output.warnings:
        where = f" at {warning.path}" if warning.path else ""
        print(say(f"warning: {warning.code}{where}: {warning.message}"), file=sys.stderr)
    if not envelope.calls:
        print("note: the trace holds no tool call; the pack replays nothing", file=sys.stderr)
    elif not replayed:
        print(
            f"note: none of the {len(envelope.calls)} call(s) can be replayed (the warnings say "
            "what the trace lacks); the pack replays nothing",
            file=sys.stderr,
        )
    return 0
