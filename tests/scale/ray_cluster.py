"""A real two-node Ray cluster on this machine whose worker node cannot see our files.

- The head (`ray start --head --num-cpus 0`) runs no task: every task lands on the worker node.
- The worker node is started under `unshare --mount` with an empty tmpfs over the checkout and
  over `data/` (where the tests keep packs and run directories). Only what Wind Tunnel needs to
  be importable is mounted back into the checkout: the virtual environment the tests run in
  and, for an editable install, the package's source folder (`orchestrator/`). So `configs/`
  (the demo pack, its universes, its agent), `tests/` and every run directory are absent there,
  and the pack reaches the node only through Ray.
- Each node has a temporary directory of its own, both under a short base directory (Ray's
  Unix socket paths must stay under 108 bytes), and the cluster's token (Ray 2.60 turns token
  authentication on) is a file there, passed as `RAY_AUTH_TOKEN_PATH` with a `HOME` of its own,
  so nothing is shared with anybody else's Ray.
- Each node runs as PID 1's child in a PID namespace of its own (`unshare --pid --fork
  --kill-child`): killing the one `unshare` process we started ends every process of that node
  (`ray stop` would stop every Ray on the machine, others' too); `setpriv --pdeathsig KILL`
  does the same if the test process itself is killed.

`jobs_head` starts, the same way, a one-node cluster from a venv with `ray[default,client]`
whose dashboard (`ray job submit`) and Ray Client server (`ray://`) listen on ports of their own.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import windtunnel

CHECKOUT = Path(__file__).resolve().parents[2]
READY = "Ray runtime started."


@dataclass(frozen=True)
class TwoNodeCluster:
    address: str
    """The head's GCS address, `127.0.0.1:PORT`."""
    env: dict[str, str]
    """The environment of a driver (HOME and Ray's token settings added to ours)."""
    data: Path
    """A directory the worker node cannot see: packs and run directories go here."""
    base: Path
    """The cluster's own directory: node temp dirs, token, node logs."""


class _Node:
    """One `unshare ... ray start --block` process, its output copied to a log file; `ready`
    is set when Ray says the node started."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path, cwd: Path) -> None:
        self.log = log
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.reader = threading.Thread(target=self._copy, daemon=True)
        self.reader.start()

    def _copy(self) -> None:
        assert self.process.stdout is not None
        with open(self.log, "w", encoding="utf-8") as out:
            for line in self.process.stdout:
                out.write(line)
                out.flush()
                if READY in line:
                    self.ready.set()

    def wait_ready(self, deadline: float) -> None:
        while not self.ready.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic()))):
            if self.process.poll() is not None or time.monotonic() >= deadline:
                raise RuntimeError(f"a Ray node did not start; its log:\n{self.log.read_text()}")

    def stop(self) -> None:
        """SIGKILL to our `unshare`: `--kill-child` kills the namespace's PID 1, and with it
        the kernel kills every process of the node."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(timeout=30)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _visible_again() -> list[Path]:
    """What the worker node needs from the checkout: our venv and, for an editable install,
    the package's source root."""
    needed = [Path(sys.prefix).resolve(), Path(windtunnel.__file__).resolve().parents[1]]
    return [path for path in needed if CHECKOUT in path.parents]


def _worker_script(base: Path, data: Path, ray_start: list[str]) -> str:
    """A shell script for `unshare --mount`: hide the checkout and `data`, mount back what
    Wind Tunnel needs, then become the worker node."""
    lines = ["set -e"]
    stashes = []
    for i, path in enumerate(_visible_again()):
        stash = base / "stash" / str(i)
        stash.mkdir(parents=True)
        lines.append(f"mount --bind {shlex.quote(str(path))} {shlex.quote(str(stash))}")
        stashes.append((path, stash))
    lines.append(f"mount -t tmpfs wt-hidden {shlex.quote(str(CHECKOUT))}")
    lines.append(f"mount -t tmpfs wt-hidden {shlex.quote(str(data))}")
    for path, stash in stashes:
        lines.append(f"mkdir -p {shlex.quote(str(path))}")
        lines.append(f"mount --bind {shlex.quote(str(stash))} {shlex.quote(str(path))}")
    lines.append("exec " + shlex.join(ray_start))
    return "\n".join(lines)


def _cluster_env(base: Path) -> dict[str, str]:
    """Our environment plus a HOME of the cluster's own holding its fresh token file, the
    token settings pointing at it, and no `RAY_ADDRESS` inherited from whoever runs the tests."""
    token = base / "home" / ".ray" / "auth_token"
    token.parent.mkdir(parents=True)
    token.write_text(secrets.token_hex(32))
    env = {
        **os.environ,
        "HOME": str(base / "home"),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    env.pop("RAY_ADDRESS", None)
    return env


_COMMON = ["--node-ip-address", "127.0.0.1", "--disable-usage-stats", "--block"]
# `setpriv --pdeathsig`: should this test process die unannounced, its nodes go with it.
_PID_NAMESPACE = ["setpriv", "--pdeathsig", "KILL", "--"]
_PID_NAMESPACE += ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]


