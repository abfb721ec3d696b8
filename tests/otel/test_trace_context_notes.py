"""`trace_context`: a call's `traceparent` reaches whoever reports it, in the answering task (the
router, over HTTP) or later from another thread (`wt serve --stdio`'s listener), and nothing is
left behind for a later call to pick up."""

from __future__ import annotations

import threading

from windtunnel import trace_context
from windtunnel.calls import MCPCall

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def call() -> MCPCall:
    return MCPCall(tool_name="t", args={}, result="r")


def test_a_reporter_in_the_answering_task_takes_it_and_nothing_is_noted() -> None:
    """Over HTTP the router's reporter runs before the answer returns: it gets the parent, and
    the note after it keeps nothing (a stale note could parent another call at the same id)."""
    answered = call()
    with trace_context.carried_by(
        {"traceparent": PARENT}, "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    ):
        assert trace_context.take(answered) == PARENT  # `_meta` before the header
        trace_context.note(answered)
    assert id(answered) not in trace_context._noted
    assert trace_context.take(answered) is None


def test_a_listener_told_later_from_another_thread_gets_the_noted_parent() -> None:
    answered = call()
    with trace_context.carried_by(None, PARENT):  # only the header: it counts
        trace_context.note(answered)
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(trace_context.take(answered)))
    thread.start()
    thread.join(10)
    assert got == [PARENT]
    assert id(answered) not in trace_context._noted


def test_no_trace_context_is_none_and_notes_nothing() -> None:
    answered = call()
    with trace_context.carried_by({"other": 1}, None):
        trace_context.note(answered)
    assert id(answered) not in trace_context._noted
    assert trace_context.take(answered) is None
    too_long = "00-" + "a" * 200
    with trace_context.carried_by({"traceparent": too_long}):
        assert trace_context.current_traceparent() is None
