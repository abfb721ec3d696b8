"""Whether and where to export OpenTelemetry, from the standard environment and `--otel`.

Export is on as soon as an OTLP endpoint is configured: `OTEL_EXPORTER_OTLP_ENDPOINT` (the base
URL; traces go to `/v1/traces`, logs to `/v1/logs`), a per-signal endpoint
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, used as given), or
`--otel URL` (a base URL, as the first). With only one per-signal endpoint, only that signal is
exported. The protocol is `OTEL_EXPORTER_OTLP_PROTOCOL` (or its per-signal variant):
`http/protobuf` (the default) or `grpc` (a collector's OTLP/gRPC port, usually 4317; its
endpoint is used as given, with no signal path); anything else is one clear error.
`OTEL_SDK_DISABLED=true` turns everything off. Headers, timeout, compression and TLS files are
the exporter's own variables (`OTEL_EXPORTER_OTLP_HEADERS`, ...); the service name is
`OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES`' `service.name`, else `windtunnel`.

Pure: no OpenTelemetry import here, so a command decides at no cost that export is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from ..errors import ConfigError

__all__ = ["OtelConfig", "otel_config"]

SUPPORTED_PROTOCOLS = ("http/protobuf", "grpc")
Protocol = Literal["http/protobuf", "grpc"]
CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True)
class OtelConfig:
    """Where each signal goes (None: that signal is not exported) and what spans capture."""

    traces_endpoint: str | None
    logs_endpoint: str | None
    capture_content: bool = False
    """Tool-call arguments and results on the call spans (`gen_ai.tool.call.arguments` /
    `.result`): opt-in, as the GenAI conventions ask."""
    traces_protocol: Protocol = "http/protobuf"
    logs_protocol: Protocol = "http/protobuf"
    """How each signal is sent: OTLP over HTTP with protobuf, or over gRPC."""

    @property
    def uses_grpc(self) -> bool:
        return "grpc" in (
            self.traces_protocol if self.traces_endpoint else None,
            self.logs_protocol if self.logs_endpoint else None,
        )


def _signal_endpoint(base: str | None, own: str | None, path: str) -> str | None:
    if own:
        return own
    if base:
        return base.rstrip("/") + "/" + path if path else base
    return None


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _protocol(environ: Mapping[str, str], signal: str) -> Protocol:
    """A signal's protocol: its own variable, else the general one, else `http/protobuf`."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = environ.get(name, "").strip()
        if not protocol:
            continue
        if protocol not in SUPPORTED_PROTOCOLS:
            raise ConfigError(
                f"{name}={protocol!r}: Wind Tunnel exports OTLP as http/protobuf (a "
                "collector's OTLP/HTTP port, usually 4318) or grpc (its OTLP/gRPC port, usually "
                "4317)",
                file="<environment>",
            )
        return cast(Protocol, protocol)
    return "http/protobuf"


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
    traces_protocol = _protocol(environ, "TRACES")
    logs_protocol = _protocol(environ, "LOGS")
    # OTLP/HTTP sends each signal to its own path under the base URL; OTLP/gRPC to the
    # collector's address itself (the service names the signal).
    traces_path = "" if traces_protocol == "grpc" else "v1/traces"
    logs_path = "" if logs_protocol == "grpc" else "v1/logs"
    if endpoint is not None:
        # The flag names one collector for every signal, over the per-signal variables.
        traces, logs = (
            _signal_endpoint(base, None, traces_path),
            _signal_endpoint(base, None, logs_path),
        )
    else:
        traces = _signal_endpoint(
            base, environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), traces_path
        )
        logs = _signal_endpoint(base, environ.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"), logs_path)
    if traces is None and logs is None:
        return None
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
    return OtelConfig(
        traces_endpoint=traces,
        logs_endpoint=logs,
        capture_content=capture,
        traces_protocol=traces_protocol,
        logs_protocol=logs_protocol,
    )
