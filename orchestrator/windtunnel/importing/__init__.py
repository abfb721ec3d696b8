"""`wt import`: production traces → Contract A → universe fixtures, a pack and a scorer stub.

Adapters (one module per format) turn a trace into a Contract A envelope (`envelope`); the fixture
(`fixture`), the scenario skeleton with its scorer stub (`skeleton`) are generated from the envelope
alone. `scan_secrets` flags values that look like secrets or personal data; `export_jsonrpc_log`
writes a call log as a raw MCP JSON-RPC log that imports back.
"""

from __future__ import annotations

from .envelope import (
    CONTRACT,
    CONTRACT_VERSION,
    Envelope,
    decode_envelope,
    encode_envelope,
    read_envelope,
)
from .export import export_jsonrpc_log
from .fixture import plan_fixtures
from .importer import ImportOutput, import_bytes, import_trace, write_import
from .secrets import scan_secrets
from .sniff import FORMATS, sniff_format

__all__ = [
    "CONTRACT",
    "CONTRACT_VERSION",
    "FORMATS",
    "Envelope",
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
