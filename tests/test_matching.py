"""Matching rules (DESIGN §4): exact, keyed, miss policies, sequence mode, evidence."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.api import load_universe
from windtunnel.errors import HookRequiredError, UnknownToolError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Universe

LOOKUP = {
    "name": "client_lookup",
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
}
RECORDINGS = [
    {"tool_name": "client_lookup", "args": {"query": "Bluewing Logistics"}, "result": {"id": 1}},
    {
        "tool_name": "client_lookup",
        "args": {"query": "Bluewing Logistics", "n": 2},
        "result": {"id": 2},
    },
    {"tool_name": "client_lookup", "args": {"query": "Acme", "n": 1}, "result": {"id": 3}},
    {"tool_name": "client_lookup", "args": {"query": "Bluewing Logistics"}, "result": {"id": 4}},
]


def make_server(
    factory: UniverseFactory,
    *,
    tools: list[dict[str, Any]] | None = None,
    recordings: list[dict[str, Any]] | None = None,
    matching: dict[str, Any] | None = None,
    **kwargs: Any,
) -> RecordedMCPServer:
    doc = universe_doc(
        tools or [LOOKUP], RECORDINGS if recordings is None else recordings, matching
    )
    return RecordedMCPServer(factory(doc), **kwargs)


@pytest.mark.parametrize(
    ("args", "arg_keys", "expected_id", "tier", "index"),
    [
        ({"query": "Bluewing Logistics"}, None, 1, "exact", 0),
        ({"query": "Bluewing Logistics", "n": 2}, None, 2, "exact", 1),
        ({"n": 2, "query": "Bluewing Logistics"}, None, 2, "exact", 1),
        ({"query": "Bluewing Logistics", "n": 2.0}, None, 2, "exact", 1),
        ({"query": "Acme", "n": 1.0}, None, 3, "exact", 2),
        ({"query": "Bluewing Logistics", "verbose": True}, ["query"], 1, "keyed", 0),
        ({"query": "Bluewing Logistics", "n": 7}, ["query"], 1, "keyed", 0),
        ({"query": "Acme", "n": 9}, ["query", "n"], None, None, None),
        ({"query": "Acme", "n": 1, "x": 0}, ["query", "n"], 3, "keyed", 2),
        ({"query": "Acme", "n": True}, None, None, None, None),
        ({"query": "acme", "n": 1}, None, None, None, None),
        ({"query": "Bluewing"}, ["query"], None, None, None),
        ({"n": 1}, ["query", "n"], None, None, None),
    ],
)
def test_resolution_table(
    write_universe_file: UniverseFactory,
    args: dict[str, Any],
    arg_keys: list[str] | None,
    expected_id: int | None,
    tier: str | None,
    index: int | None,
) -> None:
    """Exact then keyed; earliest recording wins; absent keys never equal present ones."""
    matching = {"arg_keys": {"client_lookup": arg_keys}} if arg_keys else None
    server = make_server(write_universe_file, matching=matching)
    result = server.call_tool("client_lookup", args)
    (call,) = server.call_log()
    if expected_id is None:
        assert result["error"] == "no_recorded_result"
        assert call.divergence is not None
        assert call.is_error is True
    else:
        assert result == {"id": expected_id}
        assert call.extra == {"match": {"tier": tier, "index": index}}
        assert call.divergence is None


def test_retries_are_never_divergences(write_universe_file: UniverseFactory) -> None:
    """The same stateless call answers the same recording every time."""
    server = make_server(write_universe_file)
    answers = [server.call_tool("client_lookup", {"query": "Bluewing Logistics"}) for _ in range(5)]
    assert answers == [{"id": 1}] * 5
    assert all(call.divergence is None for call in server.call_log())


def test_divergence_evidence_fields_and_event(write_universe_file: UniverseFactory) -> None:
    """A miss carries the fixed evidence fields in the call log and the structlog event."""
    server = make_server(write_universe_file, name="crm")
    with capture_logs() as logs:
        result = server.call_tool("client_lookup", {"query": "Acme", "n": 3})
    expected = {
        "tool": "client_lookup",
        "args": {"query": "Acme", "n": 3},
        "reason": "no_recorded_result",
        "policy": "fail_call",
        "matched": None,
        "nearest": {"index": 2, "shared": 1, "differing_keys": ["n"]},
    }
    assert server.call_log()[0].extra == {"divergence": expected}
    assert server.call_log()[0].upstream == "crm"
    assert result == {
        "error": "no_recorded_result",
        "tool": "client_lookup",
        "args": {"query": "Acme", "n": 3},
        "reason": "no_recorded_result",
        "message": "no recording of 'client_lookup' matches these arguments",
        "nearest": expected["nearest"],
    }
    assert logs == [
        {
            **expected,
            "upstream": "crm",
            "scenario": None,
            "event": "universe_divergence",
            "log_level": "warning",
        }
    ]


@pytest.mark.parametrize(
    ("result_schema", "recordings", "expected"),
    [
        ({"type": "array"}, None, []),
        ({"type": "object"}, None, {}),
        ({"type": "string"}, None, ""),
        ({"type": "number"}, None, 0),
        ({"type": "integer"}, None, 0),
        ({"type": "boolean"}, None, False),
        ({"type": "null"}, None, None),
        ({"type": ["array", "null"]}, None, []),
        (None, [{"tool_name": "client_lookup", "args": {"q": 1}, "result": [1, 2]}], []),
        (None, [{"tool_name": "client_lookup", "args": {"q": 1}, "result": "text"}], ""),
        (None, [], {}),
    ],
)
def test_empty_policy_shapes(
    write_universe_file: UniverseFactory,
    result_schema: dict[str, Any] | None,
    recordings: list[dict[str, Any]] | None,
    expected: Any,
) -> None:
    """`empty` follows result_schema, else the first recording's type, else {}."""
    tool = dict(LOOKUP)
    if result_schema is not None:
        tool["result_schema"] = result_schema
    server = make_server(
        write_universe_file,
        tools=[tool],
        recordings=recordings if recordings is not None else [],
        matching={"on_miss": "empty"},
    )
    assert server.call_tool("client_lookup", {"query": "nobody"}) == expected
    assert server.call_log()[0].divergence["policy"] == "empty"  # type: ignore[index]
    assert server.call_log()[0].is_error is False


