"""The `wt` subcommands: each one's name, one-line help, and the module that defines and runs it.

Only the module of the command being run is imported: `wt --help` and the light commands
(`validate`, `explain`, `plan`) start without loading the MCP SDK, the HTTP server or the runner.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Container, Sequence
from typing import NamedTuple

__all__ = ["COMMANDS", "add_commands", "chosen_command", "command_help", "run_later"]


class Command(NamedTuple):
    help: str
    module: str
    register: str


COMMANDS: dict[str, Command] = {
    "validate": Command(
        "check universe files and Contract A envelopes; exit 2 on any problem",
        "universe_commands",
        "register_validate",
    ),
    "explain": Command(
        "say which recording answers a call, and why", "universe_commands", "register_explain"
    ),
    "serve": Command(
        "serve universes as MCP servers (Streamable HTTP at /mcp, or stdio)",
        "serve_command",
        "register_serve",
    ),
    "watch": Command(
        "print a live event feed (ws://HOST:PORT/)", "watch_command", "register_watch"
    ),
    "run": Command(
        "run a pack of scenarios (TOML file or module:attribute)", "run_command", "register_run"
    ),
    "import": Command(
        "turn a trace into a universe fixture, a scenario skeleton and a scorer stub",
        "import_command",
        "register_import",
    ),
    "plan": Command(
        "list a pack's work units (scenario x repeat) with stable ids, seeds and shards",
        "plan_command",
        "register_plan",
    ),
    "merge": Command(
        "merge shard run directories (wt run --shard i/N) into one run",
        "merge_command",
        "register_merge",
    ),
    "record": Command(
        "record a universe through a proxy in front of live MCP servers",
        "record_command",
        "register_record",
    ),
    "verify": Command(
        "check universes against their live servers: surface drift and safe calls sent again",
        "verify_command",
        "register_verify",
    ),
    "diff": Command(
        "compare two run directories: regressions, new/gone divergences, call diffs",
        "diff_command",
        "register_diff",
    ),
    "score": Command(
        "re-evaluate policies and scorers over a run's stored traces (no agent run)",
        "score_command",
        "register_score",
    ),
}


def command_help(name: str) -> str:
    """The one-line help of command `name`, as `wt --help` lists it."""
    return COMMANDS[name].help


def chosen_command(argv: Sequence[str]) -> set[str]:
    """The command `argv` runs (its first word that is not an option), if that names one."""
    word = next((arg for arg in argv if not arg.startswith("-")), None)
    return {word} if word in COMMANDS else set()


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], in_full: Container[str]
) -> None:
    """Add every command to `sub`: those named in `in_full` with all their options (their modules
    imported), the rest by name and help, which is all `wt --help` and "invalid choice" need."""
    for name, command in COMMANDS.items():
        if name in in_full:
            module = importlib.import_module(f"{__package__}.{command.module}")
            getattr(module, command.register)(sub)
        else:
            sub.add_parser(name, help=command.help)


def run_later(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A command's run function, imported from `module` of this package when the command runs:
    parsing its options (`--help`, a usage error) loads none of its work."""

    def run(args: argparse.Namespace) -> int:
        ran: int = getattr(importlib.import_module(f"{__package__}.{module}"), function)(args)
        return ran

    return run
