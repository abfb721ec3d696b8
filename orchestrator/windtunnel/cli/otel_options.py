"""OpenTelemetry export options of the commands that serve calls (`wt run`, `wt serve`), and the
sink they open: none at all (and no OpenTelemetry import) unless an OTLP endpoint is configured."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..otel.config import otel_config

if TYPE_CHECKING:
    from ..otel.sink import OtelSink

__all__ = ["add_otel_options", "open_otel_sink"]


def add_otel_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("OpenTelemetry export (docs/events.md)")
    group.add_argument(
        "--otel",
        metavar="URL",
        help="export spans and log records over OTLP to this collector (its base URL, "
        "e.g. http://127.0.0.1:4318; OTEL_EXPORTER_OTLP_PROTOCOL=grpc for its gRPC port, "
        "4317), as OTEL_EXPORTER_OTLP_ENDPOINT does; without either, nothing is exported",
    )
    group.add_argument(
        "--otel-capture-content",
        action="store_true",
        help="put tool-call arguments and results on the exported spans (opt-in, as the GenAI "
        "conventions ask; also OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
    )


@contextmanager
def open_otel_sink(
    args: argparse.Namespace, *, units: bool, pack: str | None
) -> Iterator[OtelSink | None]:
    """The export sink when export is on, closed (its last records sent, by a deadline) after."""
    config = otel_config(os.environ, endpoint=args.otel, capture_content=args.otel_capture_content)
    if config is None:
        yield None
        return
    try:
        from ..otel.sink import OtelSink

        if config.uses_grpc:
            import opentelemetry.exporter.otlp.proto.grpc  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"OpenTelemetry export is configured but its packages are missing ({exc.name}): "
            "pip install 'windtunnel[otel]'",
            file="--otel" if args.otel else "<environment>",
        ) from None
    from .. import trace_context

    trace_context.start_capturing()
    sink = OtelSink(config, units=units, pack=pack)
    trace_context.request_sink = sink
    try:
        yield sink
    finally:
        trace_context.request_sink = None
        sink.close()
