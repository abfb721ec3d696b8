"""The export thread: records handed over from the router become spans and log records, and
leave in batches through the OpenTelemetry SDK's OTLP/HTTP exporters.

The router only appends to a bounded queue (`offer`): building spans, encoding protobuf and
waiting on a slow or unreachable collector all happen on this thread, so export never slows the
servers. What does not fit in the queue is dropped and counted, and so are the records of a batch
the exporter could not deliver (its own retries and timeout, `OTEL_EXPORTER_OTLP_TIMEOUT`, apply);
`dropped` is what `fleet_stopped` reports. The SDK's processors are not used: this thread is the
batch processor, and it knows exactly what was lost (the SDK's count only its own metrics see).

Every span is built by the SDK's tracer with the times the call log recorded; a unit's span gets
the ids its agent was handed as `TRACEPARENT` before the span was made (`_PlannedIds`).
"""

from __future__ import annotations

import collections
import copy
import json
import threading
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry._logs import SeverityNumber
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import (
    LoggerProvider,
    LogRecordProcessor,
    ReadableLogRecord,
    ReadWriteLogRecord,
)
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .. import __version__
from .config import OtelConfig
from .conventions import AttributeValue, CallSpan

__all__ = ["CallRecord", "EventRecord", "OtlpExport", "UnitEnd", "UnitStart"]

QUEUE_SIZE = 8192
"""Records waiting for the export thread; past this they are dropped and counted."""
BATCH_SIZE = 512
SCHEDULE_DELAY_S = 0.5
"""How long a record may wait for its batch when the queue is not filling up."""
SCOPE = "windtunnel"


@dataclass(frozen=True)
class UnitStart:
    unit_id: str
    name: str
    attributes: dict[str, Any]
    start_ns: int
    trace_id: int
    span_id: int


@dataclass(frozen=True)
class UnitEnd:
    unit_id: str
    end_ns: int
    attributes: dict[str, AttributeValue]
    error: str | None
    evaluations: list[dict[str, AttributeValue]]


@dataclass(frozen=True)
class EventRecord:
    """A divergence or fault: a log record linked to its call's span."""

    event_name: str
    severity: str
    attributes: dict[str, AttributeValue]
    body: dict[str, Any]
    time_ns: int


@dataclass(frozen=True)
class CallRecord:
    unit_id: str
    span: CallSpan
    trace_parent: str | None
    """The `traceparent` the request carried: the span's parent (the unit's span is linked)."""
    events: list[EventRecord]


Record = UnitStart | UnitEnd | CallRecord


class _PlannedIds(IdGenerator):
    """Random ids, except for the next span when the export thread planned its ids."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()
        self.planned: tuple[int, int] | None = None

    def generate_span_id(self) -> int:
        if self.planned is not None:
            span_id = self.planned[1]
            self.planned = None
            return span_id
        return self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        if self.planned is not None:
            return self.planned[0]
        return self._random.generate_trace_id()


class _Collect(SpanProcessor, LogRecordProcessor):
    """Keeps what the SDK finished until the thread sends it (one thread: no lock needed)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []
        self.logs: list[ReadableLogRecord] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        # What the exporters take, as the SDK's own processors make it: the record without the
        # context it was emitted in (its trace and span ids are copied already).
        record = copy.copy(log_record.log_record)
        record.context = Context()
        self.logs.append(
            ReadableLogRecord(
                log_record=record,
                resource=log_record.resource or Resource.get_empty(),
                instrumentation_scope=log_record.instrumentation_scope,
                limits=log_record.limits,
            )
        )

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def resource() -> Resource:
    """`OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` when set, else `windtunnel`."""
    detected = Resource.create({"service.version": __version__})
    if str(detected.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        # The SDK's default (`unknown_service:python`) names nothing a team would look for.
        detected = detected.merge(Resource({SERVICE_NAME: "windtunnel"}))
    return detected


def _span_exporter(config: OtelConfig) -> SpanExporter | None:
    if config.traces_endpoint is None:
        return None
    if config.traces_protocol == "grpc":
        # Loaded only for gRPC: grpcio is the heavier half of the extra.
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        return GrpcSpanExporter(endpoint=config.traces_endpoint)
    return OTLPSpanExporter(endpoint=config.traces_endpoint)


def _log_exporter(config: OtelConfig) -> LogRecordExporter | None:
    if config.logs_endpoint is None:
        return None
    if config.logs_protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
            OTLPLogExporter as GrpcLogExporter,
        )

        return GrpcLogExporter(endpoint=config.logs_endpoint)
    return OTLPLogExporter(endpoint=config.logs_endpoint)


