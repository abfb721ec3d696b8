"""`wt run --executor ray` the two other ways Ray users reach a cluster: as a job sent with
`ray job submit` to the dashboard, and as a driver outside the cluster through Ray Client
(`--ray-address ray://...`). Both need `ray[default,client]`, which lives in its own venv
(`.venvs/ray-jobs`, tests/requirements/ray-jobs.txt); the head is started once for the module
from that venv (tests/scale/ray_cluster.py) and killed, with every process it started, at the
end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scale.packs import DEMO
from tests.scale.ray_cluster import CHECKOUT, JobsHead, jobs_head
from tests.scale.test_parallel import verdicts
from tests.thirdparty import thirdparty_python
from windtunnel.cli.main import main

pytestmark = pytest.mark.skipif(
    not (shutil.which("unshare") and shutil.which("setpriv")) or os.geteuid() != 0,
    reason="a Ray node in a PID namespace of its own needs unshare(1), setpriv(1) and root",
)


@pytest.fixture(scope="module")
def venv() -> Path:
    return thirdparty_python("ray-jobs").parent.parent


@pytest.fixture(scope="module")
def head(venv: Path) -> Iterator[JobsHead]:
    with jobs_head(venv) as started:
        yield started


@pytest.fixture(scope="module")
def local(head: JobsHead) -> tuple[int, list[tuple[Any, ...]]]:
    """The demo pack run here, without Ray: its exit code and verdicts."""
    run_dir = head.base / "local"
    code = main(["run", str(DEMO), "-o", str(run_dir), "--progress", "plain"])
    return code, verdicts(run_dir)


def _merged_from_two_shards(run_dir: Path) -> None:
    merge = json.loads((run_dir / "merge.json").read_text())
    assert (merge["merged"], merge["missing"]) == (["1/2", "2/2"], [])


@pytest.mark.timeout(300)
def test_a_job_sent_with_ray_job_submit_gives_the_local_verdicts(
    head: JobsHead, venv: Path, local: tuple[int, list[tuple[Any, ...]]]
) -> None:
    """`ray job submit --address http://HOST:DASHBOARD --working-dir . -- wt run
    configs/demo/pack.toml --executor ray -j 2 -o ABS`, as docs/scale.md gives it: Ray copies
    the working directory to the head, runs the entrypoint there with `RAY_ADDRESS` set, and the
    run written to the absolute `-o` decides every unit as the local run does, and the job
    succeeds as `wt` did."""
    code, expected = local
    project = head.base / "project"
    shutil.copytree(DEMO.parent, project / "configs" / "demo")
    run_dir = head.base / "job-run"
    entrypoint = ["wt", "run", "configs/demo/pack.toml", "--executor", "ray", "-j", "2"]
    entrypoint += ["-o", str(run_dir), "--progress", "plain"]
    submit = [str(venv / "bin" / "ray"), "job", "submit", "--address", head.dashboard]
    done = subprocess.run(
        [*submit, "--submission-id", "wt-demo", "--working-dir", ".", "--", *entrypoint],
        cwd=project,
        env=head.env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    output = done.stdout + done.stderr
    assert (code, done.returncode) == (0, 0), output
    assert "Job 'wt-demo' succeeded" in output
    assert verdicts(run_dir) == sorted(expected)
    assert len(expected) == 3
    _merged_from_two_shards(run_dir)


@pytest.mark.timeout(300)
def test_a_ray_client_driver_gives_the_local_verdicts(
    head: JobsHead, venv: Path, local: tuple[int, list[tuple[Any, ...]]]
) -> None:
    """`wt run configs/demo/pack.toml --executor ray --ray-address ray://HOST:10001 -j 2`: the
    driver joins through Ray Client, the shipped tree goes into the object store through it,
    and the run gives the local verdicts and exit code."""
    code, expected = local
    run_dir = head.base / "client-run"
    args = ["run", str(DEMO), "--executor", "ray", "--ray-address", head.client, "-j", "2"]
    args += ["-o", str(run_dir), "--progress", "plain"]
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "windtunnel", *args],
        cwd=CHECKOUT,
        env=head.env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == code, done.stderr
    assert verdicts(run_dir) == sorted(expected)
    _merged_from_two_shards(run_dir)
