"""`SessionTap`: pairing and attribution rules that need no server to show."""

from __future__ import annotations

from windtunnel.record.tap import SessionTap


def test_an_error_with_a_null_id_on_a_requests_own_answer_answers_it() -> None:
    """A handshake-era server refuses the SDK's `server/discover` probe with `id: null`: that is
    the probe's answer (it came on the probe's HTTP response), not a request left unanswered."""
    tap = SessionTap(upstream="old")
    tap.observe("c2s", {"jsonrpc": "2.0", "id": 0, "method": "server/discover"})
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request"}}
    tap.observe("s2c", refusal, in_reply_to=0)
    assert tap.unanswered() == []
    assert tap.log[-1].msg == refusal  # the log keeps the message as it came


def test_a_null_id_error_that_came_on_no_request_stream_answers_nothing() -> None:
    tap = SessionTap(upstream="old", one_stream=True)
    tap.observe("c2s", {"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    tap.observe("s2c", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
    assert tap.unanswered() == ["tools/list"]


def test_over_one_stream_only_the_single_call_in_flight_gets_a_message() -> None:
    tap = SessionTap(upstream="stdio", one_stream=True)
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}

    def call(request_id: int) -> dict[str, object]:
        params = {"name": "t", "arguments": {"n": request_id}}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    def answer(request_id: int) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": request_id, "result": {"content": []}}

    tap.observe("c2s", call(1))
    tap.observe("s2c", log)  # one call in flight: its message
    tap.observe("c2s", call(2))
    tap.observe("s2c", log)  # two in flight: nobody's
    tap.observe("s2c", answer(1))
    tap.observe("s2c", answer(2))
    assert [c.extra.get("server_messages", []) for c in tap.calls] == [
        [{"method": "notifications/message", "params": {"data": "hi"}}],
        [],
    ]
    assert tap.unattributed == 1
