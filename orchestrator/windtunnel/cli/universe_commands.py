"""`wt validate` and `wt explain`: read-only questions about universe files."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from ..errors import ConfigError, UniverseError
from ..explain import explain_call, render_explanation
from ..importing.secrets import scan_secrets
from ..terminal_text import escape_terminal
from ..universe import load_universe
from .commands import command_help

__all__ = ["KIND_TEXT", "register_explain", "register_validate"]

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
    parser = sub.add_parser("validate", help=command_help("validate"))
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.set_defaults(func=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    problems = 0
    for file in args.files:
        try:
            universe = load_universe(file)
        except UniverseError as exc:
            problems += 1
            print(escape_terminal(str(exc)), file=sys.stderr)
            continue
        # File names, JSON paths and tool names are data: escaped before they reach a terminal.
        say = escape_terminal
        tools = len(universe.tools)
        recordings = len(universe.recordings)
        print(say(f"{file}: ok ({tools} tools, {recordings} recordings)"))
        for path, kind in scan_secrets(
            msgspec.to_builtins(universe.recordings), root="$.recordings"
        ):
            looks = KIND_TEXT.get(kind, kind)
            print(say(f"{file}: warning: {path} looks like {looks}; redact it"))
        needs_hook = universe.uses_synthesize()
        if needs_hook:
            print(
                say(
                    f"{file}: note: policy `synthesize` needs a hook at serve time "
                    f"(tools: {', '.join(needs_hook)})"
                )
            )
    return 2 if problems else 0


def register_explain(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("explain", help=command_help("explain"))
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("tool", metavar="TOOL")
    parser.add_argument("call_args", metavar="ARGS-JSON", help='e.g. \'{"query": "Bluewing"}\'')
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")
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


def run_explain(args: argparse.Namespace) -> int:
    universe = load_universe(args.file)
    call_args = _parse_args_json(args.call_args)
    explanation = explain_call(universe, args.tool, call_args)
    # Tool names, keys and values come from the universe: escaped (the layout's own line
    # breaks kept), and the JSON form stays valid JSON.
    if args.json:
        print(escape_terminal(msgspec.json.encode(explanation).decode()))
    else:
        print(escape_terminal(render_explanation(explanation), keep_newlines=True))
    return 0