class OtlpExport:
    """`offer` records from any thread (never blocks); `close` sends what is left, by a
    deadline."""

    def __init__(self, config: OtelConfig, *, queue_size: int = QUEUE_SIZE) -> None:
        self.config = config
        self.queue_size = queue_size
        self._queue: collections.deque[Record] = collections.deque()
        self._wake = threading.Event()
        self._stopping = False
        self.queue_dropped = 0
        """Records that found the queue full (counted by the offering thread)."""
        self.export_failed = 0
        """Spans and log records an export could not deliver (counted by the export thread)."""
        self._collect = _Collect()
        self._ids = _PlannedIds()
        res = resource()
        self._tracer_provider = TracerProvider(resource=res, id_generator=self._ids)
        self._tracer_provider.add_span_processor(self._collect)
        self._tracer = self._tracer_provider.get_tracer(SCOPE, __version__)
        self._logger_provider = LoggerProvider(resource=res)
        self._logger_provider.add_log_record_processor(self._collect)
        self._logger = self._logger_provider.get_logger(SCOPE, __version__)
        self._span_exporter = _span_exporter(config)
        self._log_exporter = _log_exporter(config)
        self._units: dict[str, trace_api.Span] = {}
        self._thread = threading.Thread(target=self._run, name="wt-otlp-export", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        """Records waiting for the export thread."""
        return len(self._queue)

    @property
    def dropped(self) -> int:
        return self.queue_dropped + self.export_failed

    def offer(self, record: Record) -> None:
        if len(self._queue) >= self.queue_size:
            self.queue_dropped += 1
            return
        self._queue.append(record)
        if len(self._queue) >= BATCH_SIZE:
            self._wake.set()

    def close(self, deadline_s: float) -> None:
        """Export what is queued, then stop; past `deadline_s` whatever is left is dropped."""
        self._stopping = True
        self._wake.set()
        self._thread.join(deadline_s)
        if self._thread.is_alive():
            # A collector that never answers: give up on it (the thread is a daemon).
            self.queue_dropped += len(self._queue)
            self._shutdown_exporters()

    # -- the export thread ------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            self._wake.wait(SCHEDULE_DELAY_S)
            self._wake.clear()
            stopping = self._stopping
            self._drain()
            if stopping:
                break
        self._end_open_units()
        self._send()
        self._shutdown_exporters()

    def _shutdown_exporters(self) -> None:
        if self._span_exporter is not None:
            self._span_exporter.shutdown()
        if self._log_exporter is not None:
            self._log_exporter.shutdown()  # type: ignore[no-untyped-call]

    def _drain(self) -> None:
        while True:
            try:
                record = self._queue.popleft()
            except IndexError:
                break
            self._build(record)
            if len(self._collect.spans) + len(self._collect.logs) >= BATCH_SIZE:
                self._send()
        self._send()

    def _build(self, record: Record) -> None:
        if isinstance(record, UnitStart):
            self._ids.planned = (record.trace_id, record.span_id)
            self._units[record.unit_id] = self._tracer.start_span(
                record.name,
                context=trace_api.set_span_in_context(trace_api.INVALID_SPAN),
                kind=SpanKind.INTERNAL,
                attributes=record.attributes,
                start_time=record.start_ns,
            )
            self._ids.planned = None
        elif isinstance(record, CallRecord):
            self._call(record)
        else:
            self._end_unit(record)

    def _call(self, record: CallRecord) -> None:
        unit = self._units.get(record.unit_id)
        links: list[Link] = []
        parent: Any = trace_api.set_span_in_context(trace_api.INVALID_SPAN)
        if record.trace_parent is not None:
            given = TraceContextTextMapPropagator().extract({"traceparent": record.trace_parent})
            if trace_api.get_current_span(given).get_span_context().is_valid:
                parent = given
                if unit is not None:
                    links.append(Link(unit.get_span_context()))
            elif unit is not None:
                parent = trace_api.set_span_in_context(unit)
        elif unit is not None:
            parent = trace_api.set_span_in_context(unit)
        spec = record.span
        span = self._tracer.start_span(
            spec.name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=spec.attributes,
            links=links,
            start_time=spec.start_ns,
        )
        if spec.error is not None:
            span.set_status(Status(StatusCode.ERROR, spec.error or None))
        for event in record.events:
            # Also on the span, for backends that read traces only (Phoenix, Jaeger, Tempo).
            span.add_event(
                event.event_name,
                {**event.attributes, "windtunnel.event": json.dumps(event.body, default=str)},
                timestamp=event.time_ns,
            )
        span.end(end_time=spec.end_ns)
        linked = trace_api.set_span_in_context(span)
        for event in record.events:
            self._logger.emit(
                timestamp=event.time_ns,
                context=linked,
                severity_number=(
                    SeverityNumber.ERROR if event.severity == "error" else SeverityNumber.WARN
                ),
                severity_text=event.severity.upper(),
                body=event.body,
                attributes=event.attributes,
                event_name=event.event_name,
            )

    def _end_unit(self, record: UnitEnd) -> None:
        unit = self._units.pop(record.unit_id, None)
        if unit is None:
            return
        unit.set_attributes(record.attributes)
        if record.error is not None:
            unit.set_status(Status(StatusCode.ERROR, record.error))
        context = trace_api.set_span_in_context(unit)
        for evaluation in record.evaluations:
            unit.add_event("gen_ai.evaluation.result", evaluation, timestamp=record.end_ns)
        for evaluation in record.evaluations:
            self._logger.emit(
                timestamp=record.end_ns,
                context=context,
                severity_number=SeverityNumber.INFO,
                severity_text="INFO",
                attributes=evaluation,
                event_name="gen_ai.evaluation.result",
            )
        unit.end(end_time=record.end_ns)

    def _end_open_units(self) -> None:
        """Units whose verdict never came (a cancelled run): ended now, without one."""
        for unit in self._units.values():
            unit.end()
        self._units.clear()

    def _send(self) -> None:
        spans, self._collect.spans = self._collect.spans, []
        logs, self._collect.logs = self._collect.logs, []
        # A signal with no endpoint is built all the same (logs link to spans) and not sent.
        span_exporter, log_exporter = self._span_exporter, self._log_exporter
        if spans and span_exporter and span_exporter.export(spans) != SpanExportResult.SUCCESS:
            self.export_failed += len(spans)
        if logs and log_exporter and log_exporter.export(logs) != LogRecordExportResult.SUCCESS:
            self.export_failed += len(logs)
