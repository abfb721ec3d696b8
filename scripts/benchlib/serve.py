"""`scripts/bench serve`: the Streamable HTTP transport's ceiling (issue #3).

Two servers, each in its own process, the same client: our `RecordedMCPServer` (the SDK's
stateless JSON mode under hypercorn's Trio worker) and the same hypercorn-on-Trio stack serving a
constant canned answer (the bytes our server sends, no MCP). The client is a plain keep-alive
`http.client` posting `tools/call` sequentially from this process. Rounds take turns; per round
we read wall-clock throughput and the *server process's* CPU time (from /proc), so the per-call
server overhead is CPU µs, which other work on the machine does not inflate. A last pass runs the
recorded server under cProfile to say where the time goes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from .httpload import Poster
from .measure import Spread, turns
from .profiles import cumulative, summarize
from .report import BenchResult, finish_data, header, start_data
from .targets import ServerProcess, capture_answers, write_weather_universe

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "serve"
HELP = (
    "tools/call over Streamable HTTP: RecordedMCPServer vs canned bytes "
    "on the same hypercorn/Trio stack"
)

CONTENDERS = ("recorded", "canned")
LABELS = {
    "recorded": "RecordedMCPServer (SDK stateless JSON mode, hypercorn Trio worker)",
    "canned": "hypercorn Trio worker, canned bytes, no MCP",
}

# Cumulative cost of the layers we can name, per call (cProfile, so inflated alike).
_MANAGER = "mcp/server/streamable_http_manager.py"
LAYERS = {
    "hypercorn: HTTP/1.1 stream handling": "hypercorn/protocol/http_stream.py:handle",
    "SDK: per-request stateless transport + server task": f"{_MANAGER}:run_stateless_server",
    "our on_call_tool handler (answer + result mapping)": "windtunnel/mcp/_bridge.py:on_call_tool",
    "our fast path (answer + result mapping + JSON)": "windtunnel/mcp/_fast_call.py:__call__",
    "our Replay.call (matcher + call log)": "windtunnel/replay.py:call",
    "our to_call_tool_result (pydantic)": "windtunnel/mcp/_bridge.py:to_call_tool_result",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, help="calls per round (default 2000; quick 100)")
    parser.add_argument("--rounds", type=int, help="rounds (default 5; quick 2)")


def _round(server: ServerProcess, calls: int) -> dict[str, float]:
    poster = Poster(server.url)
    try:
        poster.run(min(50, calls))  # warm: connection, caches
        cpu0 = server.cpu_seconds()
        wall = poster.run(calls)
        cpu = server.cpu_seconds() - cpu0
    finally:
        poster.close()
    return {
        "per_s": calls / wall,
        "wall_us": wall / calls * 1e6,
        "server_cpu_us": cpu / calls * 1e6,
    }


def run(options: argparse.Namespace) -> BenchResult:
    calls = options.calls or (100 if options.quick else 2000)
    rounds = options.rounds or (2 if options.quick else 5)
    data = start_data(NAME, options)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in CONTENDERS}
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        work = Path(tmp)
        universe = write_weather_universe(work / "weather.universe.json")
        answers = work / "answers.json"
        answers.write_text(json.dumps(capture_answers(universe)))
        sources = {"recorded": str(universe), "canned": str(answers)}
        servers = {name: ServerProcess(name, sources[name]) for name in CONTENDERS}
        try:
            for r in range(rounds):
                for name in turns(list(CONTENDERS), r):
                    samples[name].append(_round(servers[name], calls))
                print(
                    f"serve: round {r + 1}/{rounds}: "
                    + ", ".join(f"{n} {samples[n][-1]['per_s']:,.0f}/s" for n in CONTENDERS),
                    flush=True,
                )
        finally:
            for server in servers.values():
                server.stop()
        profiles = {}
        for name in CONTENDERS:
            stats = work / f"{name}.prof"
            server = ServerProcess(name, sources[name], "--profile", str(stats))
            try:
                poster = Poster(server.url)
                poster.run(min(50, calls))
                server.send("profile")
                poster.run(calls)
                poster.close()
            finally:
                server.stop()
            profiles[name] = summarize(stats, calls=calls)
            if name == "recorded":
                profiles[name]["layers"] = cumulative(stats, LAYERS, calls=calls)
    metrics = {
        name: {
            key: Spread.of([s[key] for s in samples[name]]).to_json() for key in samples[name][0]
        }
        for name in CONTENDERS
    }
    pairs = list(zip(samples["recorded"], samples["canned"], strict=True))
    data.update(
        calls_per_round=calls,
        rounds=rounds,
        metrics=metrics,
        ratio_throughput=statistics.median(a["per_s"] / b["per_s"] for a, b in pairs),
        overhead_cpu_us=statistics.median(
            a["server_cpu_us"] - b["server_cpu_us"] for a, b in pairs
        ),
        overhead_wall_us=statistics.median(a["wall_us"] - b["wall_us"] for a, b in pairs),
        profiles=profiles,
    )
    finish_data(data)
    text = markdown(data)
    print(text)
    return BenchResult(data, text)


def _cell(spread: dict[str, Any], fmt: str) -> str:
    low, high = fmt.format(spread["min"]), fmt.format(spread["max"])
    return f"{fmt.format(spread['median'])} [{low} - {high}]"


def markdown(data: dict[str, Any]) -> str:
    out = header("Serving over Streamable HTTP: the transport's ceiling", data)
    m = data["metrics"]
    out += [
        f"Workload: one recorded tool (`get_weather`), {data['calls_per_round']:,} sequential "
        f"`tools/call` posts per round over one kept-alive connection, {data['rounds']} rounds "
        "taking turns. Each server runs in its own process; the client (`http.client`) is this "
        "process, the same for both. The canned server answers every POST with the bytes our "
        "server sent for the same request (captured at start), under the same hypercorn Trio "
        "worker and config: the difference is the MCP SDK, pydantic and our replay engine. "
        "Cells: median [min - max] over rounds. Server CPU is the server process's user+system "
        "time per call (/proc), the honest clock on a shared machine.",
        "",
        "| server | calls/s | wall µs/call | server CPU µs/call |",
        "|---|---:|---:|---:|",
    ]
    for name in CONTENDERS:
        out.append(
            f"| {LABELS[name]} | {_cell(m[name]['per_s'], '{:,.0f}')} | "
            f"{_cell(m[name]['wall_us'], '{:,.0f}')} "
            f"| {_cell(m[name]['server_cpu_us'], '{:,.0f}')} |"
        )
    out += [
        "",
        f"**Recorded / canned throughput: {data['ratio_throughput']:.2f}** (median of per-round "
        f"ratios). **Per-call server overhead of MCP + replay: {data['overhead_cpu_us']:,.0f} µs "
        f"CPU** ({data['overhead_wall_us']:,.0f} µs wall), the median of per-round differences.",
        "",
        "### Where the server's time goes (cProfile, one pass per server)",
        "",
        "Self time by package, µs per call. cProfile slows Python code ~1.5-2x, so read the shares "
        "more than the absolute µs; the idle wait for the next request is left out.",
        "",
        "| package | recorded µs/call | share | canned µs/call |",
        "|---|---:|---:|---:|",
    ]
    rec, can = data["profiles"]["recorded"], data["profiles"]["canned"]
    for bucket, value in rec["buckets"].items():
        other = can["buckets"].get(bucket, {"us_per_call": 0.0})["us_per_call"]
        out.append(
            f"| {bucket} | {value['us_per_call']:,.0f} | {value['share'] * 100:.0f}% "
            f"| {other:,.0f} |"
        )
    out.append(
        f"| **total busy** | **{rec['busy_us_per_call']:,.0f}** | 100% "
        f"| **{can['busy_us_per_call']:,.0f}** |"
    )
    out += [
        "",
        "Cumulative time of the layers we can name (recorded server, µs per call, profiled):",
        "",
    ]
    out += ["| layer | µs/call |", "|---|---:|"]
    for label, value in rec.get("layers", {}).items():
        out.append(f"| {label} | {value:,.0f} |")
    out += [
        "",
        "Top functions by self time (recorded server):",
        "",
        "| function | self µs/call | cum µs/call |",
        "|---|---:|---:|",
    ]
    for row in rec["top_self"]:
        out.append(
            f"| `{row['function']}` | {row['self_us_per_call']:,.1f} "
            f"| {row['cum_us_per_call']:,.1f} |"
        )
    out += ["", ANALYSIS]
    return "\n".join(out) + "\n"


ANALYSIS = """\
**Reading it.** The canned server's profile is the price of hypercorn on Trio itself (h11
parsing, the Trio scheduler, socket sends). `tools/call` requests take the bridge's fast path
(`mcp/_fast_call.py`): an ASGI layer in front of the SDK app that answers plain, valid calls of
declared tools straight from the replay engine, with the response the SDK would send (a test
compares the two byte for byte in meaning, in both protocol eras), and hands everything else
(other methods, unknown tools, odd headers, foreign Host/Origin, large bodies) to the SDK. What
is left over the canned server is our matcher, call log and result mapping. Before the fast
path, every call crossed the SDK's stateless Streamable HTTP machinery (a fresh transport and
server session per POST, anyio task groups and memory streams, pydantic validation): 0.48x the
canned throughput and ~495 µs of extra server CPU per call."""
