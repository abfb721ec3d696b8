#!/usr/bin/env python3
"""One fleet measurement in a fresh process (so peak RSS is this size's own):

    fleet_worker.py N SECONDS UNIVERSE CLIENTS

Opens a fleet, starts N recorded servers (one scenario each), sustains `tools/call` across all
of them for SECONDS with CLIENTS concurrent raw HTTP clients round-robin over the URLs, stops
them, and prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trio

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE.parents[1] / "orchestrator")]

from benchlib.measure import rss_kb  # noqa: E402  # importable once the path above is set


class RawConnection:
    """A kept-alive HTTP/1.1 connection posting to one URL: the least client can do."""

    def __init__(self, stream: trio.SocketStream, host: str, path: str) -> None:
        self.stream = stream
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in _headers().items())
        ).encode()
        self.buffer = b""
        self.closing = False
        """The server said `Connection: close` (e.g. hypercorn's `keep_alive_max_requests`)."""

    @classmethod
    async def open(cls, url: str) -> RawConnection:
        import trio

        hostport, _, path = url.split("//", 1)[1].partition("/")
        host, port = hostport.rsplit(":", 1)
        stream = await trio.open_tcp_stream(host, int(port))
        return cls(stream, hostport, "/" + path)

    async def post(self, body: bytes) -> tuple[int, bytes]:
        stream = self.stream
        await stream.send_all(self.head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += await self._receive()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                self.closing = True
        while len(rest) < length:
            rest += await self._receive()
        self.buffer = rest[length:]
        return status, rest[:length]

    async def _receive(self) -> bytes:
        data = await self.stream.receive_some(65536)
        if not data:
            raise ConnectionError("the server closed the connection mid-response")
        return data


def _headers() -> dict[str, str]:
    from benchlib.httpload import HEADERS

    return HEADERS


async def main(n: int, seconds: float, universe: str, clients: int) -> dict[str, float]:
    import trio

    from benchlib.httpload import CALL_BODY
    from windtunnel.actors.fleet import open_fleet
    from windtunnel.mcp import _http, _sdk_server  # noqa: F401
    from windtunnel.mcp.recorded import RecordedMCPServer

    # The HTTP serving stack (the SDK, hypercorn) loads with the first server that serves over
    # HTTP: imported here, before the clock starts, a start measures starting servers only.
    out: dict[str, float] = {"servers": n, "rss_before_kb": rss_kb("VmRSS")}
    async with open_fleet() as fleet, AsyncExitStack() as stack:
        wall, cpu = time.perf_counter(), time.process_time()
        urls = []
        for i in range(n):
            run = await stack.enter_async_context(
                fleet.scenario(f"s{i}", {"weather": RecordedMCPServer(universe)})
            )
            urls.append(run.urls["weather"])
        out["start_s"] = time.perf_counter() - wall
        out["start_cpu_s"] = time.process_time() - cpu
        out["rss_up_kb"] = rss_kb("VmRSS")

        calls = 0
        failures = 0
        streams: list[RawConnection] = []

        async def worker(offset: int, deadline: float) -> None:
            nonlocal calls, failures
            own: dict[int, RawConnection] = {}
            i = offset
            while time.perf_counter() < deadline:
                index = i % n
                conn = own.get(index)
                if conn is None or conn.closing:
                    conn = own[index] = await RawConnection.open(urls[index])
                    streams.append(conn)
                status, body = await conn.post(CALL_BODY)
                if status != 200 or b'"result"' not in body:
                    failures += 1
                calls += 1
                i += clients

        wall, cpu = time.perf_counter(), time.process_time()
        async with trio.open_nursery() as nursery:
            for k in range(clients):
                nursery.start_soon(worker, k, wall + seconds)
        elapsed = time.perf_counter() - wall
        for conn in streams:
            await conn.stream.aclose()
        out["calls"] = calls
        out["failures"] = failures
        out["calls_per_s"] = calls / elapsed
        out["cpu_us_per_call"] = (time.process_time() - cpu) / max(calls, 1) * 1e6
        out["servers_called"] = min(n, calls)
        # Servers answer before the router has logged the call: count once it caught up.
        await fleet.router.flush()
        logged = sum(len(run.call_log()) for run in fleet.running.values())
        out["rss_peak_kb"] = rss_kb("VmHWM")
        wall, cpu = time.perf_counter(), time.process_time()
        await stack.aclose()
        out["stop_s"] = time.perf_counter() - wall
        out["stop_cpu_s"] = time.process_time() - cpu
        out["logged_calls"] = logged
    out["rss_peak_kb"] = max(out["rss_peak_kb"], rss_kb("VmHWM"))
    return out


if __name__ == "__main__":
    import trio

    n, seconds, universe, clients = sys.argv[1:5]
    print(json.dumps(trio.run(main, int(n), float(seconds), universe, int(clients))))
