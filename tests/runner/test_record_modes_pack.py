"""Record modes from a pack's `[record]` table (a real live server, `wt run`): `once` records a
missing universe and replays it after; `all` records again; `new_episodes` appends the miss and
still fails `no_divergence` with a `recorded_live` divergence."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.verify.recorded import drifting_command
from windtunnel.cli.main import main
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(240)


def write_pack(tmp_path: Path, mode: str, live: str, queries: list[str]) -> Path:
    plan = "\n".join(
        f'[[scenario.plan]]\ntool = "lookup"\nargs = {{ query = "{q}" }}' for q in queries
    )
    pack = tmp_path / "pack.toml"
    pack.write_text(
        f"""
[pack]
name = "modes"

[agent]
kind = "scripted"

[record.upstreams.crm]
mode = "{mode}"
live = {json.dumps(live)}

[[scenario]]
name = "lookup"
task = "Look the clients up."
upstreams = {{ crm = "crm.universe.json" }}

[[scenario.policies]]
kind = "no_divergence"

{plan}
"""
    )
    return pack


def run(pack: Path, run_dir: Path) -> int:
    return main(["run", str(pack), "-o", str(run_dir), "--progress", "plain"])


def divergence_reasons(run_dir: Path) -> list[str]:
    reasons = []
    for trace in sorted((run_dir / "traces").glob("*.json")):
        for call in json.loads(trace.read_text())["mcp_calls"]:
            divergence = (call.get("extra") or {}).get("divergence")
            if divergence is not None:
                reasons.append(divergence["reason"])
    return reasons


def test_once_then_all_then_new_episodes(tmp_path: Path) -> None:
    """The same pack, one mode at a time, against the v1 SDK server."""
    universe = tmp_path / "crm.universe.json"
    live = shlex.join(drifting_command("v1", tmp_path / "sent.log"))
    gone = str(tmp_path / "no-such-server")

    assert run(write_pack(tmp_path, "once", live, ["ana"]), tmp_path / "r1") == 0
    assert [r.args for r in load_universe(universe).recordings] == [{"query": "ana"}]
    recorded = universe.read_bytes()

    # The file exists now: `once` replays it, and never starts the (missing) live server.
    assert run(write_pack(tmp_path, "once", gone, ["ana"]), tmp_path / "r2") == 0
    assert universe.read_bytes() == recorded
    assert divergence_reasons(tmp_path / "r2") == []

    assert run(write_pack(tmp_path, "all", live, ["bob"]), tmp_path / "r3") == 0
    assert [r.args for r in load_universe(universe).recordings] == [{"query": "bob"}]

    assert run(write_pack(tmp_path, "new_episodes", live, ["bob", "cy"]), tmp_path / "r4") == 1
    assert divergence_reasons(tmp_path / "r4") == ["recorded_live"]
    coverage = json.loads((tmp_path / "r4" / "summary.json").read_text())["coverage"]["crm"]
    assert (coverage["unmatched"], coverage["live"]) == (1, 1)  # counted apart from replayed
    assert [r.args for r in load_universe(universe).recordings] == [
        {"query": "bob"},
        {"query": "cy"},
    ]
