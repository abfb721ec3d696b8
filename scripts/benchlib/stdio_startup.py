"""`scripts/bench startup`'s stdio part: how long a spawned `wt serve --stdio` takes to answer.

What an MCP client pays for every server it spawns: from `Popen` to the answer to its first
`tools/call`, after `initialize`, `notifications/initialized` and `tools/list` (the client sends
them at once; the server answers in order). Measured with a raw pipe client, taking turns with
`python -c pass` in the same run:

- wall: spawn to the `tools/call` answer;
- both protocol eras: the handshake above, and a 2026-07-28 session (`server/discover`,
  `tools/list`, `tools/call`, each with its `_meta` envelope);
- CPU: the server process's user + system time from spawn to its exit (`os.wait4`; the exit
  follows stdin closing right after the answer, so it is the start-up and the session);
- the per-call pattern of langchain-mcp-adapters' default tools: 8 calls, a new stdio session
  (a new server process) for each, back to back;
- the same pattern through langchain-mcp-adapters itself (`langchain_per_call.py`), when
  `.venvs/fw-langchain` exists (`scripts/setup_venv fw-langchain`): its client spawns each
  server with its own environment and waits for each session's handshake;
- a universe of about 1 MB (the CRM example with its recordings repeated), for the share of
  start-up that loading a universe takes;
- `wt record --stdio` in front of a canned upstream (a few lines of plain Python answering the
  same session), the proxy's agent side: its CPU includes the upstream's, which `wait4` counts
  as the proxy's reaped child (about one `python -c pass`);
- whether the process imported the MCP SDK at all (`python -X importtime`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .measure import Spread, turns

__all__ = ["PER_CALL_CALLS", "StdioLaunch", "measure_stdio", "stdio_markdown"]

ROOT = Path(__file__).resolve().parents[2]
UNIVERSE = ROOT / "configs" / "examples" / "crm.universe.json"
TOOL, ARGS = "client_lookup", {"query": "Bluewing Logistics"}
PER_CALL_CALLS = 8
"""langchain-mcp-adapters' default tools open a session per call; 8 calls as in the framework
tests."""
BIG_UNIVERSE_BYTES = 1_000_000
CPU_TARGET_S = 0.15
SESSION: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": ARGS},
    },
]
SESSION_BYTES = b"".join(json.dumps(message).encode() + b"\n" for message in SESSION)
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_SESSION: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": ARGS, "_meta": MODERN_META},
    },
]
MODERN_BYTES = b"".join(json.dumps(message).encode() + b"\n" for message in MODERN_SESSION)
BASELINE = "python -c pass"
SERVE = "wt serve --stdio crm"
SERVE_MODERN = "wt serve --stdio crm (2026-07-28)"
SERVE_BIG = "wt serve --stdio (1 MB universe)"
RECORD = "wt record --stdio (canned upstream)"


class StdioLaunch(NamedTuple):
    """One spawned process: wall seconds to its answer (to its exit for the baseline), and its
    CPU seconds from spawn to exit."""

    wall_s: float
    cpu_s: float


def _wt_argv(universe: Path) -> list[str]:
    return [sys.executable, "-m", "windtunnel", "serve", "--stdio", str(universe)]


CANNED_UPSTREAM = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "canned", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [{"name": "client_lookup", "inputSchema": {"type": "object"}}]}
    else:
        result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def _record_argv(scratch: Path) -> list[str]:
    upstream = scratch / "canned_upstream.py"
    upstream.write_text(CANNED_UPSTREAM, encoding="utf-8")
    output = scratch / "recorded.universe.json"
    return [
        *_wt_argv(UNIVERSE)[:3],
        "record",
        "--stdio",
        "-o",
        str(output),
        "--",
        sys.executable,
        str(upstream),
    ]


def _baseline(env: dict[str, str]) -> StdioLaunch:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", "pass"], env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return StdioLaunch(wall, usage.ru_utime + usage.ru_stime)


def _session(
    argv: Sequence[str], env: dict[str, str], session: bytes = SESSION_BYTES
) -> StdioLaunch:
    """Spawn, send the session, read up to the `tools/call` answer, close stdin, reap."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(session)
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv} closed stdout before answering tools/call")
        if json.loads(line).get("id") == 3:
            break
    wall = time.perf_counter() - started
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    return StdioLaunch(wall, usage.ru_utime + usage.ru_stime)


