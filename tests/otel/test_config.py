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


@pytest.mark.parametrize(
    "variable", ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]
)
@pytest.mark.parametrize("protocol", ["http/json", "thrift"])
def test_a_protocol_it_does_not_speak_is_one_clear_error(protocol: str, variable: str) -> None:
    """OTLP over HTTP with protobuf and over gRPC are exported: another protocol is refused by
    name, in the general or a per-signal variable."""
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", variable: protocol}
    with pytest.raises(ConfigError) as caught:
        otel_config(environ)
    assert str(caught.value) == (
        f"<environment>: {variable}={protocol!r}: Wind Tunnel exports OTLP as http/protobuf (a "
        "collector's OTLP/HTTP port, usually 4318) or grpc (its OTLP/gRPC port, usually 4317)"
    )


def test_grpc_sends_each_signal_to_the_endpoint_itself() -> None:
    """`grpc`: no signal path is added (the gRPC service names the signal); a per-signal
    protocol overrides the general one for its signal only."""
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    assert otel_config(base) == OtelConfig(
        "http://c:4317", "http://c:4317", traces_protocol="grpc", logs_protocol="grpc"
    )
    assert otel_config({}, endpoint="http://c:4317") != otel_config(base)
    assert otel_config(
        {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, endpoint="http://c:4317"
    ) == otel_config(base)
    mixed = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://tempo:4317",
    }
    config = otel_config(mixed)
    assert config == OtelConfig(
        "http://tempo:4317", "http://c:4318/v1/logs", traces_protocol="grpc"
    )
    assert config is not None and config.uses_grpc
    assert not OtelConfig(None, "http://c:4318/v1/logs", traces_protocol="grpc").uses_grpc


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
