"""Which adapter reads a trace: format sniffing, and the registry `--format` chooses from."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import TraceError
from . import (
    anthropic,
    claude_code,
    mcp_jsonrpc,
    openai_agents,
    openai_chat,
    openai_responses,
    otlp,
)
from .builder import TraceBuilder
from .contract_a import is_contract_a
from .document import Document

__all__ = ["ADAPTERS", "CONTRACT_A", "FORMATS", "sniff_format"]

CONTRACT_A = "contract-a"


# Sniffing order: the most specific signals first (a Claude Code line also holds an Anthropic
# message; an OTLP file holds GenAI messages).
_ORDER: tuple[
    tuple[str, Callable[[Document], bool], Callable[[Document, TraceBuilder], None]], ...
] = (
    (otlp.FORMAT, otlp.looks_like, otlp.read),
    (openai_agents.FORMAT, openai_agents.looks_like, openai_agents.read),
    (mcp_jsonrpc.FORMAT, mcp_jsonrpc.looks_like, mcp_jsonrpc.read),
    (claude_code.FORMAT, claude_code.looks_like, claude_code.read),
    (openai_responses.FORMAT, openai_responses.looks_like, openai_responses.read),
    (anthropic.FORMAT, anthropic.looks_like, anthropic.read),
    (openai_chat.FORMAT, openai_chat.looks_like, openai_chat.read),
)

ADAPTERS: dict[str, Callable[[Document, TraceBuilder], None]] = {
    name: read for name, _, read in _ORDER
}
FORMATS: tuple[str, ...] = (CONTRACT_A, *sorted(ADAPTERS))


def _is_contract_a(doc: Document) -> bool:
    """A `windtunnel_interchange` envelope, or our earlier shape (`contract`)."""
    return not doc.jsonl and is_contract_a(doc.single)


def sniff_format(doc: Document) -> str:
    """The format of a parsed trace, or a `TraceError` that says how to force one."""
    if _is_contract_a(doc):
        return CONTRACT_A
    for name, looks_like, _ in _ORDER:
        if looks_like(doc):
            return name
    raise TraceError(
        "cannot tell the trace format; pass --format (one of: " + ", ".join(FORMATS) + ")",
        file=doc.file,
    )
