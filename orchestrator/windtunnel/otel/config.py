"""Whether and where to export OpenTelemetry, from the standard environment and `--otel`.

Export is on as soon as an OTLP endpoint is configured: `OTEL_EXPORTER_OTLP_ENDPOINT` (the base
URL; traces go to `/v1/traces`, logs to `/v1/logs`), a per-signal endpoint
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, used as given), or
`--otel URL` (a base URL, as the first). With only one per-signal endpoint, only that signal is
exported. `OTEL_SDK_DISABLED=true` turns everything off. Headers, timeout, compression and TLS
files are the exporter's own variables (`OTEL_EXPORTER_OTLP_HEADERS`, ...); the service name is
`OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES`' `service.name`, else `windtunnel`.

Pure: no OpenTelemetry import here, so a command decides at no cost that export is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["OtelConfig", "otel_config"]

SUPPORTED_PROTOCOLS = ("http/protobuf",)
CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True)
class OtelConfig:
    """Where each signal goes (None: that signal is not exported) and what spans capture."""

    traces_endpoint: str | None
    logs_endpoint: str | None
    capture_content: bool = False
    """Tool-call arguments and results on the call spans (`gen_ai.tool.call.arguments` /
    `.result`): opt-in, as the GenAI conventions ask."""


def _signal_endpoint(base: str | None, own: str | None, path: str) -> str | None:
    if own:
        return own
    if base:
        return base.rstrip("/") + "/" + path
    return None


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def otel_config(
    environ: Mapping[str, str],
    *,
    endpoint: str | None = None,
    capture_content: bool = False,
) -> OtelConfig | None:
    """The export configuration, or None when export is off (the usual case)."""
    if _true(environ.get("OTEL_SDK_DISABLED")):
        return None
    base = endpoint or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    if endpoint is not None:
        # The flag names one collector for every signal, over the per-signal variables.
        traces, logs = (
            _signal_endpoint(base, None, "v1/traces"),
            _signal_endpoint(base, None, "v1/logs"),
        )
    else:
        traces = _signal_endpoint(
            base, environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "v1/traces"
        )
        logs = _signal_endpoint(base, environ.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"), "v1/logs")
    if traces is None and logs is None:
        return None
    for name in (
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
    ):
        protocol = environ.get(name)
        if protocol and protocol not in SUPPORTED_PROTOCOLS:
            raise ConfigError(
                f"{name}={protocol!r}: Wind Tunnel exports OTLP over HTTP with protobuf "
                f"(http/protobuf); point it at a collector's OTLP/HTTP port (usually 4318)",
                file="<environment>",
            )
    given = (
        [("--otel", endpoint)]
        if endpoint is not None
        else [
            (name, environ.get(name))
            for name in (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
            )
        ]
    )
    for name, url in given:
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(f"{url!r}: expected an http:// or https:// URL", file=name)
    capture = capture_content or _true(environ.get(CAPTURE_CONTENT_VARIABLE))
    return OtelConfig(traces_endpoint=traces, logs_endpoint=logs, capture_content=capture)
