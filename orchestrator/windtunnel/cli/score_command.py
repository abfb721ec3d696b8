"""`wt score RUN_DIR [--pack PACK]`: re-score a finished run's stored traces, no agent run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..rundir.layout import PACK_REF_FILE, RESCORED_DIR, ensure_dir, run_path
from ..rundir.merge import name_units
from ..rundir.pack_ref import load_recorded_pack, resolve_pack_ref
from ..runner.pack_config import load_pack
from ..runner.rescore import rescore_run
from ..runner.scenario import ScenarioPack
from ..runner.summary import status_counts
from ..terminal_text import escape_terminal
from .commands import command_help
from .logs import configure_logging

__all__ = ["register_score"]


def register_score(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "score",
        help=command_help("score"),
        description=(
            "Score every unit of RUN_DIR again with the policies and scorers of PACK (default: "
            f"the pack the run recorded in {PACK_REF_FILE}, only when that pack lies outside "
            "RUN_DIR: nothing in a run directory is imported or run) and write a new run "
            "directory: results.jsonl, traces/, summary.json, junit.xml, report.html. Unchanged "
            "rules give identical verdicts. Exit 0 when every unit passes, 1 when some fail, 2 "
            "on bad input."
        ),
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a finished (or merged) run directory")
    parser.add_argument("--pack", metavar="PACK", help="TOML file or module:attribute")
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help=f"the new run directory (default RUN_DIR/{RESCORED_DIR})",
    )
    parser.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    configure_logging()
    run_dir = Path(args.run_dir)
    if args.output:
        out = Path(args.output)
    else:
        # Inside the run directory, which is data: a link planted there is not followed.
        out = run_path(run_dir, RESCORED_DIR)
        ensure_dir(out, create=False)
    pack = _pack(args.pack, run_dir)
    report = rescore_run(run_dir, pack, out)
    summary = report.summary
    state = "passed" if summary.ok else "FAILED"
    pack_name = escape_terminal(summary.pack)
    print(
        f"{pack_name}: re-scored {report.units} unit(s): {state}: {status_counts(summary)}; "
        f"{len(report.changed)} changed status",
        file=sys.stderr,
    )
    if report.changed:
        print(f"changed: {escape_terminal(name_units(report.changed))}", file=sys.stderr)
    if report.kept:
        print(
            "kept as stored (trace file missing or unreadable): "
            + escape_terminal(name_units(report.kept)),
            file=sys.stderr,
        )
    print(f"report: {out / 'report.html'}", file=sys.stderr)
    print(str(out))
    return 0 if summary.ok else 1


def _pack(named: str | None, run_dir: Path) -> ScenarioPack:
    """The pack named with --pack, or the one the run recorded, said before it is loaded."""
    if named:
        print(f"pack: {escape_terminal(named)} (--pack)", file=sys.stderr)
        return load_pack(named)
    recorded = resolve_pack_ref(run_dir)
    where = "" if recorded.kind == "toml" else f" from {recorded.location}"
    print(
        f"pack: {escape_terminal(recorded.spec)}{escape_terminal(where)} "
        f"(recorded in {escape_terminal(str(run_path(run_dir, PACK_REF_FILE)))})",
        file=sys.stderr,
    )
    return load_recorded_pack(recorded)
