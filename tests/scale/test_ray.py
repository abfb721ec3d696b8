"""The Ray executor on a real local Ray instance: shards as Ray tasks, merged like local runs."""

from __future__ import annotations

import io
import json
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from tests.runner.test_fault_runs import OUTCOMES_PACK, write_pack
from tests.scale.packs import scripted_pack
from tests.scale.test_parallel import verdicts
from windtunnel.cli.main import main
from windtunnel.faults.spec import draw
from windtunnel.rundir.results import read_results
from windtunnel.runner.progress import Progress
from windtunnel.runner.trace import Trace
from windtunnel.runner.units import unit_seed
from windtunnel.scale.local import parse_progress_line
from windtunnel.scale.ray_executor import ShardJob, run_ray_shards
from windtunnel.scale.ray_ship import ShippedPack
from windtunnel.scale.shards import ShardSpec, shard_of


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance with 2 CPUs, started for these tests and shut down after them."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.timeout(180)
def test_ray_run_equals_the_local_run(
    tmp_path: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--executor ray -j 3` runs each shard as a Ray task; the merged run equals `-j 1`'s."""
    pack = scripted_pack(tmp_path, 6, repeats=2)
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(["run", str(pack), "-o", str(local), "--progress", "plain"]) == 1
    capsys.readouterr()
    argv = [
        "run",
        str(pack),
        "--executor",
        "ray",
        "-j",
        "3",
        "-o",
        str(on_ray),
        "--progress",
        "plain",
    ]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert verdicts(on_ray) == sorted(verdicts(local))
    assert out == f"{on_ray}\n"
    assert (
        err.splitlines()[-2]
        == "scripted: FAILED: 8 passed, 4 failed, 0 errors of 12; divergences 4"
    )
    merge = json.loads((on_ray / "merge.json").read_text())
    assert (merge["merged"], merge["missing"]) == (["1/3", "2/3", "3/3"], [])
    for i in (1, 2, 3):
        shard = json.loads((on_ray / "shards" / f"{i}-of-3" / "shard.json").read_text())
        assert shard["units"] == [uid for uid in shard["plan"] if shard_of(uid, 3) == i]
    local_summary = json.loads((local / "summary.json").read_text())
    ray_summary = json.loads((on_ray / "summary.json").read_text())
    assert {k: v["pass_hat_k"] for k, v in ray_summary["scenarios"].items()} == {
        k: v["pass_hat_k"] for k, v in local_summary["scenarios"].items()
    }


@pytest.mark.timeout(120)
def test_ray_auto_uses_the_cluster_cpus(
    tmp_path: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--executor ray` with `-j auto` (the default) cuts one shard per Ray CPU: 2 here."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["run", str(pack), "--executor", "ray", "-o", str(run), "--progress", "plain"]) == 1
    assert sorted(p.name for p in (run / "shards").iterdir()) == ["1-of-2", "2-of-2"]
    assert json.loads((run / "summary.json").read_text())["total"] == 3


@pytest.mark.timeout(120)
def test_a_failing_task_is_reported_per_shard(tmp_path: Path, local_ray: None) -> None:
    """A shard whose task raises comes back as not finished, with the task's error message
    (here: the shipped tree lacks the pack it names)."""
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "other.txt").write_text("not a pack")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as tree:
        tree.write(tmp_path / "tree" / "other.txt", "other.txt")
    job = ShardJob(pack=ShippedPack(pack="gone.toml"), shard="1/1")
    progress = Progress(io.StringIO(), live=False)
    interrupted, outcomes = run_ray_shards(
        [(job, tmp_path / "shard")], archive.getvalue(), progress
    )
    assert interrupted is False
    [outcome] = outcomes
    assert (outcome.spec, outcome.finished) == (ShardSpec(1, 1), False)
    assert outcome.error is not None
    assert re.fullmatch(r"/\S+/windtunnel-ray-\w+/tree/gone\.toml: no such file", outcome.error)
    assert not (tmp_path / "shard").exists()


def _unit_ids(results: Path) -> list[str]:
    """The units of a results file's whole lines (a torn last line is not a finished unit)."""
    lines = results.read_bytes().split(b"\n")[:-1]
    return [json.loads(line)["unit_id"] for line in lines]


