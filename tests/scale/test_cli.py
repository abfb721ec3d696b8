"""`wt plan`, `wt run --shard`, `wt merge` and the argument errors, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scale.packs import scripted_pack
from windtunnel.cli.main import main
from windtunnel.rundir.results import read_results
from windtunnel.scale.shards import plan_hash, shard_of


def test_plan_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The table lists every unit in plan order with its seed and, with --shards, its shard."""
    pack = scripted_pack(tmp_path, 2, repeats=2)
    assert main(["plan", str(pack), "--shards", "3"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "ID           SCENARIO   REPEAT  SEED                 SHARD",
        "lookup-00#0  lookup-00  0       128422714660363620   3",
        "lookup-00#1  lookup-00  1       6783817538100657205  3",
        "lookup-01#0  lookup-01  0       8012667435759324647  2",
        "lookup-01#1  lookup-01  1       6804414948106180595  1",
    ]
    digest = plan_hash("scripted", ["lookup-00#0", "lookup-00#1", "lookup-01#0", "lookup-01#1"])
    assert err == f"scripted: 4 units; plan {digest[:12]}\n"


def test_plan_json_honours_repeats_filter_and_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json is one document; --repeats, -k and --shard cut it exactly as `wt run` would."""
    pack = scripted_pack(tmp_path, 3)
    assert (
        main(
            ["plan", str(pack), "--json", "--repeats", "3", "-k", "lookup-0[12]", "--shard", "1/2"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    ids = [f"lookup-0{i}#{r}" for i in (1, 2) for r in range(3)]
    mine = [uid for uid in ids if shard_of(uid, 2) == 1]
    assert doc["pack"] == "scripted"
    assert doc["plan_hash"] == plan_hash("scripted", ids)
    assert (doc["total"], doc["shards"], doc["shard"]) == (6, 2, "1/2")
    assert [u["id"] for u in doc["units"]] == mine
    assert all(
        u["shard"] == 1 and u["id"] == f"{u['scenario']}#{u['repeat']}" for u in doc["units"]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["plan", "P", "--shard", "0/2"],
            "wt plan: error: argument --shard: shard index must be in 1..2 (1-based), got 0",
        ),
        (
            ["plan", "P", "--shards", "0"],
            "wt plan: error: argument --shards: expected a whole number of at least 1, got '0'",
        ),
        (
            ["run", "P", "--shard", "x"],
            "wt run: error: argument --shard: --shard expects i/N with 1 <= i <= N (e.g. 1/4), got 'x'",
        ),
        (
            ["run", "P", "-j", "0"],
            "wt run: error: argument -j/--jobs: expected auto or a number >= 1, got '0'",
        ),
        (
            ["run", "P", "-j", "many"],
            "wt run: error: argument -j/--jobs: expected auto or a number >= 1, got 'many'",
        ),
        (
            ["run", "P", "--executor", "spark"],
            "wt run: error: argument --executor: invalid choice: 'spark' (choose from 'local', 'ray')",
        ),
        (["merge", "D"], "wt merge: error: the following arguments are required: -o/--output"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed shard, job count or executor is one error line (after usage) and exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == message


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--shard", "1/2", "-j", "2"],
            "wt: error: --shard runs one shard here; it cannot be combined with -j or --executor",
        ),
        (
            ["-j", "2", "--feed-port", "0"],
            "wt: error: --feed-port serves one process's events; it cannot be combined with -j",
        ),
        (["--ray-address", "auto"], "wt: error: --ray-address needs --executor ray"),
    ],
)
def test_options_that_do_not_mix_exit_2(
    tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scale options that cannot be combined are refused before anything runs."""
    pack = scripted_pack(tmp_path, 1)
    assert main(["run", str(pack), "-o", str(tmp_path / "run"), *extra]) == 2
    assert capsys.readouterr().err.splitlines() == [message]
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_shards_then_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each `wt run --shard i/3` runs its units only; `wt merge` makes the whole run (exit 1)."""
    pack = scripted_pack(tmp_path, 4, repeats=2)
    dirs = [tmp_path / f"shard{i}" for i in (1, 2, 3)]
    codes = [
        main(["run", str(pack), "--shard", f"{i}/3", "-o", str(d), "--progress", "plain"])
        for i, d in zip((1, 2, 3), dirs, strict=True)
    ]
    assert codes == [1, 1, 1]
    all_ids = [f"lookup-{i:02d}#{r}" for i in range(4) for r in range(2)]
    for i, d in enumerate(dirs, 1):
        ran = sorted(t.unit_id for t in read_results(d, with_calls=False))
        assert ran == sorted(uid for uid in all_ids if shard_of(uid, 3) == i)
        assert json.loads((d / "shard.json").read_text())["shard"] == f"{i}/3"
    capsys.readouterr()
    assert main(["merge", *map(str, reversed(dirs)), "-o", str(tmp_path / "merged")]) == 1
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'merged'}\n"
    assert err.splitlines()[0] == (
        "scripted: merged shards 1/3, 2/3, 3/3: FAILED: 4 passed, 4 failed, 0 errors of 8; divergences 4"
    )
    merged = read_results(tmp_path / "merged")
    assert [t.unit_id for t in merged] == all_ids
    assert [t.status for t in merged] == ["failed"] * 2 + ["passed"] * 4 + ["failed"] * 2
    assert all(len(t.mcp_calls) == 1 for t in merged)
    assert (tmp_path / "merged" / "junit.xml").exists()
    events = (tmp_path / "merged" / "events.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["event"] == "scenario_finished" for line in events) == 8


def test_merge_refusals_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing shard or a shard given twice: one error line naming the unit ids, exit 2."""
    pack = scripted_pack(tmp_path, 3)
    dirs = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, d in enumerate(dirs, 1):
        main(["run", str(pack), "--shard", f"{i}/2", "-o", str(d), "--progress", "plain"])
    capsys.readouterr()
    second = [f"lookup-{i:02d}#0" for i in range(3) if shard_of(f"lookup-{i:02d}#0", 2) == 2]
    assert main(["merge", str(dirs[0]), "-o", str(tmp_path / "m1")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"wt: error: {len(second)} unit(s) of the plan are missing: {', '.join(second)}; "
        "shard(s) 2/2 not given"
    ]
    assert main(["merge", str(dirs[1]), str(dirs[1]), "-o", str(tmp_path / "m2")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"wt: error: shard 2/2 given twice: {dirs[1]} and {dirs[1]} "
        f"(units {', '.join(second)} ran twice)"
    ]
    assert main(["merge", str(dirs[0]), "--allow-missing", "-o", str(tmp_path / "m3")]) == 1
    assert capsys.readouterr().err.splitlines()[1] == (
        f"missing {len(second)} unit(s): {', '.join(second)}"
    )


def test_a_shard_directory_keeps_its_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resuming a shard directory as another shard (or another plan) is refused."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["run", str(pack), "--shard", "2/2", "-o", str(run), "--progress", "plain"]) == 1
    digest = json.loads((run / "shard.json").read_text())["plan_hash"][:12]
    capsys.readouterr()
    assert main(["run", str(pack), "--shard", "1/2", "-o", str(run), "--resume"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"wt: error: {run}: this run directory holds shard 2/2 of plan {digest}, not shard 1/2 "
        f"of plan {digest}; use another -o"
    ]
    assert (
        main(["run", str(pack), "--repeats", "2", "--shard", "2/2", "-o", str(run), "--resume"])
        == 2
    )
    other = plan_hash("scripted", [f"lookup-0{i}#{r}" for i in range(3) for r in range(2)])
    assert capsys.readouterr().err.splitlines() == [
        f"wt: error: {run}: this run directory holds shard 2/2 of plan {digest}, not shard 2/2 "
        f"of plan {other[:12]}; use another -o"
    ]
    assert main(["run", str(pack), "--shard", "2/2", "-o", str(run), "--resume"]) == 1
    assert len(read_results(run)) == 3
