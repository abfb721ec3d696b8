"""`scripts/bench serve`: the Streamable HTTP transport's ceiling (issue #3).

Four servers, each in its own process, the same client: our `RecordedMCPServer`; the same HTTP
server (hypercorn's HTTP/1.1 protocol code on our Trio worker) serving a constant canned answer
(the bytes our server sends, no MCP); and two references answering the same bytes: hypercorn's
own Trio worker (`hypercorn.trio.serve`), and a minimal Trio + h11 loop, the floor for any
h11-based server on Trio. The client is a plain keep-alive `http.client` posting `tools/call`
sequentially from this process. Rounds take turns; per round we read wall-clock throughput and
the *server process's* CPU time (from /proc), so the per-call server cost is CPU µs, which other
work on the machine does not inflate. A last pass runs each server under cProfile to say where
the time goes.
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
from .targets import (
    ServerProcess,
    capture_answers,
    write_session_universe,
    write_weather_universe,
)

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "serve"
HELP = (
    "tools/call over Streamable HTTP: RecordedMCPServer vs canned bytes "
    "on the same hypercorn/Trio stack"
)

CONTENDERS = ("recorded", "recorded-sdk", "session", "session-sdk", "canned", "hypercorn", "h11")
PROFILED = ("recorded", "canned", "hypercorn", "h11")
LABELS = {
    "recorded": "RecordedMCPServer (fast path; hypercorn HTTP/1.1 on our Trio worker)",
    "recorded-sdk": "the same, no fast path (`wt serve --no-fast-path`)",
    "session": "RecordedMCPServer of a universe with a sequence tool, calls in an HTTP session",
    "session-sdk": "the same session, no fast path (`wt serve --no-fast-path`)",
    "canned": "same HTTP server, canned bytes, no MCP",
    "hypercorn": "reference: stock hypercorn Trio worker, canned bytes",
    "h11": "reference floor: minimal Trio + h11 loop, canned bytes",
}

# Cumulative cost of the layers we can name, per call (cProfile, so inflated alike).
_MANAGER = "mcp/server/streamable_http_manager.py"
LAYERS = {
    "our Trio worker: read loop (request reading, dispatch)": "mcp/_http_worker.py:_read_data",
    "our head reader (the one request shape, no h11)": "mcp/_fast_path_head.py:read_head",
    "our Trio worker: socket writes": "mcp/_http_worker.py:_write",
    "hypercorn: HTTP/1.1 stream handling": "hypercorn/protocol/http_stream.py:handle",
    "SDK: per-request stateless transport + server task": f"{_MANAGER}:run_stateless_server",
    "our on_call_tool handler (answer + result mapping)": "mcp/_sdk_server.py:on_call_tool",
    "our in-protocol answer (head, body, answer, response)": "mcp/_fast_path_h11.py:_answer_plain",
    "our fast path (answer + result mapping + JSON)": "windtunnel/mcp/_fast_path_http.py:answer",
    "our Replay.call (matcher + call log)": "windtunnel/replay.py:call",
    "our to_call_tool_result (pydantic)": "windtunnel/mcp/_sdk_server.py:to_call_tool_result",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, help="calls per round (default 2000; quick 100)")
    parser.add_argument("--rounds", type=int, help="rounds (default 5; quick 2)")


SESSIONS = ("session", "session-sdk")
"""Their client opens a session (`initialize`) and makes every call in it."""


def _round(server: ServerProcess, calls: int, *, session: bool = False) -> dict[str, float]:
    poster = Poster(server.url, session=session)
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
        with_sessions = write_session_universe(work / "sessions.universe.json")
        answers = work / "answers.json"
        answers.write_text(json.dumps(capture_answers(universe)))
        sources = {name: str(answers) for name in CONTENDERS} | {
            name: str(universe) for name in CONTENDERS if name.startswith("recorded")
        }
        sources |= {name: str(with_sessions) for name in SESSIONS}
        servers = {name: ServerProcess(name, sources[name]) for name in CONTENDERS}
        try:
            for r in range(rounds):
                for name in turns(list(CONTENDERS), r):
                    samples[name].append(_round(servers[name], calls, session=name in SESSIONS))
                print(
                    f"serve: round {r + 1}/{rounds}: "
                    + ", ".join(f"{n} {samples[n][-1]['per_s']:,.0f}/s" for n in CONTENDERS),
                    flush=True,
                )
        finally:
            for server in servers.values():
                server.stop()
        profiles = {}
        for name in PROFILED:
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

    def cpu_difference(a: str, b: str) -> float:
        rounds = zip(samples[a], samples[b], strict=True)
        return statistics.median(x["server_cpu_us"] - y["server_cpu_us"] for x, y in rounds)

    data.update(
        calls_per_round=calls,
        rounds=rounds,
        metrics=metrics,
        ratio_throughput=statistics.median(a["per_s"] / b["per_s"] for a, b in pairs),
        overhead_cpu_us=cpu_difference("recorded", "canned"),
        overhead_wall_us=statistics.median(a["wall_us"] - b["wall_us"] for a, b in pairs),
        worker_saving_cpu_us=cpu_difference("hypercorn", "canned"),
        # What the fast path still earns: the server CPU a call saves with it.
        fast_path_saving_cpu_us=cpu_difference("recorded-sdk", "recorded"),
        ratio_throughput_vs_sdk=statistics.median(
            a["per_s"] / b["per_s"]
            for a, b in zip(samples["recorded"], samples["recorded-sdk"], strict=True)
        ),
        # The same in an HTTP session (a universe with a sequence tool, a handshake-era client).
        session_saving_cpu_us=cpu_difference("session-sdk", "session"),
        ratio_throughput_session_vs_sdk=statistics.median(
            a["per_s"] / b["per_s"]
            for a, b in zip(samples["session"], samples["session-sdk"], strict=True)
        ),
        ratio_cpu_session_sdk=_cpu_ratio(samples["session-sdk"], samples["session"]),
        over_floor_cpu_us=cpu_difference("canned", "h11"),
        profiles=profiles,
    )
    finish_data(data)
    text = markdown(data)
    print(text)
    return BenchResult(data, text)


def _cpu_ratio(slow: list[dict[str, float]], fast: list[dict[str, float]]) -> float:
    """The median of per-round server CPU ratios; rounds where `fast` used less than one tick
    of the CPU clock (a quick run's 100 calls can) have none, and with none it is 0."""
    ratios = [
        b["server_cpu_us"] / a["server_cpu_us"]
        for a, b in zip(fast, slow, strict=True)
        if a["server_cpu_us"] > 0
    ]
    return statistics.median(ratios) if ratios else 0.0


def _cell(spread: dict[str, Any], fmt: str) -> str:
    low, high = fmt.format(spread["min"]), fmt.format(spread["max"])
    return f"{fmt.format(spread['median'])} [{low} - {high}]"


def markdown(data: dict[str, Any]) -> str:
    out = header("Serving over Streamable HTTP: the transport's ceiling", data)
    m = data["metrics"]
    out += [
        f"Workload: one recorded tool (`get_weather`), {data['calls_per_round']:,} sequential "
        f"`tools/call` posts per round over one kept-alive connection, {data['rounds']} rounds "
        "taking turns. Each server runs in its own process (start-up heap frozen, as `wt serve` "
        "does); the client (`http.client`) is this process, the same for all. The canned "
        "servers answer every POST with the bytes our server sent for the same request "
        "(captured at start): the first on our server's own HTTP stack and config (the "
        "difference to ours is the MCP layer and the replay engine), then hypercorn's stock "
        "Trio worker with the same config, then a bare Trio + h11 loop (no ASGI, no timeouts). "
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
        f"CPU** ({data['overhead_wall_us']:,.0f} µs wall), the median of per-round differences. "
        f"Canned bytes cost **{m['hypercorn']['server_cpu_us']['median']:,.0f} µs** of server "
        f"CPU per request on hypercorn's own Trio worker, **"
        f"{m['canned']['server_cpu_us']['median']:,.0f} µs** on ours (a saving of "
        f"{data['worker_saving_cpu_us']:,.0f} µs), against **"
        f"{m['h11']['server_cpu_us']['median']:,.0f} µs** for the Trio + h11 floor (ours is "
        f"{data['over_floor_cpu_us']:,.0f} µs above it).",
        "",
        "What the fast path earns now (median of per-round differences in server CPU per call): "
        f"**{data['fast_path_saving_cpu_us']:,.0f} µs** against serving every request through "
        f"the SDK (throughput x{data['ratio_throughput_vs_sdk']:.2f}). In an HTTP session "
        "(a universe with a sequence-mode tool, whose handshake-era clients get one; every "
        "call in the session, answered on an SSE stream): "
        f"**{data['session_saving_cpu_us']:,.0f} µs** (the SDK path costs "
        f"x{data['ratio_cpu_session_sdk']:.2f} the server CPU; throughput "
        f"x{data['ratio_throughput_session_vs_sdk']:.2f}).",
        "",
        "### Where the server's time goes (cProfile, one pass per server)",
        "",
        "Self time by package, µs per call. cProfile slows Python code ~1.5-2x, so read the shares "
        "more than the absolute µs; the idle wait for the next request is left out.",
        "",
        "| package | recorded µs/call | share | canned | stock hypercorn | Trio + h11 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    profiles = data["profiles"]
    rec = profiles["recorded"]
    others = [profiles[name] for name in ("canned", "hypercorn", "h11")]
    buckets = list(rec["buckets"])
    buckets += [b for p in others for b in p["buckets"] if b not in buckets]
    for bucket in dict.fromkeys(buckets):
        value = rec["buckets"].get(bucket, {"us_per_call": 0.0, "share": 0.0})
        cells = " | ".join(
            f"{p['buckets'].get(bucket, {'us_per_call': 0.0})['us_per_call']:,.0f}" for p in others
        )
        out.append(
            f"| {bucket} | {value['us_per_call']:,.0f} | {value['share'] * 100:.0f}% | {cells} |"
        )
    totals = " | ".join(f"**{p['busy_us_per_call']:,.0f}**" for p in others)
    out.append(f"| **total busy** | **{rec['busy_us_per_call']:,.0f}** | 100% | {totals} |")
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
**Reading it.** A plain, valid `tools/call` of a declared tool is answered inside hypercorn's
HTTP/1.1 protocol (`mcp/_fast_path_h11.py`) before h11 sees it: while h11 sits between requests with
nothing buffered, the bytes that arrive are read as the one request shape an MCP client sends
for a call (`mcp/_fast_path_head.py`: `POST <path> HTTP/1.1`, CRLF lines, token names, one
`Content-Length`, `Host`, no framing or upgrade headers; a Hypothesis test checks that every
head it accepts h11 reads the same). The shared rules (`mcp/_fast_path_http.py`) answer it from the
replay engine with the bytes the SDK's path would send, in one write, with no h11 events, HTTP
stream object, ASGI scope, app task or receive queue (tests compare the bytes with the SDK path,
and run every worker behaviour test with it on). Everything else (other methods and shapes,
unknown tools, odd headers, foreign Host/Origin, large bodies, HTTP/2) is handed to h11 as the
bytes that came and takes hypercorn's own steps to the SDK app. That is why the recorded server
is faster than every canned row here, the bare Trio + h11 loop included: it does less HTTP work
per call than h11 does. hypercorn's stock Trio worker spends most of its time in Trio plumbing
around the protocol code, not in HTTP: per request it cancels and re-spawns the keep-alive
timeout task (`nursery.start`, under a `trio.Lock`), takes a lock that costs a scheduler pass
before every write, writes the head and the body separately, wraps every read in a fresh
`fail_after(inf)` scope, and passes each body message through a memory channel (a scheduler pass
each). `mcp/_http_worker.py` keeps hypercorn's protocol code (h11/h2 parsing, HTTP stream
state, ASGI events, error responses, keep-alive recycling, lifespan) and replaces only that
shell: one idle watcher per connection whose deadline moves, reads that wait for the socket
first, the lock taken without a scheduler pass when free, what the socket takes written at
once, a sized response written in one send, a per-request inbox that wakes the app directly,
the Date header formatted once a second (tests hold both workers to the same keep-alive,
shutdown, backpressure, crash and HTTP/2 behaviour). What is left per call is Trio's socket
wait and our replay engine (the profile above)."""
