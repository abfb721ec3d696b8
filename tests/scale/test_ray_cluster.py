"""`wt run --executor ray` on a real two-node Ray cluster whose worker node cannot see our files:
the pack, its universes and its agent reach the worker only through Ray (tests/scale/ray_cluster.py
starts it once for this module; every process it starts is killed at the end)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scale.packs import CRM, DEMO, scripted_pack
from tests.scale.ray_cluster import CHECKOUT, TwoNodeCluster, two_node_cluster
from tests.scale.test_parallel import verdicts
from windtunnel.cli.main import main

pytestmark = pytest.mark.skipif(
    not (shutil.which("unshare") and shutil.which("setpriv")) or os.geteuid() != 0,
    reason="hiding the checkout from a Ray node needs unshare(1), setpriv(1) and root",
)

_PROBE = """
import json, os, sys
import ray
ray.init(address=sys.argv[1], log_to_driver=False)
head = ray.get_runtime_context().get_node_id()

@ray.remote(num_cpus=1)
def look(paths):
    import windtunnel
    return {
        "node": ray.get_runtime_context().get_node_id(),
        "seen": {path: os.path.exists(path) for path in paths},
        "windtunnel": os.path.exists(windtunnel.__file__),
    }

print(json.dumps({"head": head, **ray.get(look.remote(sys.argv[2:]))}))
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[TwoNodeCluster]:
    with two_node_cluster() as started:
        yield started


def _wt(cluster: TwoNodeCluster, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`wt ARGS` as its own process (a driver on the head's machine): exit code and stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "windtunnel", *args],
        cwd=CHECKOUT,
        env=env or cluster.env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    return done.returncode, done.stderr


@pytest.mark.timeout(600)
def test_the_worker_node_cannot_see_the_pack_or_the_run(cluster: TwoNodeCluster) -> None:
    """The point of the cluster: a task on the worker node (the only node with CPUs) finds
    neither the demo pack, nor its agent, nor the driver's data directory; Wind Tunnel itself
    imports there."""
    marker = cluster.data / "marker"
    marker.write_text("here on the driver")
    agent = DEMO.parent / "agents" / "support_agent.py"
    paths = [str(DEMO), str(agent), str(marker)]
    assert all(Path(p).exists() for p in paths)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, cluster.address, *paths],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["node"] != seen["head"]
    assert seen["seen"] == dict.fromkeys(paths, False)
    assert seen["windtunnel"] is True


@pytest.mark.timeout(900)
def test_the_demo_pack_on_the_cluster_gives_the_local_verdicts(
    cluster: TwoNodeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt run configs/demo/pack.toml --executor ray --ray-address HOST:PORT -j 2`: both shards
    run on the worker node from the shipped tree (the pack, its four universes, the command
    agent's script) and the merged run decides every unit as a local run does."""
    local, on_ray = cluster.data / "demo-local", cluster.data / "demo-ray"
    code = main(["run", str(DEMO), "-o", str(local), "--progress", "plain"])
    capsys.readouterr()
    args = ["run", str(DEMO), "--executor", "ray", "--ray-address", cluster.address, "-j", "2"]
    returncode, err = _wt(cluster, *args, "-o", str(on_ray), "--progress", "plain")
    assert returncode == code, err
    assert verdicts(on_ray) == sorted(verdicts(local))
    assert len(verdicts(on_ray)) == 3
    merge = json.loads((on_ray / "merge.json").read_text())
    assert (merge["merged"], merge["missing"]) == (["1/2", "2/2"], [])
    for shard in ("1-of-2", "2-of-2"):
        assert json.loads((on_ray / "shards" / shard / "shard.json").read_text())["units"]


@pytest.mark.timeout(900)
def test_universes_outside_the_tree_travel_and_resume_works(
    cluster: TwoNodeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack naming one universe by an absolute path (in the hidden checkout) and one by
    `../` runs on the cluster with the local verdicts; then, with one shard's directory gone,
    `--resume` through `RAY_ADDRESS` (as `ray job submit` gives its entrypoint) sends only that
    shard and merges the same run again."""
    shared = cluster.data / "shared"
    shared.mkdir()
    shutil.copy(CRM, shared / "crm.universe.json")
    tree = cluster.data / "pack"
    tree.mkdir()
    extra = (
        '[[scenario]]\nname = "relative"\ntask = "look up a client"\n'
        'upstreams = { crm = "../shared/crm.universe.json" }\n'
        '[[scenario.policies]]\nkind = "no_divergence"\n'
        '[[scenario.plan]]\ntool = "client_lookup"\nargs = { query = "Bluewing Logistics" }\n'
        '[scenario.scripted]\nfinal_answer = "done"\n'
    )
    pack = scripted_pack(tree, 4, repeats=2, extra=extra)
    local, on_ray = cluster.data / "mixed-local", cluster.data / "mixed-ray"
    code = main(["run", str(pack), "-o", str(local), "--progress", "plain"])
    capsys.readouterr()
    args = ["run", str(pack), "--executor", "ray", "-j", "2", "-o", str(on_ray)]
    returncode, err = _wt(cluster, *args, "--ray-address", cluster.address, "--progress", "plain")
    assert returncode == code == 1, err
    whole = verdicts(on_ray)
    assert whole == sorted(verdicts(local))
    assert len(whole) == 10

    shutil.rmtree(on_ray / "shards" / "2-of-2")
    returncode, err = _wt(
        cluster, *args, "--resume", env={**cluster.env, "RAY_ADDRESS": cluster.address}
    )
    assert returncode == 1, err
    assert verdicts(on_ray) == whole
    kept = json.loads((on_ray / "shards" / "1-of-2" / "shard.json").read_text())["units"]
    assert err.splitlines()[0] == (
        f"resuming: {len(kept)} unit(s) already finished, {10 - len(kept)} to run"
    )
