"""The export configuration a Ray task takes with it, and the export it opens on the worker.

A Ray worker does not see the driver's environment or command line: the driver's resolved
configuration (`--otel` or the endpoint variables) travels with the task as plain data, with
the driver's other `OTEL_*` variables (headers, timeout, compression, service name, resource
attributes: what the exporters and the resource read), so a worker exports its units exactly as
the driver would have, to the same collector, each unit span with its calls under it.

Pure until `worker_sinks` opens an export: deciding that nothing is shipped imports nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

import msgspec

from .config import OtelConfig

if TYPE_CHECKING:
    from ..actors.sinks import Sink

__all__ = ["ShippedOtel", "ship_otel", "worker_sinks"]


class ShippedOtel(msgspec.Struct, frozen=True, kw_only=True):
    """The driver's resolved `OtelConfig` (msgspec carries the dataclass as JSON), with its
    `OTEL_*` variables."""

    config: OtelConfig
    environ: dict[str, str] = msgspec.field(default_factory=dict)


def ship_otel(config: OtelConfig | None, environ: Mapping[str, str]) -> ShippedOtel | None:
    """What a task takes along when the driver exports (None: export is off)."""
    if config is None:
        return None
    return ShippedOtel(
        config=config, environ={k: v for k, v in environ.items() if k.startswith("OTEL_")}
    )


@contextmanager
def worker_sinks(shipped: ShippedOtel | None, *, pack: str) -> Iterator[list[Sink]]:
    """On the worker: the export sink for the task's units (none when nothing was shipped),
    closed (its last records sent, by a deadline) when the shard is done."""
    if shipped is None:
        yield []
        return
    # The task's worker process is its own (`max_calls=1`): the variables go with it.
    os.environ.update(shipped.environ)
    from .. import trace_context
    from .sink import OtelSink

    trace_context.start_capturing()
    sink = OtelSink(shipped.config, units=True, pack=pack)
    try:
        yield [sink]
    finally:
        sink.close()
