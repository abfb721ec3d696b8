"""`scripts/bench peers`: end to end as an agent sees it, against the peer replay tools (#8).

N sequential `tools/call` through the official Python SDK client (`mcp.Client`, both the
`initialize` handshake, `mode="legacy"`, and the default `mode="auto"`, the 2026-07-28 era), over
stdio and over HTTP, against:

- a **ceiling** per transport: canned bytes, no SDK (`target_server.py stdio-canned` / `http-raw`),
  answering each method with the bytes our server sends for it;
- our server, as users run it: `wt serve --stdio FILE` and `wt serve FILE`;
- the peers on PyPI, each in its own scratch venv under `~/.cache/windtunnel-bench/peers` (made
  on demand, never committed): mcp-rec (stdio), mcp-cassette (stdio, Streamable HTTP; Python
  ≥ 3.12), agent-vcr (stdio, legacy HTTP+SSE), mcp-recorder (Streamable HTTP; starlette 0.52.1).

Each peer serves the same one-tool recording, recorded *through the peer's own recorder* in front
of `wt serve` (agent-vcr's recorder hangs with pipe clients, so its cassette is built with its
own pydantic models from mcp-rec's wire log). Consume-once peers get enough recorded calls for a
whole measurement. Per round and per transport and era: start every server (HTTP) or let a
client spawn it (stdio), connect a client to each, `list_tools`, warm up; then the servers take
turns, 25 calls at a time, until each has made N, every result checked, each timed on its own
calls. Rounds rotate who goes first.
A configuration that cannot be installed, recorded or served is a row with the measured reason.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import glob
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from .measure import Spread, turns
from .report import BenchResult, finish_data, header, start_data
from .targets import (
    CALL_ARGS,
    EXPECTED,
    TARGET_SERVER,
    TOOL,
    capture_answers,
    write_weather_universe,
)

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "peers"
HELP = "SDK client end to end over stdio and HTTP: our server vs peer replay tools vs a ceiling"

CACHE = (
    Path(os.environ.get("WINDTUNNEL_BENCH_CACHE", Path.home() / ".cache" / "windtunnel-bench"))
    / "peers"
)
ROOT = Path(__file__).resolve().parents[2]
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


PEERS = {
    "mcp-rec": Peer("mcp-rec", ("mcp-rec",)),
    "mcp-cassette": Peer("mcp-cassette", ("mcp-cassette[http]",), python="3.12"),
    "agent-vcr": Peer("agent-vcr", ("agent-vcr",)),
    "mcp-recorder": Peer("mcp-recorder", ("mcp-recorder", "starlette==0.52.1")),
}


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


LOOPBACK_RECORDER = """\
import sys, uvicorn
_run = uvicorn.run
uvicorn.run = lambda app, *a, **k: _run(app, *a, **{**k, "host": "127.0.0.1"})
from mcp_recorder.cli import main
sys.argv[0] = "mcp-recorder"
sys.exit(main())
"""

AGENT_VCR_BUILD = """\
import json, sys
from datetime import datetime, timezone
from agent_vcr.core.format import (JSONRPCRequest, JSONRPCResponse, VCRInteraction, VCRMetadata,
                                   VCRRecording, VCRSession)
frames_path, init_path, out = sys.argv[1:4]
def pairs(path):
    requests, out = {}, []
    for line in open(path):
        frame = json.loads(line)["msg"]
        if "method" in frame and "id" in frame:
            requests[frame["id"]] = frame
        elif "id" in frame and frame["id"] in requests:
            out.append((requests.pop(frame["id"]), frame))
    return out
