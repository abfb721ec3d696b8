#!/usr/bin/env python3
"""A benchmark target in its own process.

    target_server.py recorded UNIVERSE [--profile OUT]   our RecordedMCPServer, Streamable HTTP
    target_server.py recorded-sdk UNIVERSE              the same, no fast path (`fast_path=False`)
    target_server.py session UNIVERSE                   `recorded` (a universe that has sessions)
    target_server.py session-sdk UNIVERSE               `recorded-sdk` (the same)
    target_server.py canned ANSWERS [--profile OUT]      the same HTTP server, canned bytes, no MCP
    target_server.py hypercorn ANSWERS [--profile OUT]   stock `hypercorn.trio` worker, canned bytes
    target_server.py h11 ANSWERS [--profile OUT]         a minimal Trio + h11 loop, canned bytes
    target_server.py stdio-canned ANSWERS                a stdio JSON-RPC responder, no SDK
    target_server.py http-raw ANSWERS                    a minimal asyncio HTTP/1.1 responder

HTTP targets print their URL on stdout once bound and stop when stdin closes; with `--profile`
they write cProfile stats to OUT on the way out. The stdio responder serves stdin/stdout. The
Trio targets freeze their start-up heap before serving, as `wt serve` does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE.parents[1] / "orchestrator")]

from benchlib.targets import CannedAnswers  # noqa: E402
from windtunnel._gc import tune_gc_for_serving  # noqa: E402


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


def _http_raw(answers_path: str) -> None:
    """The least an HTTP server can do: read a request, write the canned reply (keep-alive)."""
    import asyncio
    import threading

    from benchlib.targets import canned_reply

    answers = json.loads(Path(answers_path).read_text())

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                method = head.split(b" ", 1)[0]
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length) if length else b""
                reply = canned_reply(answers, body) if method == b"POST" and body else None
                if reply is None:
                    writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                else:
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n" % len(reply) + reply
                    )
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/mcp", flush=True)
        closed = asyncio.Event()
        loop = asyncio.get_running_loop()
        threading.Thread(
            target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(closed.set)), daemon=True
        ).start()
        await closed.wait()
        server.close()

    asyncio.run(main())


async def _serve_h11(answers: CannedAnswers, wait_stdin_closed: Any) -> None:
    """The least a Trio + h11 server does per request: parse it, write the canned reply in one
    send, keep the connection. No ASGI, no timeouts: a floor to compare hypercorn's cost with."""
    import h11
    import trio

    from benchlib.targets import canned_reply

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                if not data:
                    return
                conn.receive_data(data)
            elif isinstance(event, h11.Request):
                body.clear()
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                reply = canned_reply(answers, bytes(body)) or b""
                headers = [("content-length", str(len(reply)))]
                if reply:
                    headers.append(("content-type", "application/json"))
                out = conn.send(h11.Response(status_code=200 if reply else 202, headers=headers))
                out += conn.send(h11.Data(data=reply)) + conn.send(h11.EndOfMessage())
                await stream.send_all(out)
                conn.start_next_cycle()
            else:
                return

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        print(f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/mcp", flush=True)
        tune_gc_for_serving()
        await wait_stdin_closed()
        nursery.cancel_scope.cancel()


async def _serve_http(kind: str, source: str) -> None:
    import trio

    async def wait_stdin_closed() -> None:
        # A "profile" line starts the profiler (after the caller's warm-up); EOF stops the server.
        while line := await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True):
            if line.strip() == "profile" and PROFILER is not None:
                PROFILER.enable()
        if PROFILER is not None:
            PROFILER.disable()

    if kind.startswith(("recorded", "session")):
        from windtunnel.mcp.recorded import RecordedMCPServer

        server = RecordedMCPServer(source, fast_path=not kind.endswith("-sdk"))
        server.log_events = False
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            print(url, flush=True)
            tune_gc_for_serving()
            await wait_stdin_closed()
            await server.stop()
        return

    answers = json.loads(Path(source).read_text())  # noqa: ASYNC240  # at start-up
    if kind == "h11":
        await _serve_h11(answers, wait_stdin_closed)
        return

    from hypercorn.app_wrappers import ASGIWrapper
    from hypercorn.trio.run import worker_serve

    from benchlib.targets import canned_asgi_app
    from windtunnel.mcp._http_serving import bind_sockets, worker_config
    from windtunnel.mcp._http_worker import serve

    # `canned` runs on the worker our servers use; `hypercorn` on hypercorn's own Trio worker.
    worker = serve if kind == "canned" else worker_serve
    app = canned_asgi_app(answers)
    sockets = bind_sockets("127.0.0.1", 0)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            lambda task_status: worker(
                ASGIWrapper(app),
                worker_config("127.0.0.1", 0),
                sockets=sockets,
                shutdown_trigger=shutdown.wait,
                task_status=task_status,
            )
        )
        print(binds[0] + "/mcp", flush=True)
        tune_gc_for_serving()
        await wait_stdin_closed()
        shutdown.set()


PROFILER = None


def main() -> None:
    global PROFILER
    kind, source, *rest = sys.argv[1:]
    if kind == "stdio-canned":
        _stdio_canned(source)
        return
    if kind == "http-raw":
        _http_raw(source)
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
