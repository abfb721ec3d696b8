"""`scripts/bench`: global options, one subcommand per benchmark module."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from types import ModuleType

from . import (
    capacity,
    core,
    fleet,
    lines,
    memory,
    otel,
    pack,
    peers,
    record,
    scale,
    serve,
    startup,
)
from .report import update_section, write_json

__all__ = ["main"]

# One module per benchmark; each has NAME, HELP, add_arguments(parser) and run(options).
BENCHMARKS: tuple[ModuleType, ...] = (
    startup,
    lines,
    core,
    serve,
    fleet,
    pack,
    peers,
    capacity,
    record,
)
# Run on their own only (`all` stays under 15 minutes): `memory` takes ~20, `scale` ~10; `otel`
# measures the OpenTelemetry export's cost (its own section of docs/benchmarks.md).
SEPARATE: tuple[ModuleType, ...] = (memory, scale, otel)


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # Accepted before and after the subcommand; after it, an absent option must not reset one
    # given before it, hence SUPPRESS as the subparser default.
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--quick",
        action="store_true",
        default=default(False),
        help="tiny sizes and few repeats: a smoke test that finishes in seconds (for CI)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=default(None),
        metavar="MD",
        help="rewrite this benchmark's section of a markdown file (e.g. docs/benchmarks.md); "
        "plots are written next to it",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=default(None),
        metavar="PATH",
        help="write the full results as JSON",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scripts/bench", description="Wind Tunnel benchmarks: one subcommand per benchmark."
    )
    _add_global_options(parser, suppress=False)
    commands = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    for module in (*BENCHMARKS, *SEPARATE):
        sub = commands.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        _add_global_options(sub, suppress=True)
        module.add_arguments(sub)
        sub.set_defaults(module=module)
    every = commands.add_parser(
        "all",
        help="every benchmark in turn, default sizes (under 15 minutes on a 2-core machine)",
        description="Run every benchmark in turn with its default sizes; --out and --quick apply "
        "to each; --json PATH writes one file per benchmark (PATH with the name inserted).",
    )
    _add_global_options(every, suppress=True)
    every.set_defaults(module=None)
    return parser


def _run_all(args: list[str], options: argparse.Namespace) -> int:
    """Each benchmark as if run on its own, with the global options given to `all`."""
    globals_: list[str] = []
    if options.quick:
        globals_.append("--quick")
    if options.out is not None:
        globals_ += ["--out", str(options.out)]
    for module in BENCHMARKS:
        sub = [*globals_, module.NAME]
        if options.json is not None:
            path = options.json
            sub += ["--json", str(path.with_name(f"{path.stem}-{module.NAME}{path.suffix}"))]
        print(f"=== scripts/bench {shlex.join(sub)}", flush=True)
        main(sub)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    options = build_parser().parse_args(args)
    options.command = shlex.join(["scripts/bench", *args])
    if options.module is None:
        return _run_all(args, options)
    result = options.module.run(options)
    if options.json is not None:
        write_json(options.json, result.data)
        print(f"wrote {options.json}")
    if options.out is not None:
        update_section(options.out, options.module.NAME, result.markdown)
        print(f"updated the {options.module.NAME} section of {options.out}")
    return 0
