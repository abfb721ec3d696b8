"""`wt diff BASE NEW`: what changed between two runs of a pack, and whether it regressed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import msgspec

from ..atomic_write import atomic_write
from ..compare import FAIL_ON, diff_runs, load_run, regressions
from ..compare.render_html import render_html
from ..compare.render_markdown import render_markdown
from ..compare.render_text import render_text
from ..errors import ConfigError, InputError
from ..terminal_text import escape_terminal
from .commands import command_help

__all__ = ["register_diff"]

FORMATS = ("text", "markdown", "json", "html")


def register_diff(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "diff",
        help=command_help("diff"),
        description=(
            "Compare the run directory BASE with NEW (each a run, a merged run, or a parallel "
            "run's unmerged shards): per scenario the status flip and pass-rate change with "
            "Fisher's exact p-value, the divergences that are new, gone or unchanged, and the "
            "call-sequence diff of each changed scenario. Exit 0 when nothing regressed, 1 when "
            "something named by --fail-on did, 2 on bad input."
        ),
    )
    parser.add_argument("base", metavar="BASE", help="the baseline run directory")
    parser.add_argument("new", metavar="NEW", help="the run directory to judge")
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument(
        "--verify",
        action="append",
        default=[],
        metavar="FILE",
        help="also show the drift in a `wt verify --format json` report (text and markdown)",
    )
    parser.add_argument(
        "--fail-on",
        default="regression",
        metavar="LIST",
        help=(
            "what exits 1, comma-separated: regression (any pass-rate drop; the default), "
            "significant (only drops with Fisher p < 0.05), new-divergence, removed; or none"
        ),
    )
    parser.add_argument(
        "--all", action="store_true", help="text format: list unchanged scenarios too"
    )
    parser.set_defaults(func=run_diff)


def _fail_on(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["none"]:
        return []
    unknown = [name for name in names if name not in FAIL_ON]
    if unknown or not names:
        raise InputError(
            f"--fail-on: unknown {', '.join(map(repr, unknown)) or 'empty list'}; expected a "
            f"comma-separated list of {', '.join(FAIL_ON)}, or none"
        )
    return names


def _verify_section(files: list[str], fmt: str) -> str:
    """Drift `wt verify` found (its JSON reports), after the runs' diff in the same format."""
    from ..verify.render import load_reports, render_markdown, render_text

    if fmt not in ("text", "markdown"):
        raise ConfigError("--verify is shown with --format text or markdown", file="<command line>")
    reports = [report for file in files for report in load_reports(file)]
    return "\n" + (render_markdown(reports) if fmt == "markdown" else render_text(reports))


def run_diff(args: argparse.Namespace) -> int:
    fail_on = _fail_on(args.fail_on)
    diff = diff_runs(load_run(args.base), load_run(args.new))
    if args.format == "json":
        text = msgspec.json.format(msgspec.json.encode(diff), indent=2).decode() + "\n"
    elif args.format == "markdown":
        text = render_markdown(diff)
    elif args.format == "html":
        text = render_html(diff)
    else:
        text = render_text(diff, all_scenarios=args.all)
    if args.verify:
        text += _verify_section(args.verify, args.format)
    if args.output:
        target = Path(args.output)
        try:
            atomic_write(target, text.encode("utf-8"))
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", file=os.fspath(target)) from None
        print(str(target))
    else:
        # Names, arguments and answers come from the runs' data: shown, never obeyed.
        sys.stdout.write(escape_terminal(text, keep_newlines=True))
    reasons = regressions(diff, fail_on)
    for reason in reasons:
        print(f"wt diff: {escape_terminal(reason)}", file=sys.stderr)
    return 1 if reasons else 0
