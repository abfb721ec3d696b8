"""Event sinks: where the router's events go. `publish` never blocks the router."""

from __future__ import annotations

from typing import Any, Protocol, TextIO, runtime_checkable

from ..calls import MCPCall
from ..line_format import LineRenderer, json_line, line_renderer
from .events import make_event
from .pipe_writer import PipeWriter

__all__ = [
    "CallSink",
    "JsonLinesSink",
    "LossySink",
    "MemorySink",
    "PipeSink",
    "Sink",
    "UnitSink",
    "drop_notice",
]


class Sink(Protocol):
    """Receives every event, in order. Must return at once (buffer, drop and count if needed)."""

    def publish(self, event: dict[str, Any]) -> None: ...


@runtime_checkable
class LossySink(Sink, Protocol):
    """A sink that drops events rather than wait for a slow reader, and counts them."""

    @property
    def total_dropped(self) -> int: ...


@runtime_checkable
class CallSink(Sink, Protocol):
    """A sink that also takes each call itself (what its events are made of: timing, match),
    after that call's events were published. `trace_parent` is the W3C `traceparent` the
    request carried in `_meta`, when `trace_context` captures it."""

    def publish_call(
        self,
        call: MCPCall,
        *,
        unit_id: str,
        scenario: str,
        upstream: str,
        events: list[dict[str, Any]],
        trace_parent: str | None,
    ) -> None: ...


@runtime_checkable
class UnitSink(Sink, Protocol):
    """A sink that also takes each work unit's scored trace (`runner.trace.Trace`), and can
    name the trace context its agent should run in (`TRACEPARENT`)."""

    def publish_unit(self, trace: Any) -> None: ...

    def traceparent(self, unit_id: str) -> str | None: ...


class JsonLinesSink:
    """One JSON object per line to a text stream (an event file, stderr), flushed per event.

    The line is the one line format's JSON (`line_format.json_line`), written directly rather
    than through a structlog logger, which costs more per event (docs/benchmarks.md) and would
    apply the app's level filter to events.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.error: OSError | None = None
        """The first write error (a full disk); from then on events are counted in `dropped`."""
        self.dropped = 0

    def publish(self, event: dict[str, Any]) -> None:
        if self.error is not None:
            self.dropped += 1
            return
        try:
            self.stream.write(json_line(event).decode())
            self.stream.flush()
        except OSError as exc:
            # A sink must never take the router down; whoever owns the stream reports this.
            self.error = exc
            self.dropped += 1


def drop_notice(count: int, render: LineRenderer = json_line) -> bytes:
    """The `events_dropped` line a stream reader gets where `count` lines are missing."""
    return render(make_event("events_dropped", level="warning", dropped=count))


class PipeSink:
    """Lines in the process's stderr style (`render`; JSON lines by default) into a `PipeWriter`.

    For a stream whose reader may stall or never read: an event that finds the writer's buffer
    full is dropped and counted, and the reader gets an `events_dropped` line with the count
    before the next event that fits (see `pipe_writer`).
    """

    def __init__(self, writer: PipeWriter, render: LineRenderer | None = None) -> None:
        self.writer = writer
        self.render = render if render is not None else line_renderer("json")

    @property
    def total_dropped(self) -> int:
        return self.writer.dropped

    def publish(self, event: dict[str, Any]) -> None:
        self.writer.offer(self.render(event))


class MemorySink:
    """Keeps every event in a list (tests, and the runner's per-scenario warnings)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def publish(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def named(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == name]
