"""A real OTLP/HTTP receiver for the tests: `oteltap` (PyPI), on a loopback port of its own.

oteltap runs on asyncio; here it runs in a thread with its own loop and keeps every span and log
record it received, so a test (sync or Trio) waits for what it expects, by a deadline.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from oteltap import OtelTapHttpProtobufReceiver, OtelTapHttpProtobufReceiverSettings

from windtunnel.mcp._request_spans import CALL_METHODS

__all__ = ["Received", "oteltap_receiver"]


def _free_port() -> int:
    # oteltap takes a port number and does not report one it picked: the OS picks it here.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Received:
    """What the receiver got so far (appended by its thread)."""

    def __init__(self, port: int) -> None:
        self.endpoint = f"http://127.0.0.1:{port}"
        self.spans: list[Span] = []
        self.logs: list[LogRecord] = []
        self.requests: list[Span] = []
        """The spans of requests answered without a call record (`initialize`, `tools/list`,
        ...), kept apart: `spans` holds the units and the calls."""
        self.services: set[str] = set()
        """The `service.name` of the resources the spans came with (where the receiver sees
        resources: `grpc_receiver`)."""
        self._changed = threading.Condition()

    def add(self, item: Any) -> None:
        with self._changed:
            if not isinstance(item, Span):
                self.logs.append(item)
            elif _request_method(item) is not None:
                self.requests.append(item)
            else:
                self.spans.append(item)
            self._changed.notify_all()

    def wait_for(self, done: Callable[[Received], bool], timeout: float = 30.0) -> None:
        """Until `done(self)`; fails with what arrived when `timeout` passes first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"the receiver got {len(self.spans)} span(s) and {len(self.logs)} log "
                        f"record(s): {[s.name for s in self.spans]}"
                    )
                self._changed.wait(left)


def _request_method(span: Span) -> str | None:
    """The span's `mcp.method.name` when it is not one of the call methods."""
    for attribute in span.attributes:
        if attribute.key == "mcp.method.name":
            method = attribute.value.string_value
            return None if method in CALL_METHODS else method
    return None


@contextmanager
def oteltap_receiver() -> Iterator[Received]:
    port = _free_port()
    received = Received(port)
    ready = threading.Event()
    stop: list[Callable[[], None]] = []
    failure: list[BaseException] = []

    async def serve() -> None:
        settings = OtelTapHttpProtobufReceiverSettings(http_port=port)
        async with OtelTapHttpProtobufReceiver(settings) as tap:

            async def collect(stream: Any) -> None:
                async for item in stream:
                    received.add(item)

            tasks = [
                asyncio.create_task(collect(tap.stream_traces())),
                asyncio.create_task(collect(tap.stream_logs())),
            ]
            finished = asyncio.Event()
            loop = asyncio.get_running_loop()
            stop.append(lambda: loop.call_soon_threadsafe(finished.set))
            ready.set()
            await finished.wait()
            for task in tasks:
                task.cancel()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # reported to the test below
            failure.append(exc)
            ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30), "oteltap did not start"
    if failure:
        raise failure[0]
    try:
        yield received
    finally:
        stop[0]()
        thread.join(30)
