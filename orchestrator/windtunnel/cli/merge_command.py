"""`wt merge DIR... -o DIR`: shard run directories -> one run directory, checked for gaps."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..rundir.merge import MergeReport, merge_runs, name_units
from ..rundir.pack_ref import copy_pack_ref
from ..runner.summary import status_counts
from .commands import command_help
from .logs import configure_logging

__all__ = ["register_merge"]


def register_merge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "merge",
        help=command_help("merge"),
        description=(
            "Combine the run directories of the shards of one plan into one run directory: "
            "results.jsonl, traces/, summary.json (pass@k and pass^k over every shard), "
            "junit.xml, report.html, events.jsonl. Refuses (exit 2) shards of different plans, "
            "a shard given twice, and units that no shard finished (unless --allow-missing). "
            "Exit 0 when every unit passed, 1 when some failed or are missing."
        ),
    )
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="shard run directories")
    parser.add_argument("-o", "--output", metavar="DIR", required=True, help="merged run directory")
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="merge what finished even if units are missing (they are listed; exit 1)",
    )
    parser.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    configure_logging()
    out = Path(args.output)
    report = merge_runs(args.dirs, out, allow_missing=args.allow_missing)
    copy_pack_ref([Path(d) for d in args.dirs], out)
    print_merge(report, out)
    return 0 if report.summary.ok and not report.missing else 1


def print_merge(report: MergeReport, out: Path) -> None:
    """The merged run's one-line verdict on stderr, its directory on stdout."""
    summary = report.summary
    state = "passed" if summary.ok and not report.missing else "FAILED"
    shards = ", ".join(map(str, report.merged))
    print(
        f"{summary.pack}: merged shards {shards}: {state}: {status_counts(summary)} of "
        f"{summary.total}; divergences {summary.divergences}",
        file=sys.stderr,
    )
    if report.missing:
        print(
            f"missing {len(report.missing)} unit(s): {name_units(report.missing)}", file=sys.stderr
        )
    print(f"report: {out / 'report.html'}", file=sys.stderr)
    print(str(out))
