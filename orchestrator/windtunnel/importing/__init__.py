"""`wt import`: production traces → Contract A → universe fixtures, a pack and a scorer stub.

The data flows through the modules in this order:

- `document` reads a file into JSON values (one document, or JSON lines) and `sniff` picks the
  adapter (`--format` forces one), each adapter's `looks_like` built on `sniffing`'s shared
  skeletons (logs by their first record, chat transcripts by their responses and tool use);
- one adapter per format fills a `builder.TraceBuilder`: `mcp_jsonrpc`, `otlp` (with `otlp_spans`,
  `otlp_conventions`, `otlp_messages`), `openai_agents`, `anthropic`,
  `openai_chat`, `openai_responses`, `claude_code` (with `normalize` for arguments, results and
  times, `shape` for typed access to untrusted JSON and the parts of a chat transcript);
- the builder finishes an `envelope.Envelope` (Contract A: windtunnel-bench's
  `windtunnel_interchange` 1 fields, derived by `interchange_view`, plus ours), inferring missing
  schemas (`inference`) and deriving its warnings (`diagnostics`, with `secrets.scan_secrets`);
  `contract_a` reads an envelope in any form: ours, a producer's seed-only one (checked and linted
  by `interchange`, converted by `interchange_read`), or our earlier shape;
- `fixture` turns the envelope into universes, `skeleton` into the pack TOML with its scorer
  stub (`toml_text` writes the values) and `review_note` into `IMPORTED.md`; `importer` ties it
  together for the CLI;
- `export.export_jsonrpc_log` writes any call log as an MCP JSON-RPC log that imports back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .contract_a import decode_envelope, read_envelope
    from .envelope import (
        CONTRACT,
        CONTRACT_VERSION,
        INTERCHANGE_VERSION,
        Envelope,
        encode_envelope,
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
    "INTERCHANGE_VERSION",
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

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".contract_a": ("decode_envelope", "read_envelope"),
        ".envelope": (
            "CONTRACT",
            "CONTRACT_VERSION",
            "INTERCHANGE_VERSION",
            "Envelope",
            "encode_envelope",
        ),
        ".export": ("export_jsonrpc_log",),
        ".fixture": ("plan_fixtures",),
        ".importer": ("ImportOutput", "import_bytes", "import_trace", "write_import"),
        ".secrets": ("scan_secrets",),
        ".sniff": ("FORMATS", "sniff_format"),
    },
)
