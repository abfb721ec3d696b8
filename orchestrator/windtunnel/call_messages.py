"""What the server sent while answering a `tools/call`, as a recording keeps it (issue 25). Pure.

One set of rules for every producer that sees the wire: `wt record`'s tap (`record/tap.py`) and
`wt import` of a JSON-RPC capture (`importing/mcp_jsonrpc.py`); a recording's `server_messages`
(docs/universe.md) are what `CallMessages.kept` gives. `wt record`'s router
(`record/routing.py`), which picks the agent's stream a stdio upstream's message goes out on,
asks `attribute` too, with the requests in flight for candidates.

**Which call a server message belongs to** (`attribute`), in order:

1. the `tools/call` whose HTTP answer (its JSON body or its event stream) carried it, when the
   transport says which request that was;
2. for a `notifications/progress`, the call in flight whose `_meta.progressToken` it names;
3. over one stream (stdio, or a capture that does not say which request carried a message), the
   one call in flight, when exactly one is (the server can only be answering that one).

Anything else (a message on the standalone GET stream, several calls in flight) belongs to no call.

**2026-07-28 `input_required` rounds.** A call answered `{"resultType": "input_required",
"inputRequests": {KEY: request}}` is not finished: its requests become server messages of the call,
each with its round (`input_round`, 1 for the first such answer) and key (`input_key`), and the
client's retry of the same call (tool and canonical arguments) answers them with its
`inputResponses`. The retry's own answer carries every round so far (`AwaitingRetry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from .canonical import canonical_key

__all__ = [
    "SERVER_REQUEST_METHODS",
    "AwaitingRetry",
    "CallMessages",
    "InFlight",
    "attribute",
    "is_final",
    "is_retry",
    "progress_token",
]

SERVER_REQUEST_METHODS = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
"""The requests a server sends a client (MCP's server-to-client requests; in 2026-07-28 also
the `inputRequests` an `input_required` result carries)."""

T = TypeVar("T")


class InFlight(Protocol):
    """A request sent and not yet answered, as `attribute` weighs it."""

    @property
    def progress_token(self) -> Any:
        """The `_meta.progressToken` its request named, or None."""


C = TypeVar("C", bound=InFlight)


@dataclass
class CallMessages:
    """One call's server messages so far, in order; each entry with whether it is a request,
    which is kept only once the client's answer (`response`) is in it."""

    params: Any
    """The `tools/call` request's params (what progress tokens and retries are matched on)."""
    messages: list[tuple[dict[str, Any], bool]] = field(default_factory=list)
    rounds: int = 0
    """How many `input_required` answers the call had so far."""
    open: list[dict[str, Any]] = field(default_factory=list)
    """The input requests of the last round, which the client's retry answers."""

    @property
    def progress_token(self) -> Any:
        return progress_token(self.params)

    def take(self, message: dict[str, Any]) -> dict[str, Any]:
        """Keep a server notification or request; its entry (a request's gets the `response`)."""
        entry: dict[str, Any] = {"method": message["method"]}
        if "params" in message:
            entry["params"] = message["params"]
        self.messages.append((entry, "id" in message))
        return entry

    def kept(self) -> list[dict[str, Any]]:
        """As a recording holds them: a request only with the client's answer."""
        return [
            entry for entry, is_request in self.messages if not is_request or "response" in entry
        ]

    def unanswered(self) -> list[dict[str, Any]]:
        """The requests the client had not answered (left out of `kept`)."""
        return [
            entry for entry, is_request in self.messages if is_request and "response" not in entry
        ]

    def input_required(self, result: dict[str, Any]) -> None:
        """An `input_required` answer: its input requests join the messages, in a new round."""
        self.rounds += 1
        self.open = []
        requests = result.get("inputRequests")
        for input_key, request in (requests if isinstance(requests, dict) else {}).items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                continue
            entry: dict[str, Any] = {"method": request["method"]}
            if isinstance(request.get("params"), dict):
                entry["params"] = request["params"]
            entry.update(input_round=self.rounds, input_key=input_key)
            self.open.append(entry)
            self.messages.append((entry, True))

    def answer_round(self, retry_params: dict[str, Any]) -> None:
        """The client's retry: its `inputResponses` answer the open round's requests."""
        responses = retry_params.get("inputResponses")
        responses = responses if isinstance(responses, dict) else {}
        for entry in self.open:
            if entry["input_key"] in responses:
                entry["response"] = {"result": responses[entry["input_key"]]}
        self.open = []
        self.params = retry_params


def attribute(
    message: dict[str, Any],
    in_flight: Sequence[C],
    *,
    carried_by: C | None = None,
    one_stream: bool,
) -> C | None:
    """The call a server notification or request belongs to (the module's rules), or None.

    `in_flight`: the `tools/call` requests sent and not yet answered on the message's connection,
    in the order they were sent; `carried_by`: the one whose HTTP answer carried the message."""
    if carried_by is not None:
        return carried_by
    if message.get("method") == "notifications/progress":
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if token is not None:
            named = next((c for c in in_flight if c.progress_token == token), None)
            if named is not None:
                return named
    if one_stream and len(in_flight) == 1:
        return in_flight[0]
    return None


def is_final(result: dict[str, Any]) -> bool:
    """A `tools/call` answer that ends the call (2026-07-28: `resultType` absent or `complete`)."""
    return bool(result.get("resultType", "complete") == "complete")


def is_retry(params: Any) -> bool:
    """A `tools/call` that answers an `input_required` round."""
    return isinstance(params, dict) and ("inputResponses" in params or "requestState" in params)


class AwaitingRetry(Generic[T]):
    """The calls of one connection answered `input_required` and not retried yet, by tool and
    canonical arguments, each with what its producer keeps beside it (`T`)."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, Any], tuple[CallMessages, T]] = {}

    def wait(self, name: str, call: CallMessages, result: dict[str, Any], kept: T) -> None:
        """`call` was answered `result` (`input_required`): a new round, until the retry."""
        call.input_required(result)
        self._waiting[(name, _arguments_key(call.params))] = (call, kept)

    def retried(self, name: str, params: Any) -> tuple[CallMessages, T] | None:
        """The call a `tools/call` retries (with the open round answered), if it is a retry."""
        if not is_retry(params):
            return None
        waiting = self._waiting.pop((name, _arguments_key(params)), None)
        if waiting is not None:
            waiting[0].answer_round(params)
        return waiting

    def left(self) -> list[tuple[CallMessages, T]]:
        """The calls never retried."""
        return list(self._waiting.values())


def _arguments_key(params: Any) -> Any:
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return canonical_key(arguments if isinstance(arguments, dict) else {})


def progress_token(params: Any) -> Any:
    """The `_meta.progressToken` a request's params name, or None."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None