now = datetime.now(timezone.utc)
init_req, init_resp = next(p for p in pairs(init_path) if p[0]["method"] == "initialize")
seen, interactions = set(), []
for req, resp in [(init_req, init_resp)] + pairs(frames_path):
    key = json.dumps([req["method"], req.get("params")], sort_keys=True)
    if key in seen:
        continue  # reuse: one interaction per distinct request (agent-vcr's best case)
    seen.add(key)
    interactions.append(VCRInteraction(sequence=len(interactions), timestamp=now,
        direction="client_to_server", request=JSONRPCRequest(**req),
        response=JSONRPCResponse(**resp), latency_ms=1.0))
rec = VCRRecording(format_version="1.0.0",
    metadata=VCRMetadata(version="1.0.0", recorded_at=now, transport="stdio"),
    session=VCRSession(initialize_request=JSONRPCRequest(**init_req),
        initialize_response=JSONRPCResponse(**init_resp), capabilities={},
        interactions=interactions))
open(out, "w").write(rec.model_dump_json(indent=1))
"""


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


async def _prepare(
    work: Path, universe: Path, answers: Path, calls: int, install: bool, only: set[str] | None
) -> list[Config]:
    """Every configuration, with its recording made; failures recorded on the config."""
    python, our_env = _our_python()
    record_calls = calls + WARMUP + 10
    configs: list[Config] = []
    for era in ERAS:
        configs.append(
            Config(
                "ceiling",
                "stdio",
                era,
                "ceiling: canned-bytes stdio responder (no SDK)",
                stdio=(python, [str(TARGET_SERVER), "stdio-canned", str(answers)], {}),
            )
        )
        configs.append(
            Config(
                "windtunnel",
                "stdio",
                era,
                "Wind Tunnel `wt serve --stdio`",
                stdio=(python, _wt_stdio(universe), our_env),
            )
        )
        configs.append(
            Config(
                "ceiling",
                "http",
                era,
                "ceiling: minimal HTTP/1.1 responder (asyncio, no SDK)",
                start_http=_http_from_stdout(
                    [python, str(TARGET_SERVER), "http-raw", str(answers)]
                ),
            )
        )
        configs.append(
            Config(
                "windtunnel",
                "http",
                era,
                "Wind Tunnel `wt serve` (Streamable HTTP)",
                start_http=_http_from_stdout(
                    [python, "-m", "windtunnel", "serve", str(universe)], our_env
                ),
            )
        )

    bins: dict[str, Path | None] = {}
    reasons: dict[str, str] = {}
    for name, peer in PEERS.items():
        if only is not None and name not in only:
            bins[name], reasons[name] = None, "not selected (--peers)"
            continue
        bins[name], reasons[name] = await trio.to_thread.run_sync(
            functools.partial(ensure_peer, peer, install=install)
        )
        print(f"peers: {name}: {reasons[name]}", flush=True)

    def failed(name: str, transport: str, label: str, why: str) -> None:
        for era in ERAS:
            configs.append(Config(name, transport, era, label, failure=why))

    # mcp-rec: its stdio recorder in front of `wt serve --stdio`, one log per era.
    rec_bin = bins["mcp-rec"]
    rec_logs: dict[str, Path] = {}
    if rec_bin is None:
        failed("mcp-rec", "stdio", "mcp-rec replay", reasons["mcp-rec"])
    else:
        for era in ERAS:
            log = work / f"mcprec-{era}.jsonl"
            label = "mcp-rec replay (consume-once)"
            try:
                await _record_stdio(
                    str(rec_bin / "mcp-rec"),
                    ["record", "-o", str(log), "--", python, *_wt_stdio(universe)],
                    era,
                    record_calls,
                )
                rec_logs[era] = log
                configs.append(
                    Config(
                        "mcp-rec",
                        "stdio",
                        era,
                        label,
                        stdio=(
                            str(rec_bin / "mcp-rec"),
                            ["replay", str(log)],
                            {"MCP_REC_NO_NOTICE": "1"},
                        ),
                    )
                )
            except Exception as exc:  # a row with the reason
                configs.append(
                    Config(
                        "mcp-rec",
                        "stdio",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )

    # mcp-cassette: its stdio wrapper and its HTTP reverse proxy, both in front of `wt serve`.
    cas_bin = bins["mcp-cassette"]
    if cas_bin is None:
        failed("mcp-cassette", "stdio", "mcp-cassette serve", reasons["mcp-cassette"])
        failed("mcp-cassette", "http", "mcp-cassette serve", reasons["mcp-cassette"])
    else:
        cassette = str(cas_bin / "mcp-cassette")
        for era in ERAS:
            path = work / f"cassette-stdio-{era}.json"
            label = "mcp-cassette serve (stdio, per_method)"
            try:
                await _record_stdio(
                    cassette,
                    [
                        "record",
                        "--cassette",
                        str(path),
                        "--no-default-redactions",
                        "--",
                        python,
                        *_wt_stdio(universe),
                    ],
                    era,
                    record_calls,
                )
                configs.append(
                    Config(
                        "mcp-cassette",
                        "stdio",
                        era,
                        label,
                        stdio=(cassette, ["serve", str(path)], {}),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-cassette",
                        "stdio",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
        for era in ERAS:
            path = work / f"cassette-http-{era}.json"
            label = "mcp-cassette serve (Streamable HTTP, per_method)"
            upstream, url = _http_from_stdout(
                [python, "-m", "windtunnel", "serve", str(universe)], our_env
            )()
            try:
                port = _free_port()
                await _record_http(
                    [
                        cassette,
                        "record",
                        "--cassette",
                        str(path),
                        "--no-default-redactions",
                        "--url",
                        url,
                        "--port",
                        str(port),
                    ],
                    port,
                    era,
                    record_calls,
                    upstream,
                    work,
                )
                if not path.exists():
                    raise RuntimeError("the recorder wrote no cassette")
                configs.append(
                    Config(
                        "mcp-cassette",
                        "http",
                        era,
                        label,
                        start_http=_http_on_port([cassette, "serve", str(path)], "/mcp"),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-cassette",
                        "http",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
            finally:
                _stop(upstream)

    # agent-vcr: cassette built with its own models from mcp-rec's wire log (its recorder hangs
    # with pipe clients); replayed over stdio and its legacy HTTP+SSE transport.
    vcr_bin = bins["agent-vcr"]
    if vcr_bin is None or not rec_logs:
        why = (
            reasons["agent-vcr"]
            if vcr_bin is None
            else "needs mcp-rec's wire log to build its cassette"
        )
        failed("agent-vcr", "stdio", "agent-vcr replay", why)
        failed("agent-vcr", "http", "agent-vcr replay (legacy HTTP+SSE)", why)
    else:
        builder = work / "agentvcr_build.py"
        builder.write_text(AGENT_VCR_BUILD)
        for era in ERAS:
            vcr = work / f"agentvcr-{era}.vcr"
            build = None
            if era in rec_logs and "legacy" in rec_logs:
                build = subprocess.run(  # noqa: ASYNC221  # setup, not timed
                    [
                        str(vcr_bin / "python"),
                        str(builder),
                        str(rec_logs[era]),
                        str(rec_logs["legacy"]),
                        str(vcr),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
            agent_vcr = str(vcr_bin / "agent-vcr")
            if build is None or build.returncode != 0:
                why = (
                    "no wire log"
                    if build is None
                    else f"building the cassette failed: {build.stderr.strip()[-200:]}"
                )
                configs.append(
                    Config("agent-vcr", "stdio", era, "agent-vcr replay (stdio)", failure=why)
                )
                configs.append(
                    Config(
                        "agent-vcr",
                        "http",
                        era,
                        "agent-vcr replay (legacy HTTP+SSE)",
                        sse=True,
                        failure=why,
                    )
                )
                continue
            configs.append(
                Config(
                    "agent-vcr",
                    "stdio",
                    era,
                    "agent-vcr replay (stdio, method_and_params)",
                    stdio=(agent_vcr, ["replay", "--file", str(vcr), "--transport", "stdio"], {}),
                )
            )
            configs.append(
                Config(
                    "agent-vcr",
                    "http",
                    era,
                    "agent-vcr replay (legacy HTTP+SSE)",
                    sse=True,
                    start_http=_http_on_port(
                        [
                            agent_vcr,
                            "replay",
                            "--file",
                            str(vcr),
                            "--transport",
                            "sse",
                            "--host",
                            "127.0.0.1",
                        ],
                        "/sse",
                    ),
                )
            )

    # mcp-recorder: its HTTP proxy wrapping `wt serve --stdio`; bind forced to loopback.
    recd_bin = bins["mcp-recorder"]
    if recd_bin is None:
        failed("mcp-recorder", "http", "mcp-recorder replay", reasons["mcp-recorder"])
    else:
        wrapper = work / "mcprecorder_loopback.py"
        wrapper.write_text(LOOPBACK_RECORDER)
        rpython = str(recd_bin / "python")
        for era in ERAS:
            path = work / f"mcprecorder-{era}.json"
            label = "mcp-recorder replay (Streamable HTTP, method_params)"
            port = _free_port()
            target = " ".join([python, *_wt_stdio(universe)])
            try:
                await _record_http(
                    [
                        rpython,
                        str(wrapper),
                        "record",
                        "--target-stdio",
                        target,
                        "--target-env",
                        f"PYTHONPATH={our_env['PYTHONPATH']}",
                        "--port",
                        str(port),
                        "--output",
                        str(path),
                    ],
                    port,
                    era,
                    record_calls,
                    None,
                    work,
                )
                if not path.exists():
                    raise RuntimeError("the recorder wrote no cassette")
                configs.append(
                    Config(
                        "mcp-recorder",
                        "http",
                        era,
                        label,
                        start_http=_http_on_port(
                            [rpython, str(wrapper), "replay", "--cassette", str(path)], "/mcp"
                        ),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-recorder",
                        "http",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
    return configs


# Plain calls are answered on the stdio reader thread, the rest of a call's work (router, event
# line) happens on the main thread: each gets its own profiler (cProfile is per thread), from the
# moment serving starts, so start-up is left out; the two are merged on the way out.
PROFILED_STDIO = """\
import cProfile, pstats, sys
from windtunnel.mcp import _stdio
from windtunnel.cli.main import main
main_profiler, reader_profiler = cProfile.Profile(), cProfile.Profile()
serve_fds, reader_run = _stdio.serve_fds, _stdio._Reader.run