@contextmanager
def two_node_cluster(*, start_timeout_s: float = 240.0) -> Iterator[TwoNodeCluster]:
    """Start the head and the hidden worker node; stop both (and remove their files) after."""
    base = Path(tempfile.mkdtemp(prefix="wtray-"))
    data = base / "data"
    data.mkdir()
    env = _cluster_env(base)
    port = _free_port()
    ray = str(Path(sys.executable).parent / "ray")
    head_start = [ray, "start", "--head", "--port", str(port), "--num-cpus", "0"]
    head_start += ["--include-dashboard", "false", "--temp-dir", str(base / "h"), *_COMMON]
    worker_start = [ray, "start", "--address", f"127.0.0.1:{port}", "--num-cpus", "2"]
    worker_start += ["--temp-dir", str(base / "w"), *_COMMON]
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, base, ignore_errors=True)
        deadline = time.monotonic() + start_timeout_s
        head = _Node([*_PID_NAMESPACE, *head_start], env, base / "head.log", base)
        stack.callback(head.stop)
        head.wait_ready(deadline)
        script = _worker_script(base, data, worker_start)
        worker = _Node(
            [*_PID_NAMESPACE, "--propagation", "private", "sh", "-c", script],
            env,
            base / "worker.log",
            base,
        )
        stack.callback(worker.stop)
        worker.wait_ready(deadline)
        yield TwoNodeCluster(address=f"127.0.0.1:{port}", env=env, data=data, base=base)


@dataclass(frozen=True)
class JobsHead:
    """A one-node cluster with the two ways in that a driver on the head does not use."""

    dashboard: str
    """`http://127.0.0.1:PORT`: the dashboard, where `ray job submit` sends jobs."""
    client: str
    """`ray://127.0.0.1:PORT`: the Ray Client server."""
    env: dict[str, str]
    """The environment of `ray job submit` or a Ray Client driver: the token, and the venv's
    `bin` first on PATH (so a job's `wt` entrypoint is the venv's)."""
    base: Path
    """The cluster's own directory: node temp dir, token, log; packs and run directories."""


@contextmanager
def jobs_head(venv: Path, *, start_timeout_s: float = 240.0) -> Iterator[JobsHead]:
    """Start a head (2 CPUs) from `venv` (one with `ray[default,client]`) with its dashboard
    and Ray Client server on ports of their own; stop it (and remove its files) after.

    One node is enough here: what these tests prove is the way in (a job's entrypoint, a Ray
    Client driver), while tests/scale/test_ray_cluster.py already proves that a node without
    our files runs the shipped tree."""
    base = Path(tempfile.mkdtemp(prefix="wtrayj-"))
    env = _cluster_env(base)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    # Ray 2.60's Ray Client server forks a server per session (fork + exec) from a process busy
    # with gRPC; with gRPC's fork handlers on, that child now and then aborts (ev_epoll1_linux
    # "Check failed: next_worker->state == KICKED", 3 times out of 4 here under load) and the
    # driver gets "Initialization failure from server". gRPC's own advice for fork + exec is
    # to turn the handlers off (docs/scale.md tells users the same).
    env["GRPC_ENABLE_FORK_SUPPORT"] = "false"
    # The dashboard's agent would take fixed default ports another Ray on the machine may hold.
    port, dashboard, client, agent_http, agent_grpc = (_free_port() for _ in range(5))
    start = [str(venv / "bin" / "ray"), "start", "--head", "--port", str(port)]
    start += ["--num-cpus", "2", "--temp-dir", str(base / "h"), *_COMMON]
    start += ["--include-dashboard", "true", "--dashboard-host", "127.0.0.1"]
    start += ["--dashboard-port", str(dashboard), "--ray-client-server-port", str(client)]
    start += ["--dashboard-agent-listen-port", str(agent_http)]
    start += ["--dashboard-agent-grpc-port", str(agent_grpc)]
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, base, ignore_errors=True)
        head = _Node([*_PID_NAMESPACE, *start], env, base / "head.log", base)
        stack.callback(head.stop)
        head.wait_ready(time.monotonic() + start_timeout_s)
        yield JobsHead(
            dashboard=f"http://127.0.0.1:{dashboard}",
            client=f"ray://127.0.0.1:{client}",
            env=env,
            base=base,
        )
