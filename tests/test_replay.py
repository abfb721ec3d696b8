"""Listeners hear every call once, in log order, whether told at once or after the answer."""

from __future__ import annotations

import threading
import time

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.calls import MCPCall
from windtunnel.mcp import RecordedMCPServer

TOOL = {"name": "lookup"}
RECORDINGS = [{"tool_name": "lookup", "args": {"q": str(i)}, "result": {"i": i}} for i in range(4)]


def server_with_ear(factory: UniverseFactory) -> tuple[RecordedMCPServer, list[MCPCall]]:
    server = RecordedMCPServer(factory(universe_doc([TOOL], RECORDINGS)))
    server.log_events = False
    heard: list[MCPCall] = []
    server.add_listener(heard.append)
    return server, heard


def test_deferred_calls_are_heard_at_the_next_telling(write_universe_file: UniverseFactory) -> None:
    server, heard = server_with_ear(write_universe_file)
    replay = server.replay
    first = replay.call("lookup", {"q": "0"}, tell_listeners=False)
    second = replay.call("lookup", {"q": "1"}, tell_listeners=False)
    assert heard == []
    assert server.call_log() == [first, second]  # logged at once, heard later
    third = replay.call("lookup", {"q": "2"})  # telling now tells the earlier ones first
    assert heard == [first, second, third]
    replay.tell_listeners()
    fourth = replay.call("lookup", {"q": "3"}, tell_listeners=False)
    replay.tell_listeners()
    replay.tell_listeners()
    assert heard == [first, second, third, fourth]


def test_calls_from_two_threads_are_heard_once_in_log_order(
    write_universe_file: UniverseFactory,
) -> None:
    """The stdio reader thread and Trio both answer: one order for the log and the listeners."""
    server = RecordedMCPServer(write_universe_file(universe_doc([TOOL], RECORDINGS)))
    server.log_events = False
    heard: list[MCPCall] = []

    def ear(call: MCPCall) -> None:
        time.sleep(0)  # lets another thread in between two calls of one telling
        heard.append(call)

    server.add_listener(ear)
    replay = server.replay

    def answer(deferred: bool) -> None:
        for i in range(500):
            replay.call("lookup", {"q": str(i % 5)}, tell_listeners=not deferred)
            if deferred:
                replay.tell_listeners()

    threads = [threading.Thread(target=answer, args=(n % 2 == 0,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    log = server.call_log()
    assert len(log) == 2000
    assert [id(call) for call in heard] == [id(call) for call in log]