def test_nearest_policy_ranks_by_shared_pairs(write_universe_file: UniverseFactory) -> None:
    """`nearest` returns the recording sharing most pairs; ties go to the earliest."""
    server = make_server(write_universe_file, matching={"on_miss": "nearest"})
    assert server.call_tool("client_lookup", {"query": "Bluewing Logistics", "n": 1}) == {"id": 1}
    assert server.call_tool("client_lookup", {"query": "Acme", "n": 5}) == {"id": 3}
    assert server.call_tool("client_lookup", {"query": "Zed", "n": 1}) == {"id": 3}
    assert server.call_tool("client_lookup", {"zzz": 0}) == {"id": 1}
    nearest = [call.divergence["nearest"] for call in server.call_log()]  # type: ignore[index]
    assert nearest == [
        {"index": 0, "shared": 1, "differing_keys": ["n"]},
        {"index": 2, "shared": 1, "differing_keys": ["n"]},
        {"index": 2, "shared": 1, "differing_keys": ["query"]},
        {"index": 0, "shared": 0, "differing_keys": ["query", "zzz"]},
    ]


def test_nearest_without_recordings_falls_back_to_fail_call(
    write_universe_file: UniverseFactory,
) -> None:
    """A tool with no recordings cannot be `nearest`: it fails the call instead; the record
    keeps the tool's policy with nothing `matched`, as windtunnel-bench's does."""
    server = make_server(write_universe_file, recordings=[], matching={"on_miss": "nearest"})
    result = server.call_tool("client_lookup", {"query": "x"})
    assert result["error"] == "no_recorded_result"
    assert server.call_log()[0].is_error is True
    assert server.call_log()[0].divergence == {
        "tool": "client_lookup",
        "args": {"query": "x"},
        "reason": "no_recorded_result",
        "policy": "nearest",
        "matched": None,
        "nearest": None,
    }


def test_per_tool_policy_overrides_default(write_universe_file: UniverseFactory) -> None:
    """per_tool_on_miss wins over on_miss for that tool only."""
    tools = [LOOKUP, {"name": "other", "result_schema": {"type": "array"}}]
    server = make_server(
        write_universe_file,
        tools=tools,
        matching={"on_miss": "empty", "per_tool_on_miss": {"client_lookup": "fail_call"}},
    )
    assert server.call_tool("other", {}) == []
    assert server.call_tool("client_lookup", {"query": "x"})["error"] == "no_recorded_result"


