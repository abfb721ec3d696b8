"""`otel.config`: export is on exactly when an OTLP endpoint is configured, the standard way."""

from __future__ import annotations

import pytest

from windtunnel.errors import ConfigError
from windtunnel.otel.config import OtelConfig, otel_config


def test_off_without_an_endpoint() -> None:
    """No endpoint anywhere: off, whatever else is set."""
    assert otel_config({"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}) is None


def test_the_base_endpoint_names_both_signals() -> None:
    """`OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL: each signal gets its path under it."""
    assert otel_config({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}) == OtelConfig(
        traces_endpoint="http://collector:4318/v1/traces",
        logs_endpoint="http://collector:4318/v1/logs",
    )


def test_a_per_signal_endpoint_is_used_as_given_and_alone_exports_only_its_signal() -> None:
    """A per-signal endpoint is the full URL; with no base, the other signal stays off."""
    assert otel_config(
        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://tempo:4318/otlp/v1/traces"}
    ) == OtelConfig(traces_endpoint="http://tempo:4318/otlp/v1/traces", logs_endpoint=None)
    assert otel_config(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://loki:3100/otlp/v1/logs",
        }
    ) == OtelConfig(
        traces_endpoint="http://c:4318/v1/traces", logs_endpoint="http://loki:3100/otlp/v1/logs"
    )


def test_the_flag_turns_export_on_for_both_signals() -> None:
    """`--otel URL` is a base URL for every signal, over the per-signal variables."""
    config = otel_config(
        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://elsewhere/v1/traces"},
        endpoint="http://127.0.0.1:4318",
    )
    assert config == OtelConfig(
        traces_endpoint="http://127.0.0.1:4318/v1/traces",
        logs_endpoint="http://127.0.0.1:4318/v1/logs",
    )


def test_sdk_disabled_wins() -> None:
    """`OTEL_SDK_DISABLED=true` turns export off, endpoint or not."""
    environ = {"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert otel_config(environ) is None


def test_content_capture_is_opt_in() -> None:
    """Arguments and results only with the flag or the GenAI capture variable."""
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert otel_config(base) == OtelConfig(
        "http://c:4318/v1/traces", "http://c:4318/v1/logs", capture_content=False
    )
    captured = {**base, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    assert otel_config(captured) == OtelConfig(
        "http://c:4318/v1/traces", "http://c:4318/v1/logs", capture_content=True
    )
    assert otel_config(base, capture_content=True) == OtelConfig(
        "http://c:4318/v1/traces", "http://c:4318/v1/logs", capture_content=True
    )


@pytest.mark.parametrize("protocol", ["grpc", "http/json"])
def test_a_protocol_it_does_not_speak_is_one_clear_error(protocol: str) -> None:
    """Only OTLP over HTTP with protobuf is exported: another protocol is refused by name."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
    }
    with pytest.raises(ConfigError) as caught:
        otel_config(environ)
    assert str(caught.value) == (
        f"<environment>: OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: Wind Tunnel exports OTLP over "
        "HTTP with protobuf (http/protobuf); point it at a collector's OTLP/HTTP port (usually "
        "4318)"
    )
    ok = {**environ, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    assert otel_config(ok) is not None


def test_an_endpoint_that_is_not_a_url_is_refused() -> None:
    """`--otel localhost:4318` (no scheme) is an error naming the option."""
    with pytest.raises(ConfigError) as caught:
        otel_config({}, endpoint="localhost:4318")
    assert str(caught.value) == "--otel: 'localhost:4318': expected an http:// or https:// URL"
    with pytest.raises(ConfigError) as caught:
        otel_config({"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "loki:3100"})
    assert str(caught.value) == (
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'loki:3100': expected an http:// or https:// URL"
    )