async def profiled_serve_fds(*args):
    main_profiler.enable()
    try:
        await serve_fds(*args)
    finally:
        main_profiler.disable()

def profiled_run(self):
    reader_profiler.enable()
    try:
        reader_run(self)
    finally:
        reader_profiler.disable()

_stdio.serve_fds, _stdio._Reader.run = profiled_serve_fds, profiled_run
try:
    main(["serve", "--stdio", sys.argv[2]])
except SystemExit:
    pass
finally:
    stats = pstats.Stats(main_profiler)
    stats.add(reader_profiler)
    stats.dump_stats(sys.argv[1])
"""


async def _profile_stdio(work: Path, universe: Path, calls: int) -> dict[str, Any]:
    """`wt serve --stdio` under cProfile for `calls` legacy calls: self time by package."""
    from .profiles import summarize

    script = work / "profiled_stdio.py"
    script.write_text(PROFILED_STDIO)
    stats = work / "stdio.prof"
    python, env = _our_python()
    config = Config(
        "windtunnel",
        "stdio",
        "legacy",
        "",
        stdio=(python, [str(script), str(stats), str(universe)], env),
    )
    result = (await _measure_together([config], calls, 0))[_key(config)]
    if isinstance(result, str):
        raise RuntimeError(f"profiled stdio server failed: {result}")
    # The reader thread's blocking read is its wait for the client's next line.
    return summarize(stats, calls=calls + WARMUP + 1, top=10, waits=("posix.read",))


# -- the run -----------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--calls", type=int, help="timed calls per measurement (default 1000; quick 20)"
    )
    parser.add_argument("--rounds", type=int, help="rounds (default 5; quick 1)")
    parser.add_argument("--peers", help="comma-separated peers to include (default: all)")
    parser.add_argument(
        "--no-install",
        action="store_true",
        help="use cached peer venvs only (quick mode implies it)",
    )


def _key(c: Config) -> str:
    return f"{c.transport}/{c.era}/{c.name}"


async def _run(options: argparse.Namespace, data: dict[str, Any]) -> None:
    calls = options.calls or (20 if options.quick else 1000)
    rounds = options.rounds or (1 if options.quick else 5)
    only = set(options.peers.split(",")) if options.peers else None
    install = not (options.quick or options.no_install)
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        work = Path(tmp)
        universe = write_weather_universe(work / "weather.universe.json")
        answers = work / "answers.json"
        answers.write_text(json.dumps(await trio.to_thread.run_sync(capture_answers, universe)))
        configs = await _prepare(work, universe, answers, calls, install, only)
        runnable = [c for c in configs if c.failure is None]
        samples: dict[str, list[dict[str, float]]] = {_key(c): [] for c in configs}
        errors: dict[str, str] = {}
        groups: dict[tuple[str, str], list[Config]] = {}
        for config in runnable:
            groups.setdefault((config.transport, config.era), []).append(config)
        for r in range(rounds):
            for group in turns(list(groups.values()), r):
                measured = await _measure_together(
                    [c for c in group if _key(c) not in errors], calls, r
                )
                for key, result in measured.items():
                    if isinstance(result, str):
                        errors[key] = result
                        progress = f"FAILED {result}"
                    else:
                        samples[key].append(result)
                        progress = f"{result['per_s']:,.0f}/s"
                    print(f"peers: round {r + 1}/{rounds} {key}: {progress}", flush=True)
        profile = await _profile_stdio(work, universe, 200 if options.quick else 2000)
    rows = []
    for c in configs:
        key = _key(c)
        row: dict[str, Any] = {
            "key": key,
            "name": c.name,
            "transport": c.transport,
            "era": c.era,
            "label": c.label,
            "sse": c.sse,
        }
        if c.failure or key in errors:
            row["failure"] = c.failure or errors[key]
        else:
            row["metrics"] = {
                k: Spread.of([s[k] for s in samples[key]]).to_json() for k in samples[key][0]
            }
            row["raw_per_s"] = [s["per_s"] for s in samples[key]]
        rows.append(row)
    _relate(rows)
    data.update(
        calls=calls,
        rounds=rounds,
        warmup=WARMUP,
        rows=rows,
        verdicts=_verdicts(rows),
        stdio_profile=profile,
    )


def _relate(rows: list[dict[str, Any]]) -> None:
    """Each row as a % of its transport/era ceiling: median of per-round ratios."""
    ceilings = {
        (r["transport"], r["era"]): r for r in rows if r["name"] == "ceiling" and "metrics" in r
    }
    for row in rows:
        ceiling = ceilings.get((row["transport"], row["era"]))
        if "metrics" not in row or ceiling is None:
            continue
        pairs = zip(row["raw_per_s"], ceiling["raw_per_s"], strict=False)
        row["of_ceiling"] = statistics.median(a / b for a, b in pairs)


def _verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for transport, limit in TARGETS.items():
        for era in ERAS:
            ours = next(
                (
                    r
                    for r in rows
                    if r["name"] == "windtunnel" and r["transport"] == transport and r["era"] == era
                ),
                None,
            )
            if ours is None or "of_ceiling" not in ours:
                continue
            out.append(
                {
                    "target": f"≥ {limit:.0%} of the {transport} ceiling ({era})",
                    "value": f"{ours['of_ceiling']:.0%}",
                    "verdict": "PASS" if ours["of_ceiling"] >= limit else "MISS",
                }
            )
            others = [
                r
                for r in rows
                if r["transport"] == transport
                and r["era"] == era
                and r["name"] not in ("ceiling", "windtunnel")
                and "metrics" in r
            ]
            # "On the same transport": over HTTP we serve Streamable HTTP; a peer that serves
            # the legacy HTTP+SSE transport (deprecated since 2025-03-26) is shown, not ranked.
            peers = [r for r in others if not r.get("sse")]
            ours_rate = ours["metrics"]["per_s"]["median"]
            for other in (r for r in others if r.get("sse")):
                out.append(
                    {
                        "target": f"{other['name']} on legacy HTTP+SSE ({era}): another "
                        "transport, which Wind Tunnel does not serve",
                        "value": f"ours {ours_rate:,.0f}/s over Streamable HTTP vs "
                        f"{other['metrics']['per_s']['median']:,.0f}/s",
                        "verdict": "not ranked",
                    }
                )
            if peers:
                # The closest peer: the one ours leads by the least, round by round (the
                # servers of a round ran side by side, so their ratio is the steady figure).
                lead, best = min((_lead(ours, peer), peer) for peer in peers)
                out.append(
                    {
                        "target": f"ahead of every peer on {_TRANSPORT_NAMES[transport]} ({era})",
                        "value": f"ours x{lead:.2f} the closest peer, {best['name']} (median of "
                        f"per-round ratios; {ours_rate:,.0f}/s vs "
                        f"{best['metrics']['per_s']['median']:,.0f}/s)",
                        "verdict": "PASS" if lead > 1 else "MISS",
                    }
                )
    return out


def _lead(ours: dict[str, Any], peer: dict[str, Any]) -> float:
    """Our calls/s over the peer's: the median of the per-round ratios."""
    pairs = zip(ours["raw_per_s"], peer["raw_per_s"], strict=False)  # a failed peer stops early
    return float(statistics.median(a / b for a, b in pairs))


