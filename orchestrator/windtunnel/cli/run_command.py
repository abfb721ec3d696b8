"""`wt run PACK`: its options (`run_main` runs the pack; it loads only when the command runs)."""

from __future__ import annotations

import argparse

from .argument_types import jobs_argument, positive_count, shard_argument
from .commands import command_help, run_later
from .otel_options import add_otel_options

__all__ = ["register_run"]


def register_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "run",
        help=command_help("run"),
        description=(
            "Run every scenario of PACK against its recorded upstreams, score it, and write "
            "results.jsonl, traces/, summary.json, junit.xml, report.html and events.jsonl to "
            "the run directory. Exit 0 when all passed, 1 when some failed, erred or were invalid "
            "(a declared fault never injected), 2 on bad input, 130 when interrupted (what "
            "finished is kept)."
        ),
    )
    parser.add_argument("pack", metavar="PACK")
    parser.add_argument(
        "-o", "--output", metavar="DIR", help="run directory (default runs/<pack>-<time>)"
    )
    parser.add_argument(
        "-c",
        "--concurrency",
        type=positive_count,
        help="scenario runs in flight (default: the pack's)",
    )
    parser.add_argument(
        "--repeats", type=positive_count, help="runs per scenario (overrides the pack)"
    )
    parser.add_argument(
        "-k", "--scenario", metavar="GLOB", help="only scenarios whose name matches"
    )
    parser.add_argument("--resume", action="store_true", help="finish an interrupted run in -o DIR")
    agent = parser.add_mutually_exclusive_group()
    agent.add_argument(
        "--agent-command",
        metavar="CMD",
        help="run this command as the agent, e.g. 'my-agent --mcp-config {mcp_config}'",
    )
    agent.add_argument("--agent-callable", metavar="MODULE:ATTR", help="run this Python callable")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help="inject this fault into every scenario, e.g. charge=timeout or lookup@0.3=is_error:"
        "down (repeatable; TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS]); a unit it never reaches "
        "is invalid",
    )
    parser.add_argument("--feed-port", type=int, metavar="PORT", help="serve a live event feed")
    add_otel_options(parser)
    parser.add_argument(
        "--progress", choices=["auto", "live", "plain"], default="auto", help="progress display"
    )
    _add_scale_arguments(parser)
    parser.set_defaults(func=run_later("run_main", "run_run"))


def _add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("past one process (docs/scale.md)")
    group.add_argument(
        "--shard",
        type=shard_argument,
        metavar="i/N",
        help="run only shard i of N (1-based; units assigned by a stable hash of their id)",
    )
    group.add_argument(
        "-j",
        "--jobs",
        type=jobs_argument,
        metavar="auto|N",
        help="run N shards in parallel and merge them (auto: one per core, or per Ray CPU)",
    )
    group.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where -j shards run: local worker processes (default) or Ray tasks",
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to join: HOST:PORT or ray://HOST:10001 (default: RAY_ADDRESS, "
        "else a local instance)",
    )
    group.add_argument(
        "--ray-working-dir",
        metavar="DIR",
        help="the tree shipped to every Ray task (default: the pack file's directory)",
    )
