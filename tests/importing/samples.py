"""The hand-written sample traces, one or more per adapter, and how each is imported."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"
TRACES = DATA / "traces"
GOLDEN = DATA / "golden"


@dataclass(frozen=True)
class Sample:
    name: str
    file: str
    format: str | None = None
    task: str | None = None

    @property
    def path(self) -> Path:
        return TRACES / self.file

    @property
    def golden(self) -> Path:
        return GOLDEN / f"{self.name}.wtin.json"


SAMPLES: tuple[Sample, ...] = (
    Sample("mcp_jsonrpc_calendar", "calendar.jsonl", task="Book a room for 45 minutes tomorrow."),
    Sample("mcp_jsonrpc_multi", "multi_upstream.jsonl", task="Chase Bluewing's overdue invoice."),
    Sample("anthropic_refund", "anthropic_refund.json"),
    Sample("anthropic_no_tools", "anthropic_no_tools.json", format="anthropic-messages"),
    Sample("anthropic_exchanges", "anthropic_exchanges.jsonl"),
    Sample("openai_chat_invoice", "openai_chat_invoice.json"),
    Sample("openai_chat_exchanges", "openai_chat_exchanges.json"),
    Sample("openai_responses_kb", "openai_responses_kb.json"),
    Sample("otlp_orders", "otlp_orders.json"),
    Sample("otlp_chat_only", "otlp_chat_only.jsonl"),
    Sample("claude_code_session", "claude_code_session.jsonl"),
    Sample("contract_a_minimal", "contract_a_minimal.wtin.json"),
)

SAMPLE_IDS = [sample.name for sample in SAMPLES]
