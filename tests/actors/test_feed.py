"""The WebSocket feed: slow subscribers never block, gaps are announced, `wt watch` follows it."""

from __future__ import annotations

import json
import signal
import subprocess
from typing import Any

import mcp
import pytest
import trio
from trio_websocket import open_websocket_url

from tests.compat import COMPAT_UNIVERSE
from tests.processes import WT, read_until, wt_serve
from windtunnel.actors import MemorySink, open_fleet
from windtunnel.actors.websocket_feed import _Subscriber


def test_subscriber_announces_drops_before_the_next_event() -> None:
    """A full buffer drops and counts; the next delivered event is preceded by the count."""
    subscriber = _Subscriber(buffer=3)
    subscriber.send.send_nowait(b"hello")
    for i in range(5):
        subscriber.offer(json.dumps({"n": i}).encode())
    drained = [subscriber.receive.receive_nowait() for _ in range(3)]
    assert drained == [b"hello", b'{"n": 0}', b'{"n": 1}']
    assert subscriber.dropped == 3
    subscriber.offer(b'{"n": 5}')
    notice = json.loads(subscriber.receive.receive_nowait())
    assert (notice["event"], notice["dropped"]) == ("events_dropped", 3)
    assert subscriber.receive.receive_nowait() == b'{"n": 5}'
    assert subscriber.pending_dropped == 0


async def test_a_subscriber_that_never_reads_does_not_slow_the_fleet() -> None:
    """Thousands of large events pass while one subscriber reads nothing; drops are reported."""
    memory = MemorySink()
    payload = "x" * 20_000
    with trio.fail_after(30):
        async with open_fleet(sinks=[memory], feed_port=0, feed_buffer=8) as fleet:
            assert fleet.feed is not None and fleet.feed.url is not None
            subscribed = fleet.feed.subscribed
            async with open_websocket_url(fleet.feed.url):
                await subscribed.wait()
                for i in range(3000):
                    await fleet.router.emit("tool_call", scenario="flood", n=i, blob=payload)
                await fleet.router.flush()
                assert fleet.feed.total_dropped > 2000
            dropped_while_stuck = fleet.feed.total_dropped
    assert len(memory.named("tool_call")) == 3000
    assert memory.named("fleet_stopped")[0]["dropped"] >= dropped_while_stuck


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
async def test_wt_watch_follows_a_serve_feed(host: str) -> None:
    """`wt watch` prints the feed of `wt serve --feed-port 0`, with a filter, and exits cleanly
    (on an IPv6 bind too: the feed's URL brackets the address and `wt watch` sends it so)."""
    with trio.fail_after(60):
        async with wt_serve(str(COMPAT_UNIVERSE), "--host", host, "--feed-port", "0") as (
            serve,
            first,
        ):
            url = first.decode().strip()
            assert serve.stderr is not None
            banner = await read_until(serve.stderr, b"event feed: ws://")
            banner += await read_until(serve.stderr, b"\n") if not banner.endswith(b"\n") else b""
            feed_url = banner.split(b"event feed: ")[1].split()[0].decode()
            watch = await trio.lowlevel.open_process(
                [
                    *WT,
                    "watch",
                    feed_url,
                    "--event",
                    "universe_divergence",
                    "--event",
                    "feed_subscribed",
                ],
                stdout=subprocess.PIPE,
            )
            assert watch.stdout is not None
            await read_until(watch.stdout, b"feed_subscribed")
            async with mcp.Client(url) as client:
                await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                await client.call_tool("client_lookup", {"query": "Nobody"})
            serve.send_signal(signal.SIGTERM)
            await serve.wait()
            rest = b""
            while chunk := await watch.stdout.receive_some():
                rest += chunk
            await watch.wait()
    lines: list[dict[str, Any]] = [json.loads(line) for line in rest.decode().splitlines() if line]
    divergences = [e for e in lines if e["event"] == "universe_divergence"]
    assert [d["args"] for d in divergences] == [{"query": "Nobody"}]
    assert all(e["event"] in {"universe_divergence", "feed_subscribed"} for e in lines)
    assert serve.returncode == 0
    assert watch.returncode == 0


def test_wt_watch_refuses_non_websocket_urls() -> None:
    """A URL that is not ws:// is a usage error."""
    from windtunnel.cli.main import main

    assert main(["watch", "http://127.0.0.1:1/"]) == 2
