"""OpenTelemetry export (OTLP): `config` decides whether it is on, without importing the SDK;
`sink.OtelSink` exports (it needs the `otel` extra: `pip install 'windtunnel[otel]'`)."""