def run(options: argparse.Namespace) -> BenchResult:
    data = start_data(NAME, options)
    trio.run(_run, options, data)
    finish_data(data)
    text = markdown(data)
    print(text)
    return BenchResult(data, text)


def markdown(data: dict[str, Any]) -> str:
    out = header("Peers: end to end through the official SDK client", data)
    out += [
        f"Workload: {data['calls']} sequential `tools/call get_weather {{city: Paris}}` through "
        "`mcp.Client` (mcp 2.3.0, this process, Trio) after `list_tools` and "
        f"{data['warmup']} warm-up calls, every result checked; fresh servers every round. "
        "Within a round, the servers of one transport and era are up side by side, each with "
        f"its own client, and take turns {BLOCK} calls at a time (a burst of background load "
        "falls on all of them alike); rounds rotate who goes first. "
        f"{data['rounds']} rounds; cells median [min - max]. "
        '`legacy` is `mode="legacy"` (the `initialize` handshake); `auto` is the default '
        "(probes `server/discover`, the 2026-07-28 era, `_meta` stamped on every request). "
        "Each peer serves a recording made through its own recorder in front of `wt serve` "
        "(agent-vcr: built with its models from mcp-rec's wire log, one interaction per "
        "distinct request, its best case). The ceilings answer each method with the bytes our "
        "server sends, with no SDK: every row is also a % of what the client allows. % of "
        "ceiling is the median of per-round ratios. Peers run in their own venvs under "
        "`~/.cache/windtunnel-bench/peers` (mcp-cassette on Python 3.12).",
        "",
    ]
    for transport in ("stdio", "http"):
        out += [
            f"### {transport}",
            "",
            "| server | era | calls/s | µs/call | % of ceiling | connect |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for era in ERAS:
            for row in data["rows"]:
                if row["transport"] != transport or row["era"] != era:
                    continue
                if "failure" in row:
                    out.append(f"| {row['label']} | {era} | ✗ | — | — | {row['failure']} |")
                    continue
                m = row["metrics"]
                rate = m["per_s"]
                pct = f"{row['of_ceiling']:.0%}" if "of_ceiling" in row else "—"
                name = f"**{row['label']}**" if row["name"] == "windtunnel" else row["label"]
                out.append(
                    f"| {name} | {era} | {rate['median']:,.0f} "
                    f"[{rate['min']:,.0f} - {rate['max']:,.0f}] "
                    f"| {m['us_per_call']['median']:,.0f} | {pct} "
                    f"| {m['connect_s']['median'] * 1e3:,.0f} ms |"
                )
        out.append("")
    out += ["### Targets", "", "| target | measured | verdict |", "|---|---|---|"]
    for v in data["verdicts"]:
        out.append(f"| {v['target']} | {v['value']} | **{v['verdict']}** |")
    prof = data["stdio_profile"]
    out += [
        "",
        "### Where `wt serve --stdio` spends a call (cProfile, legacy era)",
        "",
        f"Self time by package over {prof['calls']:,} calls, from the moment serving starts, "
        "on both threads (the reader thread answers plain calls; the main thread runs the "
        "router and the event line), less the waits for the next line; µs per call under "
        "cProfile (which inflates Python code ~1.5-2x: read the shares). "
        "HTTP: see the `serve` section's profile.",
        "",
        "| package | µs/call | share |",
        "|---|---:|---:|",
    ]
    for bucket, value in prof["buckets"].items():
        out.append(f"| {bucket} | {value['us_per_call']:,.0f} | {value['share'] * 100:.0f}% |")
    out += ["", "| function (top self time) | self µs/call |", "|---|---:|"]
    for row in prof["top_self"]:
        out.append(f"| `{row['function'][:110]}` | {row['self_us_per_call']:,.1f} |")
    out += ["", ANALYSIS]
    return "\n".join(out) + "\n"


ANALYSIS = """\
**Where the time goes, and what would close the rest.** Through the SDK client the server's
CPU is on the critical path of every call: each row is "client time + server time", and the
ceilings and mcp-rec answer with a dict lookup and a write (~10 µs of server work). Our
`tools/call` never crosses the SDK's server stack (pydantic models in and out, a task per
request, two anyio memory streams): plain valid calls are answered from the replay engine with
the SDK's exact bytes (`mcp/_fast_path.py`, tested byte for byte against the SDK path).
**stdio**: a reader thread (`mcp/_stdio.py`) reads stdin with blocking reads and answers plain
calls as it reads them, with no Trio scheduler pass per line; listeners (router, event line)
hear of a call after its answer is written; what is left is the write that wakes the client and
our replay engine and call log (the profile above). mcp-rec's replay is a blocking line loop
like the ceiling's, with a hash of the request per line: both tools sit within a few % of the
ceiling, so the lead over it is a few % and its sign can flip in a single round; the verdict is
the median of the per-round ratios. **HTTP**: a plain call is read and answered inside
hypercorn's HTTP/1.1 protocol before h11 or ASGI see it (`mcp/_fast_path_h11.py`,
`mcp/_fast_path_head.py`, see `serve`), on our own Trio worker whose reads wait first and whose
writes go out at once (`mcp/_http_worker.py`): ~80-110 µs of server CPU per call, less than a
bare Trio + h11 loop spends serving canned bytes (~160 µs). What is left to the asyncio ceiling
is Trio's wake-up per read (an epoll round and a scheduler pass, where asyncio runs a callback)
and the replay engine; a raw socket client measures ~45-65 µs of server CPU per call for ours
against ~20 µs for the asyncio responder. Through the SDK client each µs the answer takes also
costs the client: when the answer is not there at its first read, its own event loop sleeps and
wakes."""
