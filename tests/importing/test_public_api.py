"""The public surface of `windtunnel.importing` is pinned."""

from __future__ import annotations

import windtunnel.importing


def test_public_names() -> None:
    """Adding or removing a public name is a deliberate change to this list."""
    assert sorted(windtunnel.importing.__all__) == [
        "CONTRACT",
        "CONTRACT_VERSION",
        "Envelope",
        "FORMATS",
        "INTERCHANGE_VERSION",
        "ImportOutput",
        "decode_envelope",
        "encode_envelope",
        "export_jsonrpc_log",
        "import_bytes",
        "import_trace",
        "plan_fixtures",
        "read_envelope",
        "scan_secrets",
        "sniff_format",
        "write_import",
    ]
    assert all(hasattr(windtunnel.importing, name) for name in windtunnel.importing.__all__)


def test_formats() -> None:
    """`--format` accepts Contract A and one name per adapter."""
    assert windtunnel.importing.FORMATS == (
        "contract-a",
        "anthropic-messages",
        "claude-code-jsonl",
        "mcp-jsonrpc",
        "openai-agents",
        "openai-chat",
        "openai-responses",
        "otlp-json",
    )
