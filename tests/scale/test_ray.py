"""The Ray executor on a real local Ray instance: shards as Ray tasks, merged like local runs."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from tests.scale.packs import scripted_pack
from tests.scale.test_parallel import verdicts
from windtunnel.cli.main import main
from windtunnel.runner.progress import Progress
from windtunnel.scale.ray_executor import RayShardOutcome, ShardJob, run_ray_shards
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
    """A shard whose task raises comes back as not finished, with the task's error message."""
    missing = tmp_path / "gone.toml"
    job = ShardJob(pack=str(missing), shard="1/1", cwd=str(tmp_path))
    progress = Progress(io.StringIO(), live=False)
    interrupted, outcomes = run_ray_shards([(job, tmp_path / "shard")], progress)
    assert interrupted is False
    assert outcomes == [
        RayShardOutcome(
            ShardSpec(1, 1),
            finished=False,
            error=f"{missing}: no such file",
        )
    ]
    assert not (tmp_path / "shard").exists()
