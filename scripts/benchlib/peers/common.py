"""What the peers benchmark's parts share: peers' venvs, server processes, recordings, clients."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..measure import turns
from ..targets import (
    CALL_ARGS,
    EXPECTED,
    TOOL,
)

NAME = "peers"
HELP = "SDK client end to end over stdio and HTTP: our server vs peer replay tools vs a ceiling"

CACHE = (
    Path(os.environ.get("WINDTUNNEL_BENCH_CACHE", Path.home() / ".cache" / "windtunnel-bench"))
    / "peers"
)
ROOT = Path(__file__).resolve().parents[3]
ERAS = ("legacy", "auto")
WARMUP = 5
BLOCK = 25  # calls a server makes before the next one in its group takes its turn
TARGETS = {"stdio": 0.85, "http": 0.80}
_TRANSPORT_NAMES = {"stdio": "stdio", "http": "Streamable HTTP"}


@dataclass(frozen=True)
class Peer:
    name: str
    requirements: tuple[str, ...]
    python: str = "3.11"  # the minimum


def _find_python(version: str) -> str | None:
    if version == "3.11":
        return shutil.which("python3.11") or shutil.which("python3")
    found = shutil.which(f"python{version}")
    if found:
        probe = subprocess.run([found, "-V"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return found
    candidates = sorted(
        glob.glob(str(Path.home() / f".pyenv/versions/{version}*/bin/python{version}"))
    )
    return candidates[-1] if candidates else None


def ensure_peer(peer: Peer, *, install: bool) -> tuple[Path | None, str]:
    """The peer's venv bin dir, creating it if allowed; else None and why."""
    venv = CACHE / peer.name
    marker = venv / ".installed"
    if marker.exists():
        return venv / "bin", "cached"
    if not install:
        return None, f"not installed in {venv} (quick mode does not install peers)"
    python = _find_python(peer.python)
    if python is None:
        return None, f"needs Python ≥ {peer.python}, none found"
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [python, "-m", "venv", str(venv)],
        [str(venv / "bin/pip"), "install", "-q", *peer.requirements],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=600)
        if done.returncode != 0:
            return None, f"`{' '.join(step[-3:])}` failed: {done.stderr.strip()[-300:]}"
    marker.write_text(" ".join(peer.requirements))
    return venv / "bin", "installed"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}: {_tail(proc)}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"port {port} never opened")


def _tail(proc: subprocess.Popen[Any]) -> str:
    """The end of what the process wrote to stderr (a file: a pipe nobody drains would fill
    up and block a server that logs every call, `wt serve` included)."""
    errfile = getattr(proc, "errfile", None)
    if errfile is None:
        return ""
    errfile.seek(0)
    text: str = errfile.read().decode("utf-8", errors="replace")
    return text.strip().replace("\n", " ")[-300:]


def _stop(proc: subprocess.Popen[Any]) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
    for stream in (proc.stdout, proc.stderr, proc.stdin, getattr(proc, "errfile", None)):
        if stream is not None:
            stream.close()


