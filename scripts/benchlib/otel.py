"""`scripts/bench otel`: what OpenTelemetry export costs `wt serve` per call (issue #29).

Two `wt serve` processes serve the same one-tool universe side by side: one with export off (no
endpoint), one exporting every call's span over OTLP/HTTP to a real receiver (`oteltap`, from
PyPI, in this process). The same keep-alive `http.client` posts `tools/call` to each in turns;
per round we read the *server process's* CPU time (from /proc), which includes the export
thread's work (building spans, protobuf, HTTP), so the difference is what export costs a call.
Not part of `all` (export is opt-in and the plain path has its own benchmarks); `--out` writes its
section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .httpload import Poster
from .measure import Spread, turns
from .report import BenchResult, finish_data, header, start_data
from .targets import write_weather_universe
from .wt_process import WtProcess

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "otel"
HELP = "tools/call over HTTP with OpenTelemetry export off vs on (`wt serve`, CPU per call)"
CONTENDERS = ("off", "on")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, help="calls per round (default 3000; quick 200)")
    parser.add_argument("--rounds", type=int, help="rounds per contender (default 7; quick 2)")


@contextmanager
def _receiver() -> Iterator[str]:
    """An `oteltap` OTLP/HTTP receiver on a loopback port, draining what it gets."""
    from oteltap import OtelTapHttpProtobufReceiver, OtelTapHttpProtobufReceiverSettings

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ready, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        settings = OtelTapHttpProtobufReceiverSettings(http_port=port)
        async with OtelTapHttpProtobufReceiver(settings) as tap:

            async def drain(stream: Any) -> None:
                async for _ in stream:
                    pass

            tasks = [asyncio.create_task(drain(tap.stream_traces()))]
            tasks.append(asyncio.create_task(drain(tap.stream_logs())))
            ready.set()
            await asyncio.to_thread(stop.wait)
            for task in tasks:
                task.cancel()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        thread.join(30)


def _posted(url: str, calls: int) -> None:
    # A connection per round: the other server's round may outlast this one's keep-alive.
    poster = Poster(url)
    try:
        poster.run(calls)
    finally:
        poster.close()


def run(options: argparse.Namespace) -> BenchResult:
    calls = options.calls or (200 if options.quick else 3000)
    rounds = options.rounds or (2 if options.quick else 7)
    data = start_data(NAME, options)
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    samples: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    with tempfile.TemporaryDirectory() as tmp, _receiver() as endpoint:
        universe = write_weather_universe(Path(tmp) / "weather.universe.json")
        servers = {
            "off": WtProcess(["serve", str(universe)], base),
            "on": WtProcess(
                ["serve", str(universe)], {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
            ),
        }
        try:
            for name in CONTENDERS:
                _posted(servers[name].url, min(calls, 500))  # warm-up
            for repeat in range(rounds):
                for name in turns(list(CONTENDERS), repeat):
                    cpu = servers[name].cpu_seconds()
                    _posted(servers[name].url, calls)
                    samples[name].append((servers[name].cpu_seconds() - cpu) / calls * 1e6)
        finally:
            for server in servers.values():
                server.stop()
    data["calls_per_round"] = calls
    data["cpu_us_per_call"] = {name: Spread.of(s).to_json() for name, s in samples.items()}
    finish_data(data)
    off, on = (data["cpu_us_per_call"][name]["median"] for name in CONTENDERS)
    lines = header("OpenTelemetry export: server CPU per call", data)
    lines += [
        "| export | server CPU per call (median, µs) | min to max |",
        "|---|---:|---:|",
    ]
    for name in CONTENDERS:
        spread = data["cpu_us_per_call"][name]
        lines.append(
            f"| {name} | {spread['median']:.1f} | {spread['min']:.1f} to {spread['max']:.1f} |"
        )
    lines += ["", f"Export on costs {on - off:+.1f} µs of server CPU per call."]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    return BenchResult(data, markdown)
