"""`wt validate` and `wt explain`: read-only questions about universe files (and, for
`validate`, Contract A envelopes, told apart by content)."""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple

import msgspec

from ..errors import ConfigError, UniverseError
from ..explain import explain_call, explain_request, render_explanation
from ..importing.secrets import scan_secrets
from ..importing.validation import check_envelope_file, claims_contract_a
from ..surface_matching import REQUEST_METHODS
from ..terminal_text import escape_terminal
from ..universe import load_universe
from ..universe_warnings import UniverseWarning, load_universe_with_warnings
from .commands import command_help

__all__ = ["register_explain", "register_validate", "secret_warning"]

KIND_TEXT = {
    "private_key": "a private key",
    "bearer_token": "a bearer token",
    "api_key": "an API key",
    "jwt": "a JSON Web Token",
    "email": "an email address",
    "phone": "a phone number",
    "credential_field": "a credential",
}


def register_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "validate",
        help=command_help("validate"),
        description="Check universe files and Contract A envelopes (*.wtin.json), each told "
        "apart by its content. Exit 0: every file is valid (warnings allowed); 1: --strict and "
        "a file has a warning; 2: a file is invalid or unreadable.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any file has a warning, not only on invalid files (producers' CI)",
    )
    parser.set_defaults(func=run_validate)


class Verdict(NamedTuple):
    """One file's verdict: whether it is valid, and how many warnings it printed."""

    valid: bool
    warnings: int


def run_validate(args: argparse.Namespace) -> int:
    verdicts = [validate_file(file) for file in args.files]
    if not all(verdict.valid for verdict in verdicts):
        return 2
    if args.strict and any(verdict.warnings for verdict in verdicts):
        return 1
    return 0


def validate_file(file: str) -> Verdict:
    """Check one file as what its content says it is, printing its lines."""
    if claims_contract_a(file):
        report = check_envelope_file(file)
        if report is not None:
            for line in report.lines:
                print(escape_terminal(line))
            return Verdict(report.valid, report.warnings)
    return validate_universe(file)


def validate_universe(file: str) -> Verdict:
    """`wt validate` of a universe file, in the envelope's line shapes: `OK FILE (N tools, M
    recordings)` then one `WARN FILE at PATH: ...` per warning, or `INVALID FILE at PATH: ...`;
    notes (`FILE: note: ...`) say what serving it will need."""
    try:
        universe, format_warnings = load_universe_with_warnings(file)
    except UniverseError as exc:
        # The error names the file (and the JSON path) as an envelope's INVALID line does.
        named = (
            exc if exc.file is not None else UniverseError(exc.message, file=file, path=exc.path)
        )
        print(escape_terminal(f"INVALID {named}"))
        return Verdict(valid=False, warnings=0)
    # File names, JSON paths and tool names are data: escaped before they reach a terminal.
    say = escape_terminal
    tools = len(universe.tools)
    recordings = len(universe.recordings)
    print(say(f"OK {file} ({tools} tools, {recordings} recordings)"))
    warnings = print_universe_warnings(file, format_warnings)
    for path, kind in scan_secrets(msgspec.to_builtins(universe.recordings), root="$.recordings"):
        print(say(secret_warning(file, path, kind)))
        warnings += 1
    with_messages = sum(1 for r in universe.recordings if r.server_messages)
    if with_messages:
        print(
            say(
                f"{file}: note: {with_messages} recording(s) hold server messages, which "
                "are exchanged with the client again (over stdio, and over HTTP in a session)"
            )
        )
    needs_hook = universe.uses_synthesize()
    if needs_hook:
        print(
            say(
                f"{file}: note: policy `synthesize` needs a hook at serve time "
                f"(tools: {', '.join(needs_hook)})"
            )
        )
    return Verdict(valid=True, warnings=warnings)


def secret_warning(file: str, json_path: str, kind: str) -> str:
    """The WARN line of a recorded value that looks like a secret (`wt validate`, `wt record`)."""
    return f"WARN {file} at {json_path}: looks like {KIND_TEXT.get(kind, kind)}; redact it"


def print_universe_warnings(file: str, warnings: list[UniverseWarning]) -> int:
    """One `WARN FILE at PATH: message` line per warning (forward tolerance: loaded, but not
    read as written); how many were printed."""
    for warning in warnings:
        print(escape_terminal(f"WARN {file} at {warning.path}: {warning.message}"))
    return len(warnings)


def register_explain(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("explain", help=command_help("explain"))
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "tool", metavar="TOOL", help="the tool (or, with --method, the URI or prompt name)"
    )
    parser.add_argument(
        "call_args",
        metavar="ARGS-JSON",
        nargs="?",
        default="{}",
        help='e.g. \'{"query": "Bluewing"}\' (default {})',
    )
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")
    parser.add_argument(
        "--method",
        choices=("tools/call", *REQUEST_METHODS),
        default="tools/call",
        help="explain a resources/read (TOOL is the URI), prompts/get (TOOL is the prompt, "
        "ARGS-JSON its arguments) or completion/complete (ARGS-JSON holds ref, argument, "
        "context) instead of a tool call",
    )
    parser.add_argument(
        "--nth",
        type=_positive,
        default=1,
        metavar="N",
        help="explain the Nth of identical calls in a fresh run (a sequence-mode tool answers "
        "each from the next recording)",
    )
    parser.set_defaults(func=run_explain)


def _parse_args_json(text: str) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(text)
    except RecursionError:
        raise ConfigError("ARGS-JSON is nested too deeply", file="<ARGS-JSON>") from None
    except msgspec.DecodeError as exc:
        raise ConfigError(f"ARGS-JSON is not valid JSON: {exc}", file="<ARGS-JSON>") from None
    if not isinstance(value, dict):
        raise ConfigError("ARGS-JSON must be a JSON object", file="<ARGS-JSON>")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {text!r}")
    return value


def run_explain(args: argparse.Namespace) -> int:
    universe = load_universe(args.file)
    call_args = _parse_args_json(args.call_args)
    if args.method == "tools/call":
        explanation = explain_call(universe, args.tool, call_args, nth=args.nth)
    else:
        explanation = explain_request(universe, args.method, args.tool, call_args)
    # Tool names, keys and values come from the universe: escaped (the layout's own line
    # breaks kept), and the JSON form stays valid JSON.
    if args.json:
        print(escape_terminal(msgspec.json.encode(explanation).decode()))
    else:
        print(escape_terminal(render_explanation(explanation), keep_newlines=True))
    return 0
