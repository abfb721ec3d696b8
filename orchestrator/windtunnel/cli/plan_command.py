"""`wt plan PACK`: the pack's work units, each with its stable id, seed and (optionally) shard."""

from __future__ import annotations

import argparse
import sys

import msgspec

from ..runner.pack_config import load_pack
from ..runner.units import plan_units
from ..scale.shards import ShardSpec, plan_hash, shard_of
from ..terminal_text import escape_terminal
from .argument_types import positive_count, shard_argument
from .commands import command_help

__all__ = ["register_plan"]


def register_plan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "plan",
        help=command_help("plan"),
        description=(
            "List every work unit of PACK in plan order: its id (<scenario>#<repeat>), its seed "
            "(from sha256 of the id) and, with --shards N, the 1-based shard of N that runs it. "
            "The plan hash identifies the plan; shards of one run share it."
        ),
    )
    parser.add_argument("pack", metavar="PACK")
    parser.add_argument("--repeats", type=int, help="runs per scenario (overrides the pack)")
    parser.add_argument(
        "-k", "--scenario", metavar="GLOB", help="only scenarios whose name matches"
    )
    cut = parser.add_mutually_exclusive_group()
    cut.add_argument(
        "--shards", type=positive_count, metavar="N", help="show which of N shards runs each unit"
    )
    cut.add_argument(
        "--shard", type=shard_argument, metavar="i/N", help="list only the units of shard i of N"
    )
    parser.add_argument("--json", action="store_true", help="one JSON document for machines")
    parser.set_defaults(func=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    pack = load_pack(args.pack)
    units = plan_units(pack, scenario_filter=args.scenario, repeats=args.repeats)
    digest = plan_hash(pack.name, [unit.id for unit in units])
    selected: ShardSpec | None = args.shard
    count: int | None = selected.count if selected is not None else args.shards
    rows: list[dict[str, str | int]] = []
    for unit in units:
        row = unit.to_dict()
        if count is not None:
            row["shard"] = shard_of(unit.id, count)
        if selected is None or row["shard"] == selected.index:
            rows.append(row)
    if args.json:
        doc = {
            "pack": pack.name,
            "plan_hash": digest,
            "total": len(units),
            "shards": count,
            "shard": str(selected) if selected is not None else None,
            "units": rows,
        }
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc), indent=2).decode() + "\n")
        return 0
    _print_table(rows, count is not None)
    scope = f"shard {selected}: {len(rows)} of " if selected is not None else ""
    print(
        f"{escape_terminal(pack.name)}: {scope}{len(units)} units; plan {digest[:12]}",
        file=sys.stderr,
    )
    return 0


def _print_table(rows: list[dict[str, str | int]], with_shard: bool) -> None:
    columns = ["id", "scenario", "repeat", "seed", *(["shard"] if with_shard else [])]
    cells = [[escape_terminal(str(row[c])) for c in columns] for row in rows]
    widths = [max([len(c), *(len(line[n]) for line in cells)]) for n, c in enumerate(columns)]
    for line in [[c.upper() for c in columns], *cells]:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
