"""`wt diff` tells a request's divergence from a tool's (issue 25): the method is part of what
matches a divergence across runs, and of how it is named."""

from __future__ import annotations

from typing import Any

from windtunnel.compare.model import _divergence_diffs
from windtunnel.runner.trace import Trace


def _row(*warnings: dict[str, Any]) -> Trace:
    return Trace(unit_id="s#0", scenario="s", warnings=list(warnings))


def _warning(method: str | None, tool: str) -> dict[str, Any]:
    warning: dict[str, Any] = {
        "event": "universe_divergence",
        "upstream": "world",
        "tool": tool,
        "args": {},
        "reason": "no_recorded_result",
        "policy": "fail_call",
    }
    if method is not None:
        warning["method"] = method
    return warning


def test_a_read_and_a_tool_call_of_the_same_name_are_two_divergences() -> None:
    """A tool `docs` called with `{}` in the base run and a read of URI `docs` in the new one:
    the read is new and the tool call gone, each named by what it was."""
    new, gone, same = _divergence_diffs(
        [_row(_warning(None, "docs"))], [_row(_warning("resources/read", "docs"))]
    )
    assert [(d.method, d.label, d.is_request) for d in new] == [
        ("resources/read", "world resources/read docs({})", True)
    ]
    assert [(d.method, d.label, d.is_request) for d in gone] == [
        ("tools/call", "world.docs({})", False)
    ]
    assert same == []
