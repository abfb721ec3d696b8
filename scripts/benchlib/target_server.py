#!/usr/bin/env python3
"""A benchmark target in its own process.

    target_server.py recorded UNIVERSE [--profile OUT]   our RecordedMCPServer, Streamable HTTP
    target_server.py canned ANSWERS [--profile OUT]      hypercorn on Trio, canned bytes, no MCP
    target_server.py stdio-canned ANSWERS                a stdio JSON-RPC responder, no SDK

HTTP targets print their URL on stdout once bound and stop when stdin closes; with `--profile`
they write cProfile stats to OUT on the way out. The stdio responder serves stdin/stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE.parents[1] / "orchestrator")]


def _stdio_canned(answers_path: str) -> None:
    from benchlib.targets import canned_reply

    answers = json.loads(Path(answers_path).read_text())
    read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
    while line := read():
        if not line.strip():
            continue
        reply = canned_reply(answers, line)
        if reply is not None:
            write(reply + b"\n")
            flush()


async def _serve_http(kind: str, source: str) -> None:
    import trio

    async def wait_stdin_closed() -> None:
        # A "profile" line starts the profiler (after the caller's warm-up); EOF stops the server.
        while line := await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True):
            if line.strip() == "profile" and PROFILER is not None:
                PROFILER.enable()
        if PROFILER is not None:
            PROFILER.disable()

    if kind == "recorded":
        from windtunnel.mcp.recorded import RecordedMCPServer

        server = RecordedMCPServer(source)
        server.log_events = False
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            print(url, flush=True)
            await wait_stdin_closed()
            await server.stop()
        return

    from benchlib.targets import canned_asgi_app
    from hypercorn.app_wrappers import ASGIWrapper
    from hypercorn.trio.run import worker_serve
    from windtunnel.mcp._bridge import _config, bind_sockets

    app = canned_asgi_app(json.loads(Path(source).read_text()))
    sockets = bind_sockets("127.0.0.1", 0)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            lambda task_status: worker_serve(
                ASGIWrapper(app),  # type: ignore[arg-type]
                _config("127.0.0.1", 0),
                sockets=sockets,
                shutdown_trigger=shutdown.wait,
                task_status=task_status,
            )
        )
        print(binds[0] + "/mcp", flush=True)
        await wait_stdin_closed()
        shutdown.set()


PROFILER = None


def main() -> None:
    global PROFILER
    kind, source, *rest = sys.argv[1:]
    if kind == "stdio-canned":
        _stdio_canned(source)
        return
    import trio

    profile = rest[1] if rest[:1] == ["--profile"] else None
    if profile is None:
        trio.run(_serve_http, kind, source)
        return
    import cProfile

    PROFILER = cProfile.Profile()
    try:
        trio.run(_serve_http, kind, source)
    finally:
        PROFILER.dump_stats(profile)


if __name__ == "__main__":
    main()
