"""Where a stdio upstream's own messages go when the agent speaks Streamable HTTP.

A stdio server writes its notifications and requests (logs, progress, `sampling/createMessage`,
`roots/list`, ...) on the one stdout it has, naming no HTTP request. The agent reads them either on
the event stream of the POST that is waiting for an answer or on its standalone GET stream. The
router picks, for each message, in order (`call_messages.attribute`: the rules the recording ties
a message to its call by, here over every request in flight):

1. a progress notification goes to the request whose `_meta.progressToken` it names;
2. anything else goes to the one request in flight, when exactly one is (over stdio the server
   can only be answering that one);
3. otherwise (no request in flight, or several) to the GET stream, queued until the agent opens it.

Only requests whose agent accepts an event stream are candidates (a JSON-only POST cannot carry
them). The routing itself never awaits, and `finish` queues a request's answer only once
everything the server wrote before it has been routed: the answer always comes last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from ..call_messages import attribute, progress_token
from .tap import decode_messages

__all__ = ["Outbox", "ServerMessageRouter"]


@dataclass
class Outbox:
    """One request's event stream: server messages, then `(True, answer)` last."""

    send: trio.MemorySendChannel[tuple[bool, bytes]]
    receive: trio.MemoryReceiveChannel[tuple[bool, bytes]]
    progress_token: Any


class ServerMessageRouter:
    """Routes the upstream's own messages to request streams or the GET stream (see module)."""

    def __init__(self, server_messages: trio.MemoryReceiveChannel[bytes]) -> None:
        self._source = server_messages
        self._in_flight: dict[bytes, Outbox] = {}
        self._to_get, self.for_get = trio.open_memory_channel[bytes](math.inf)

    async def run(self) -> None:
        """Route every message the upstream sends until it stops."""
        async for line in self._source:
            self._route(line)
        self._to_get.close()

    def open(self, message: dict[str, Any]) -> Outbox:
        """A request in flight that can carry server messages on its event stream."""
        send, receive = trio.open_memory_channel[tuple[bool, bytes]](math.inf)
        outbox = Outbox(send, receive, progress_token(message.get("params")))
        self._in_flight[_key(message["id"])] = outbox
        return outbox

    async def finish(self, message: dict[str, Any], answer: bytes) -> None:
        """The request's answer: after every server message already written before it.

        A message the upstream wrote just before the answer may already be on its way to `run`
        (a Trio channel hands a value straight to the task waiting on it, which runs later): one
        checkpoint lets `run` route it first, since every task made runnable before this one's
        wake-up runs before this one runs again. What is still in the channel is routed here."""
        await trio.lowlevel.cancel_shielded_checkpoint()
        self.drain()
        outbox = self._in_flight.pop(_key(message["id"]), None)
        if outbox is not None:
            outbox.send.send_nowait((True, answer))

    def drain(self) -> None:
        """Route what the upstream has sent and nobody has taken yet."""
        while True:
            try:
                line = self._source.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            self._route(line)

    def _route(self, line: bytes) -> None:
        outbox = self._target(decode_messages(line))
        if outbox is None:
            self._to_get.send_nowait(line)
        else:
            outbox.send.send_nowait((False, line))

    def _target(self, messages: list[dict[str, Any]]) -> Outbox | None:
        if len(messages) != 1 or not isinstance(messages[0].get("method"), str):
            return None  # a batch, or a response nobody waits for any more
        # `wt record`'s rules (call_messages), over every request that can carry the message.
        return attribute(messages[0], list(self._in_flight.values()), one_stream=True)


def _key(request_id: Any) -> bytes:
    return msgspec.json.encode(request_id)