def test_synthesize_hook(write_universe_file: UniverseFactory) -> None:
    """`synthesize` answers with the hook's value and still records the divergence."""
    seen: list[tuple[str, dict[str, Any], Universe]] = []

    def hook(tool: str, args: dict[str, Any], universe: Universe) -> Any:
        seen.append((tool, args, universe))
        return {"synthesized": args["query"]}

    server = make_server(write_universe_file, matching={"on_miss": "synthesize"}, synthesize=hook)
    assert server.call_tool("client_lookup", {"query": "Nova"}) == {"synthesized": "Nova"}
    assert seen[0][0] == "client_lookup" and seen[0][2] is server.universe
    assert server.call_log()[0].divergence["policy"] == "synthesize"  # type: ignore[index]


def test_synthesize_hook_that_raises_answers_a_tool_error(
    write_universe_file: UniverseFactory,
) -> None:
    """A failing hook becomes a tool error plus a `synthesize_failed` event; the server lives."""

    def hook(tool: str, args: dict[str, Any], universe: Universe) -> Any:
        raise RuntimeError("boom")

    server = make_server(write_universe_file, matching={"on_miss": "synthesize"}, synthesize=hook)
    with capture_logs() as logs:
        result = server.call_tool("client_lookup", {"query": "Nova"})
    assert result["error"] == "synthesize_failed"
    assert "RuntimeError: boom" in result["message"]
    assert server.call_log()[0].is_error is True
    assert [log["event"] for log in logs] == ["synthesize_failed", "universe_divergence"]
    assert server.call_tool("client_lookup", {"query": "Acme", "n": 1}) == {"id": 3}


def test_synthesize_without_hook_is_refused(write_universe_file: UniverseFactory) -> None:
    """load_universe accepts the file; the server refuses to exist without a hook."""
    doc = universe_doc([LOOKUP], [], {"per_tool_on_miss": {"client_lookup": "synthesize"}})
    path = write_universe_file(doc)
    assert load_universe(path).uses_synthesize() == ["client_lookup"]
    with pytest.raises(HookRequiredError, match="client_lookup"):
        RecordedMCPServer(path)


def test_unknown_tool_raises_after_recording(write_universe_file: UniverseFactory) -> None:
    """In process, an undeclared tool raises UnknownToolError and is logged as a divergence."""
    server = make_server(write_universe_file)
    with pytest.raises(UnknownToolError, match=r"'delete_client'.*client_lookup"):
        server.call_tool("delete_client", {"id": 1})
    (call,) = server.call_log()
    assert call.divergence == {
        "tool": "delete_client",
        "args": {"id": 1},
        "reason": "unknown_tool",
        "policy": "fail_call",
        "matched": None,
        "nearest": None,
    }


PAGES = {"name": "list_invoices", "mode": "sequence"}
PAGE_RECORDINGS = [
    {"tool_name": "list_invoices", "args": {"account": "A"}, "result": {"page": 1}},
    {"tool_name": "list_invoices", "args": {"account": "B"}, "result": {"page": "b"}},
    {"tool_name": "list_invoices", "args": {"account": "A"}, "result": {"page": 2}},
    {"tool_name": "list_invoices", "args": {"account": "A", "cursor": "x"}, "result": {"page": 3}},
]


def test_sequence_mode_consumes_in_file_order(write_universe_file: UniverseFactory) -> None:
    """Each recording answers once, exact before keyed; then `sequence_exhausted`."""
    server = make_server(
        write_universe_file,
        tools=[PAGES],
        recordings=PAGE_RECORDINGS,
        matching={"arg_keys": {"list_invoices": ["account"]}},
    )
    answers = [server.call_tool("list_invoices", {"account": "A"}) for _ in range(4)]
    assert answers[:3] == [{"page": 1}, {"page": 2}, {"page": 3}]
    assert answers[3]["error"] == "no_recorded_result"
    log = server.call_log()
    assert [c.extra.get("match") for c in log[:3]] == [
        {"tier": "exact", "index": 0},
        {"tier": "exact", "index": 2},
        {"tier": "keyed", "index": 3},
    ]
    assert log[3].divergence["reason"] == "sequence_exhausted"  # type: ignore[index]
    assert server.call_tool("list_invoices", {"account": "C"})["reason"] == "no_recorded_result"