def _spawn(
    cmd: list[str],
    *,
    stdout_url: bool = False,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[str]:
    errfile = tempfile.TemporaryFile()  # noqa: SIM115  # closed by _stop
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE if stdout_url else subprocess.DEVNULL,
        stderr=errfile,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    proc.errfile = errfile  # type: ignore[attr-defined]
    return proc


# -- how a configuration is reached ------------------------------------------------------------


@dataclass
class Config:
    """One row: a server on one transport, for one era."""

    name: str
    transport: str  # "stdio" | "http"
    era: str
    label: str
    stdio: tuple[str, list[str], dict[str, str]] | None = None
    start_http: Callable[[], tuple[subprocess.Popen[str], str]] | None = None
    sse: bool = False
    failure: str | None = None
    notes: list[str] = field(default_factory=list)


def _our_python() -> tuple[str, dict[str, str]]:
    return sys.executable, {"PYTHONPATH": str(ROOT / "orchestrator")}


def _http_from_stdout(
    cmd: list[str], env: dict[str, str] | None = None
) -> Callable[[], tuple[subprocess.Popen[str], str]]:
    def start() -> tuple[subprocess.Popen[str], str]:
        proc = _spawn(cmd, stdout_url=True, env=env)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("http"):
            _stop(proc)
            raise RuntimeError(f"no URL on stdout: {line!r} {_tail(proc)}")
        return proc, line.split()[-1]

    return start


def _http_on_port(
    command: list[str], path: str, env: dict[str, str] | None = None
) -> Callable[[], tuple[subprocess.Popen[str], str]]:
    """Start `command --port PORT` on a free port (every peer takes `--port` last)."""

    def start() -> tuple[subprocess.Popen[str], str]:
        port = _free_port()
        proc = _spawn([*command, "--port", str(port)], env=env)
        try:
            _wait_port(port, proc)
        except Exception:
            _stop(proc)
            raise
        return proc, f"http://127.0.0.1:{port}{path}"

    return start


# -- the client side ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _client(config: Config, target: str | None) -> AsyncIterator[Any]:
    import mcp
    from mcp.client.stdio import StdioServerParameters

    if config.stdio is not None:
        command, args, env = config.stdio
        server: Any = StdioServerParameters(command=command, args=args, env={**os.environ, **env})
    elif config.sse:
        from mcp.client.sse import sse_client

        server = sse_client(target)  # type: ignore[arg-type]
    else:
        server = target
    async with mcp.Client(server, mode=config.era, read_timeout_seconds=20) as client:
        yield client


def _check(result: Any) -> None:
    structured = getattr(result, "structured_content", None)
    if structured is None:
        blocks = [b for b in result.content if getattr(b, "type", None) == "text"]
        structured = json.loads(blocks[0].text) if blocks else None
    if structured != EXPECTED or getattr(result, "is_error", False):
        raise RuntimeError(f"unexpected result: {result!r}"[:300])


@contextlib.asynccontextmanager
async def _connected(config: Config) -> AsyncIterator[tuple[Any, float]]:
    """(client, connect seconds) for `config`'s server, listed and warmed up; stopped after."""
    proc = None
    target = None
    try:
        if config.start_http is not None:
            proc, target = await trio.to_thread.run_sync(config.start_http)
            if config.sse:
                target = target.rsplit("/", 1)[0] + "/sse"
        start = time.perf_counter()
        with trio.fail_after(60):
            async with _client(config, target) as client:
                await client.list_tools()
                connect = time.perf_counter() - start
                for _ in range(WARMUP):
                    _check(await client.call_tool(TOOL, CALL_ARGS))
                yield client, connect
    finally:
        if proc is not None:
            await trio.to_thread.run_sync(_stop, proc)


async def _measure_together(
    configs: list[Config], calls: int, repeat: int
) -> dict[str, dict[str, float] | str]:
    """The servers of one transport and era side by side, each with its own connected client,
    taking turns `BLOCK` calls at a time until each has made `calls`: a burst of background
    load on this shared machine falls on all of them alike, so their ratios hold. Returns
    each server's figures, or the reason it failed (the others carry on)."""
    out: dict[str, dict[str, float] | str] = {}
    live: list[tuple[Config, Any, float]] = []
    spent: dict[str, float] = {}
    try:
        async with contextlib.AsyncExitStack() as stack:
            for config in turns(configs, repeat):
                try:
                    client, connect = await stack.enter_async_context(_connected(config))
                except Exception as exc:  # a measured failure is a row
                    out[_key(config)] = _describe(exc)
                    continue
                live.append((config, client, connect))
                spent[_key(config)] = 0.0
            for block, done in enumerate(range(0, calls, BLOCK)):
                for config, client, _ in turns(live, block):
                    key = _key(config)
                    if key in out:
                        continue
                    try:
                        t0 = time.perf_counter()
                        with trio.fail_after(60):
                            for _ in range(min(BLOCK, calls - done)):
                                _check(await client.call_tool(TOOL, CALL_ARGS))
                        spent[key] += time.perf_counter() - t0
                    except Exception as exc:
                        out[key] = _describe(exc)
    except Exception as exc:  # closing a client whose server failed: keep the first reason
        for config, _, _ in live:
            out.setdefault(_key(config), _describe(exc))
    for config, _, connect in live:
        key = _key(config)
        if key not in out:
            wall = spent[key]
            out[key] = {
                "per_s": calls / wall,
                "us_per_call": wall / calls * 1e6,
                "connect_s": connect,
            }
    return out


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return text[:220]


# -- recordings through each peer's own recorder -----------------------------------------------


async def _drive(server: Any, era: str, calls: int) -> None:
    import mcp

    async with mcp.Client(server, mode=era, read_timeout_seconds=20) as client:
        await client.list_tools()
        for _ in range(calls):
            _check(await client.call_tool(TOOL, CALL_ARGS))


def _wt_stdio(universe: Path) -> list[str]:
    return ["-m", "windtunnel", "serve", "--stdio", str(universe)]


async def _record_stdio(command: str, args: list[str], era: str, calls: int) -> None:
    from mcp.client.stdio import StdioServerParameters

    _, env = _our_python()
    params = StdioServerParameters(
        command=command, args=args, env={**os.environ, **env, "MCP_REC_NO_NOTICE": "1"}
    )
    with trio.fail_after(120):
        await _drive(params, era, calls)


async def _record_http(
    proxy_cmd: list[str],
    port: int,
    era: str,
    calls: int,
    upstream: subprocess.Popen[str] | None,
    cwd: Path,
) -> None:
    proxy = _spawn(proxy_cmd, cwd=cwd)
    try:
        await trio.to_thread.run_sync(_wait_port, port, proxy)
        with trio.fail_after(120):
            await _drive(f"http://127.0.0.1:{port}/mcp", era, calls)
    finally:
        # SIGINT is how both recorders are told to write their file.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proxy.pid, signal.SIGINT)
        try:
            await trio.to_thread.run_sync(lambda: proxy.wait(timeout=15))
        except subprocess.TimeoutExpired:
            _stop(proxy)
        proxy.errfile.close()  # type: ignore[attr-defined]


@dataclass
class Preparing:
    """What each peer's `prepare` gets: where to record, what to record from, where rows go."""

    work: Path
    universe: Path
    python: str
    our_env: dict[str, str]
    record_calls: int
    configs: list[Config]
    recordings: dict[str, dict[str, Path]] = field(default_factory=dict)
    """Recordings one peer made that another builds on (agent-vcr reads mcp-rec's logs)."""

    def failed(self, name: str, transport: str, label: str, why: str) -> None:
        for era in ERAS:
            self.configs.append(Config(name, transport, era, label, failure=why))


def _key(c: Config) -> str:
    return f"{c.transport}/{c.era}/{c.name}"
