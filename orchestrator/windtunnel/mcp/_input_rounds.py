"""A recording's requests to the client, put to a 2026-07-28 client as `input_required` rounds.

From 2026-07-28 a server does not send requests to the client while it answers one: it answers
`{"resultType": "input_required", "inputRequests": {KEY: request}, "requestState": STATE}`, and the
client retries the same request with `inputResponses` (`{KEY: result}`) and the state echoed. The
replay does the same with what the recorded server asked (`Recording.server_messages`):

- requests recorded in `input_required` rounds (`input_round`, `input_key`) are asked in the same
  rounds under the same keys; requests recorded as mid-call requests (the handshake era) are asked
  one per round, in order, under the keys `request-N` (N: the message's position);
- notifications recorded before a round's requests go out on the request that ends with that
  round, the ones after the last round on the final answer;
- only sampling, elicitation and roots can be asked this way (the protocol's `InputRequest`); any
  other recorded request (`ping`) cannot, and is counted unsent, as on a transport without requests.

The state names the call (tool, arguments), the recording's messages and the rounds done, sealed
with an HMAC under a key that lives as long as the server process: the spec has the client echo
it verbatim and the server treat it as untrusted, so a state from another call, recording or
server, or altered, is refused. Pure: no SDK, no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..call_messages import SERVER_REQUEST_METHODS
from ..canonical import canonical_json

__all__ = ["Round", "RoundPlan", "StateError", "open_state", "plan", "seal_state"]

_KEY = secrets.token_bytes(32)


class StateError(ValueError):
    """A `requestState` this server did not mint for this call (the reason is for logs only)."""


@dataclass
class Round:
    """One `input_required` result: the notifications sent before it, and its requests by key."""

    before: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class RoundPlan:
    """A recording's server messages as a 2026-07-28 exchange."""

    rounds: list[Round]
    after: list[dict[str, Any]]
    """Notifications after the last round's requests: sent with the final answer."""
    unsendable: int
    """Recorded requests no `input_required` result can carry."""


def plan(messages: Sequence[dict[str, Any]]) -> RoundPlan:
    rounds: list[Round] = []
    notes: list[dict[str, Any]] = []
    unsendable = 0
    last: Any = None  # the round the previous request was asked in, as recorded
    for position, message in enumerate(messages):
        if "response" not in message:
            notes.append(message)
            continue
        if message["method"] not in SERVER_REQUEST_METHODS:  # what an `InputRequest` may be
            unsendable += 1
            continue
        recorded_round = message.get("input_round")
        this = ("recorded", recorded_round) if recorded_round is not None else ("own", position)
        if not rounds or notes or this != last:
            rounds.append(Round(before=notes))
            notes = []
        key = message.get("input_key") or f"request-{position}"
        rounds[-1].requests.append((key, message))
        last = this
    return RoundPlan(rounds=rounds, after=notes, unsendable=unsendable)


def _call_digest(tool: Any, arguments: Any, messages: Sequence[dict[str, Any]]) -> str:
    text = canonical_json({"tool": tool, "arguments": arguments, "messages": list(messages)})
    return hashlib.sha256(text.encode()).hexdigest()


def _mac(payload: bytes) -> bytes:
    return hmac.new(_KEY, payload, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal_state(tool: Any, arguments: Any, messages: Sequence[dict[str, Any]], done: int) -> str:
    """The `requestState` of the round after `done` answered ones, for this call and recording."""
    payload = json.dumps({"call": _call_digest(tool, arguments, messages), "done": done}).encode()
    return f"{_b64(payload)}.{_b64(_mac(payload))}"


def open_state(state: Any, tool: Any, arguments: Any, messages: Sequence[dict[str, Any]]) -> int:
    """How many rounds a `requestState` says the client has answered; `StateError` if this
    server did not mint it for this call and recording."""
    if not isinstance(state, str) or state.count(".") != 1:
        raise StateError("not a state of this server")
    encoded, tag = state.split(".")
    try:
        payload, mac = _unb64(encoded), _unb64(tag)
    except ValueError:
        raise StateError("not base64url") from None
    if not hmac.compare_digest(mac, _mac(payload)):
        raise StateError("not sealed by this server")
    opened = json.loads(payload)
    if opened.get("call") != _call_digest(tool, arguments, messages):
        raise StateError("sealed for another call or recording")
    done = opened.get("done")
    if not isinstance(done, int) or done < 1:
        raise StateError("no round answered")
    return done