def test_sequence_state_belongs_to_one_server(write_universe_file: UniverseFactory) -> None:
    """Two servers on one file each consume the recordings independently."""
    path = write_universe_file(universe_doc([PAGES], PAGE_RECORDINGS))
    first, second = RecordedMCPServer(path), RecordedMCPServer(path)
    assert first.call_tool("list_invoices", {"account": "A"}) == {"page": 1}
    assert second.call_tool("list_invoices", {"account": "A"}) == {"page": 1}
    assert first.call_tool("list_invoices", {"account": "A"}) == {"page": 2}


def test_sequence_consumption_is_atomic_across_threads(
    write_universe_file: UniverseFactory,
) -> None:
    """Under concurrent callers every recording is handed out exactly once."""
    recordings = [
        {"tool_name": "list_invoices", "args": {"account": "A"}, "result": {"page": i}}
        for i in range(400)
    ]
    server = make_server(write_universe_file, tools=[PAGES], recordings=recordings)
    results: list[Any] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(100):
            answer = server.call_tool("list_invoices", {"account": "A"})
            with lock:
                results.append(answer)

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    pages = sorted(r["page"] for r in results if "page" in r)
    assert pages == list(range(400))
    assert sum(1 for r in results if r.get("reason") == "sequence_exhausted") == 100
    assert len(server.call_log()) == 500


def test_recorded_tool_error_result_sets_error_flag(write_universe_file: UniverseFactory) -> None:
    """A recorded CallToolResult with isError is a hit that is flagged as an error."""
    recorded = {"content": [{"type": "text", "text": "rate limited"}], "isError": True}
    server = make_server(
        write_universe_file,
        recordings=[{"tool_name": "client_lookup", "args": {"query": "x"}, "result": recorded}],
    )
    assert server.call_tool("client_lookup", {"query": "x"}) == recorded
    call = server.call_log()[0]
    assert call.is_error is True and call.divergence is None


def brute_force_nearest(recordings: list[dict[str, Any]], args: dict[str, Any]) -> tuple[int, int]:
    """(index, shared) by counting every recording: the definition `nearest` must match."""
    from windtunnel.canonical import canonical_key

    def shared(recorded: dict[str, Any]) -> int:
        return sum(
            1
            for k, v in args.items()
            if k in recorded and canonical_key(recorded[k]) == canonical_key(v)
        )

    counts = [shared(r["args"]) for r in recordings]
    best = max(counts)
    return counts.index(best), best


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

small_args = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]),
    st.sampled_from([0, 1, 1.0, True, "x", "y", None]),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(small_args, min_size=1, max_size=80), small_args)
def test_nearest_equals_brute_force(recorded: list[dict[str, Any]], call: dict[str, Any]) -> None:
    """The indexed nearest (subset search and counting) agrees with counting every recording."""
    from windtunnel.matching import UniverseIndex
    from windtunnel.universe import decode_universe

    recordings = [{"tool_name": "t", "args": a, "result": i} for i, a in enumerate(recorded)]
    import json

    universe = decode_universe(json.dumps(universe_doc([{"name": "t"}], recordings)))
    index = UniverseIndex(universe)
    (near,) = index.nearest("t", call)
    assert (near.index, near.shared) == brute_force_nearest(recordings, call)
    ranked = index.nearest("t", call, limit=3)
    assert (ranked[0].index, ranked[0].shared) == (near.index, near.shared)


def test_nearest_with_many_shared_pairs_counts_postings(
    write_universe_file: UniverseFactory,
) -> None:
    """Past six shared pairs the subset search gives way to counting, with the same answer."""
    wide = {f"k{i}": i for i in range(8)}
    recordings = [
        {"tool_name": "t", "args": {**wide, "k0": -1}, "result": 0},
        {"tool_name": "t", "args": {**wide, "k7": -1}, "result": 1},
    ]
    server = RecordedMCPServer(
        write_universe_file(universe_doc([{"name": "t"}], recordings, {"on_miss": "nearest"}))
    )
    assert server.call_tool("t", {**wide, "k0": 99, "k7": 99}) == 0
    assert server.call_log()[0].divergence["nearest"] == {  # type: ignore[index]
        "index": 0,
        "shared": 6,
        "differing_keys": ["k0", "k7"],
    }
