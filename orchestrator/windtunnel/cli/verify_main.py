"""`wt verify`: check universes against their live servers, and optionally update them.

wt verify crm.universe.json                          # against meta.upstream.source
wt verify crm.universe.json --against https://crm.staging.internal/mcp --format markdown
wt verify fs.universe.json --allow write_file -- npx -y @modelcontextprotocol/server-filesystem /srv
wt verify crm.universe.json --update                 # rewrite it as the server is now
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import trio

from .._groups import unwrap_single_error
from ..errors import ConfigError
from ..record.redact import RedactionRules, load_rules_file, parse_rule
from ..record.upstream_source import is_url, recorded_name, recorded_upstream
from ..terminal_text import escape_terminal
from ..universe import Universe, load_universe
from ..verify.check_universe import VerifyOptions, verify_universe
from ..verify.findings import UniverseReport
from ..verify.render import render_json, render_markdown, render_text, totals
from ..verify.resend_plan import Comparison
from ..verify.updating import write_update
from .logs import configure_logging
from .verify_command import add_verify_options

__all__ = ["run_verify"]

EXIT_DRIFT = 1

_CLI = "<command line>"


@dataclass(frozen=True)
class _Target:
    file: str
    universe: Universe
    upstream: str | list[str]
    name: str


def run_verify(args: argparse.Namespace) -> int:
    files, command = _split_words(args)
    if not files:
        raise ConfigError("give at least one universe file", file=_CLI)
    if args.against is not None and command:
        raise ConfigError("give --against URL or -- COMMAND, not both", file=_CLI)
    if args.against is not None and not is_url(args.against):
        raise ConfigError(
            f"--against {args.against!r}: expected an http(s) URL (a command goes after --)",
            file=_CLI,
        )
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be positive", file=_CLI)
    options = VerifyOptions(
        allow=frozenset(args.allow),
        compare=args.compare,
        per_tool=_per_tool(args.compare_tool),
        redact=_rules(args),
        timeout_s=args.timeout,
    )
    against: str | list[str] | None = args.against if args.against is not None else command
    targets = [_target(file, against or None) for file in files]
    configure_logging(fmt=args.log_format, stream=sys.stderr)
    reports: list[UniverseReport] = []
    with unwrap_single_error():
        trio.run(_verify_all, targets, options, args.update, reports)
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[args.format]
    sys.stdout.write(render(reports))
    sys.stdout.flush()
    broken, informational = totals(reports)
    if broken or (args.fail_on == "any" and informational):
        return EXIT_DRIFT
    return 0


async def _verify_all(
    targets: list[_Target], options: VerifyOptions, update: bool, reports: list[UniverseReport]
) -> None:
    for target in targets:
        verified = await verify_universe(
            target.universe,
            file=target.file,
            upstream=target.upstream,
            name=target.name,
            options=options,
        )
        if update:
            summary = write_update(verified, target.file)
            print(
                escape_terminal(f"wt verify: updated {target.file}: {summary.text()}"),
                file=sys.stderr,
            )
        reports.append(verified.report)


def _split_words(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The universe files and the command after `--`; options among the files are parsed here
    (argparse hands everything after the first file over as words)."""
    words: list[str] = list(args.words)
    command: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, command = words[:at], words[at + 1 :]
        if not command:
            raise ConfigError("no command after --", file=_CLI)
    options = argparse.ArgumentParser(prog="wt verify", add_help=False, exit_on_error=False)
    add_verify_options(options)
    options.add_argument("files", nargs="*")
    try:
        parsed, unknown = options.parse_known_args(words, namespace=args)
    except argparse.ArgumentError as exc:
        raise ConfigError(str(exc), file=_CLI) from None
    if unknown:
        raise ConfigError(f"not a universe or option: {' '.join(unknown)}", file=_CLI)
    files: list[str] = parsed.files
    return files, command


def _per_tool(specs: list[str]) -> dict[str, Comparison]:
    chosen: dict[str, Comparison] = {}
    for spec in specs:
        tool, equals, how = spec.rpartition("=")
        if not equals or not tool or how not in ("shape", "value"):
            raise ConfigError(
                f"--compare-tool {spec!r}: expected TOOL=shape or TOOL=value", file=_CLI
            )
        chosen[tool] = "shape" if how == "shape" else "value"
    return chosen


def _rules(args: argparse.Namespace) -> RedactionRules:
    rules = RedactionRules()
    for spec in args.redact:
        rules.extend(parse_rule(spec))
    if args.redact_rules:
        rules.extend(load_rules_file(args.redact_rules))
    return rules


def _target(file: str, against: str | list[str] | None) -> _Target:
    universe = load_universe(file)
    upstream = against if against is not None else recorded_upstream(universe, file)
    return _Target(file, universe, upstream, recorded_name(universe) or "upstream")