@pytest.mark.timeout(180)
def test_ray_resume_runs_only_the_unfinished_units(
    tmp_path: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--resume` on Ray: a finished shard is not sent again, a shard cut short runs only its
    missing units, and the merged run equals the uninterrupted one. `-j auto` keeps the
    resumed run's 3 shards, though the cluster has 2 CPUs."""
    pack = scripted_pack(tmp_path, 6, repeats=2)
    run = tmp_path / "run"
    argv = ["run", str(pack), "--executor", "ray", "-o", str(run), "--progress", "plain"]
    assert main([*argv, "-j", "3"]) == 1
    whole = verdicts(run)
    first = {t.unit_id: t.started_at for t in read_results(run, with_calls=False)}
    # What an interrupted run leaves: shard 3's task never returned, and shard 2 (as a local
    # worker killed mid-shard leaves it: the same layout) holds one unit and a torn line.
    shards = run / "shards"
    shutil.rmtree(shards / "3-of-3")
    cut = shards / "2-of-3" / "results.jsonl"
    lines = cut.read_bytes().splitlines(keepends=True)
    assert len(lines) > 1
    cut.write_bytes(lines[0] + lines[1][:20])
    kept = set(_unit_ids(shards / "1-of-3" / "results.jsonl")) | set(_unit_ids(cut))
    finished_shard = (shards / "1-of-3" / "results.jsonl").stat().st_ino
    capsys.readouterr()

    assert main([*argv, "--resume"]) == 1

    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"resuming: {len(kept)} unit(s) already finished, {12 - len(kept)} to run"
    ran = {stub.unit_id for line in err if (stub := parse_progress_line(line)) is not None}
    assert ran == set(first) - kept
    assert sorted(p.name for p in shards.iterdir()) == ["1-of-3", "2-of-3", "3-of-3"]
    assert (shards / "1-of-3" / "results.jsonl").stat().st_ino == finished_shard  # not rewritten
    assert verdicts(run) == whole
    again = {t.unit_id: t.started_at for t in read_results(run, with_calls=False)}
    assert {uid: again[uid] for uid in kept} == {uid: first[uid] for uid in kept}
    assert all(again[uid] != first[uid] for uid in ran)
    merge = json.loads((run / "merge.json").read_text())
    assert (merge["merged"], merge["missing"]) == (["1/3", "2/3", "3/3"], [])


@pytest.mark.timeout(120)
def test_ray_resume_refuses_another_plan(
    tmp_path: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resuming with options that change the plan (here `--repeats`) is refused before any task
    is sent, as a local shard refuses it: exit 2, the shard directories untouched."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    argv = ["run", str(pack), "--executor", "ray", "-j", "2", "-o", str(run)]
    assert main([*argv, "--progress", "plain"]) == 1
    before = {p: p.read_bytes() for p in sorted((run / "shards").rglob("*")) if p.is_file()}
    capsys.readouterr()
    assert main([*argv, "--resume", "--repeats", "2"]) == 2
    [message] = capsys.readouterr().err.splitlines()
    # Shard 1 of these two owns no unit (by the plan's hash), so only shard 2 holds results.
    assert re.fullmatch(
        rf"wt: error: {re.escape(str(run / 'shards' / '2-of-2'))}: this run directory holds "
        r"shard 2/2 of plan [0-9a-f]{12}, not shard 2/2 of plan [0-9a-f]{12}; use another -o",
        message,
    )
    assert {p: p.read_bytes() for p in sorted((run / "shards").rglob("*")) if p.is_file()} == before


def faulted(run_dir: Path) -> list[tuple[Any, ...]]:
    """Per unit: its status, verdicts, the agent's output (what its client saw), each call
    with the fault evidence it carries, and each declared fault's count."""

    def row(t: Trace) -> tuple[Any, ...]:
        calls = [(c.tool_name, c.result, c.extra.get("injected_fault")) for c in t.mcp_calls]
        declared = [(f.fault, f.injected) for f in t.faults]
        return (t.unit_id, t.status, t.verdicts, t.output, calls, declared)

    return [row(t) for t in read_results(run_dir)]


@pytest.mark.timeout(240)
def test_faults_on_ray_equal_the_local_run(
    tmp_path: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack's scenario faults and `wt run --fault` reach the Ray tasks: the same units pass,
    fail and are `invalid`, with the same faulted calls and evidence (a fraction drawn from
    each unit's seed included), as in a local run; the exit code and summary line agree."""
    pack = write_pack(tmp_path / "pack.toml", "faulted", OUTCOMES_PACK[:3])
    extra = ["--fault", "client_lookup@0.5=delay:0.01", "--progress", "plain"]
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(["run", str(pack), "-o", str(local), *extra]) == 1
    local_err = capsys.readouterr().err
    ray_args = ["--executor", "ray", "-j", "2"]
    assert main(["run", str(pack), "-o", str(on_ray), *ray_args, *extra]) == 1
    ray_err = capsys.readouterr().err
    assert sorted(faulted(on_ray)) == sorted(faulted(local))
    rows = {row[0]: row for row in faulted(on_ray)}
    # `fabricates` answers every lookup with its own error first, so `--fault` never fires there.
    assert {uid: row[1] for uid, row in rows.items()} == {
        "retries#0": "passed",
        "fabricates#0": "invalid",
        "never-reached#0": "invalid",
    }
    drawn = {
        (uid, e["call_number"])
        for uid, row in rows.items()
        for _, _, e in row[4]
        if e is not None and e["id"] == "client_lookup@0.5=delay:0.01"
    }
    lookups = {
        (uid, n)
        for uid, row in rows.items()
        for n in range(1, 1 + sum(tool == "client_lookup" for tool, _, _ in row[4]))
        if (uid, n) != ("retries#0", 1) and uid != "fabricates#0"
    }
    assert drawn == {
        (uid, n) for uid, n in lookups if draw(unit_seed(uid), uid, "client_lookup", n) < 0.5
    }
    summary = [line for line in local_err.splitlines() if line.startswith("faulted: ")]
    assert len(summary) == 1
    assert summary[0] in ray_err.splitlines()
