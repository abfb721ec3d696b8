"""The universe the fault tests serve: a tool with an output schema and recorded durations, and
a tool whose recorded answer is JSON text."""

from __future__ import annotations

import json
from typing import Any

from windtunnel.universe import Universe, decode_universe

ORDER = {"id": "A1", "total": 42}
SEARCH_TEXT = '{"hits": 3}'
DOC: dict[str, Any] = {
    "windtunnel_universe": 1,
    "tools": [
        {
            "name": "get_order",
            "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "output_schema": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": "string"}, "total": {"type": "integer"}},
            },
        },
        {"name": "search", "input_schema": {"type": "object"}},
    ],
    "recordings": [
        {
            "tool_name": "get_order",
            "args": {"id": "A1"},
            "result": ORDER,
            "meta": {"duration_ms": 1500},
        },
        {
            "tool_name": "search",
            "args": {"q": "x"},
            "result": {"content": [{"type": "text", "text": SEARCH_TEXT}]},
        },
    ],
}
ORDER_CALL = ("get_order", {"id": "A1"})
SEARCH_CALL = ("search", {"q": "x"})


def world() -> Universe:
    return decode_universe(json.dumps(DOC))