def _big_universe(directory: Path) -> Path:
    """The CRM universe with its recordings repeated (distinct arguments) to about 1 MB."""
    universe = json.loads(UNIVERSE.read_text(encoding="utf-8"))
    originals = universe["recordings"]
    recordings: list[dict[str, Any]] = []
    size = len(UNIVERSE.read_bytes())
    copy = 0
    while size < BIG_UNIVERSE_BYTES:
        for recording in originals:
            args = {key: f"{value}-{copy}" for key, value in recording["args"].items()}
            recordings.append({**recording, "args": args})
            size += len(json.dumps(recordings[-1]))
        copy += 1
    universe["recordings"] = originals + recordings
    path = directory / "big.universe.json"
    path.write_text(json.dumps(universe), encoding="utf-8")
    return path


def _imports(universe: Path, env: dict[str, str], session: bytes) -> dict[str, Any]:
    """How many modules one session's server imports, and whether the SDK is among them."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *_wt_argv(universe)[1:]],
        env=env,
        input=session,
        capture_output=True,
        check=True,
    )
    modules = [
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode(errors="replace").splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    ]
    tops = {module.split(".")[0] for module in modules}
    return {
        "modules": len(modules),
        "sdk_imported": "mcp" in tops,
        "heavy": sorted(
            tops & {"mcp", "mcp_types", "pydantic", "anyio", "starlette", "httpx2", "trio"}
        ),
    }


def _langchain(rounds: int, env: dict[str, str], scratch: Path) -> dict[str, Any] | None:
    """`langchain_per_call.py` in `.venvs/fw-langchain`, `rounds` times; None without it."""
    python = ROOT / ".venvs" / "fw-langchain" / "bin" / "python"
    if not python.exists():
        return None
    spec = scratch / "langchain.json"
    kept = ("PATH", "HOME", "PYTHONPATH", "PYTHONPYCACHEPREFIX")
    server_env: dict[str, str] = {key: env[key] for key in kept if key in env}
    argv = _wt_argv(UNIVERSE)
    spec.write_text(
        json.dumps(
            {
                "command": argv[0],
                "args": argv[1:],
                "env": server_env,
                "tool": TOOL,
                "arguments": ARGS,
                "calls": PER_CALL_CALLS,
            }
        ),
        encoding="utf-8",
    )
    script = Path(__file__).with_name("langchain_per_call.py")
    samples = []
    for _ in range(rounds):
        done = subprocess.run(
            [str(python), str(script), str(spec)], capture_output=True, check=True, timeout=600
        )
        samples.append(json.loads(done.stdout.decode().splitlines()[-1]))
    return {
        "calls": PER_CALL_CALLS,
        "wall_s": Spread.of([s["wall_s"] for s in samples]).to_json(),
        "cpu_s": Spread.of([s["cpu_s"] for s in samples]).to_json(),
    }


def measure_stdio(runs: int, env: dict[str, str], scratch: Path) -> dict[str, Any]:
    """The stdio figures (see the module docstring), JSON-ready."""
    big = _big_universe(scratch)
    argv = {
        SERVE: _wt_argv(UNIVERSE),
        SERVE_MODERN: _wt_argv(UNIVERSE),
        SERVE_BIG: _wt_argv(big),
        RECORD: _record_argv(scratch),
    }
    names = [BASELINE, *argv]
    samples: dict[str, list[StdioLaunch]] = {name: [] for name in names}
    _session(argv[SERVE], env)  # fills the bytecode cache
    for repeat in range(runs):
        for name in turns(names, repeat):
            session = MODERN_BYTES if name == SERVE_MODERN else SESSION_BYTES
            launch = _baseline(env) if name == BASELINE else _session(argv[name], env, session)
            samples[name].append(launch)
    per_call: list[StdioLaunch] = []
    for _ in range(max(1, runs // 3)):
        started = time.perf_counter()
        launches = [_session(argv[SERVE], env) for _ in range(PER_CALL_CALLS)]
        per_call.append(
            StdioLaunch(time.perf_counter() - started, sum(launch.cpu_s for launch in launches))
        )
    return {
        "runs": runs,
        "langchain": _langchain(max(1, runs // 3), env, scratch),
        "first_answer": {
            name: {
                "wall_s": Spread.of([s.wall_s for s in launches]).to_json(),
                "cpu_s": Spread.of([s.cpu_s for s in launches]).to_json(),
            }
            for name, launches in samples.items()
        },
        "per_call_pattern": {
            "calls": PER_CALL_CALLS,
            "wall_s": Spread.of([s.wall_s for s in per_call]).to_json(),
            "cpu_s": Spread.of([s.cpu_s for s in per_call]).to_json(),
        },
        "universe_bytes": {
            SERVE: UNIVERSE.stat().st_size,
            SERVE_MODERN: UNIVERSE.stat().st_size,
            SERVE_BIG: big.stat().st_size,
        },
        "commands": {name: " ".join(command[1:]) for name, command in argv.items()},
        "imports": _imports(UNIVERSE, env, SESSION_BYTES),
        "imports_modern": _imports(UNIVERSE, env, MODERN_BYTES),
    }


def stdio_markdown(stdio: dict[str, Any]) -> list[str]:
    first = stdio["first_answer"]
    base_cpu = first[BASELINE]["cpu_s"]["median"]
    lines = [
        "",
        "`wt serve --stdio` and `wt record --stdio` (in front of a canned upstream, whose CPU it "
        f"includes), spawn to the first `tools/call` answer (raw pipe client: "
        f"`initialize`, `notifications/initialized`, `tools/list`, `tools/call` sent at once; in "
        f"the 2026-07-28 row `server/discover`, `tools/list`, `tools/call`, each with its `_meta` "
        f"envelope), "
        f"{stdio['runs']} launches each taking turns with `{BASELINE}` (to its exit); CPU is the "
        f"process's user + system time to its exit. Target: CPU under {CPU_TARGET_S} s.",
        "",
        "| process | universe bytes | wall (s) | CPU (s) | CPU / baseline | verdict |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, figures in first.items():
        wall, cpu = figures["wall_s"], figures["cpu_s"]
        size = stdio["universe_bytes"].get(name, "")
        verdict = ""
        if name != BASELINE:
            verdict = "**PASS**" if cpu["median"] <= CPU_TARGET_S else "**MISS**"
        lines.append(
            f"| `{name}` | {size} | {wall['median']:.3f} [{wall['min']:.3f}-{wall['max']:.3f}] "
            f"| {cpu['median']:.3f} [{cpu['min']:.3f}-{cpu['max']:.3f}] "
            f"| {cpu['median'] / base_cpu:.1f}x | {verdict} |"
        )
    pattern = stdio["per_call_pattern"]
    imports = stdio["imports"]
    modern = stdio.get("imports_modern", imports)
    langchain = stdio.get("langchain")
    if langchain is not None:
        lines += [
            "",
            f"langchain-mcp-adapters' default tools themselves (`.venvs/fw-langchain`), "
            f"{langchain['calls']} calls of one tool, each spawning `wt serve --stdio crm`: wall "
            f"{langchain['wall_s']['median']:.2f} s, CPU of the spawned processes (the listing "
            f"session included) {langchain['cpu_s']['median']:.2f} s (medians of "
            f"{langchain['wall_s']['n']}).",
        ]
    lines += [
        "",
        f"Per-call pattern (langchain-mcp-adapters' default tools: a new stdio session per call), "
        f"{pattern['calls']} calls back to back: wall {pattern['wall_s']['median']:.2f} s, "
        f"CPU {pattern['cpu_s']['median']:.2f} s (medians of {pattern['wall_s']['n']}).",
        "",
        f"One session imports {imports['modules']} modules ({modern['modules']} in the "
        f"2026-07-28 era); the MCP SDK {'is' if imports['sdk_imported'] else 'is not'} among "
        f"them ({'is' if modern['sdk_imported'] else 'is not'} in the 2026-07-28 era)"
        + (f" (heavy packages: {', '.join(imports['heavy'])})." if imports["heavy"] else "."),
    ]
    return lines
