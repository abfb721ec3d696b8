"""The actor system (DESIGN §6): a supervisor of server actors, a router, and event sinks.

    async with open_fleet(pack="demo", sinks=[JsonLinesSink(sys.stderr)]) as fleet:
        async with fleet.scenario("refund#0", {"crm": crm, "billing": billing}) as run:
            await agent(run.urls)          # one URL per upstream
        run.call_log()                     # merged, in arrival order, tagged by upstream

Supervision policy: within one scenario, one-for-all (a server that fails cancels its siblings
and the scenario's body, and the scenario fails with the reason); across scenarios, isolation (no
scenario's failure reaches another or the fleet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .events import EVENT_NAMES, make_event
    from .fleet import Fleet, ScenarioRun, open_fleet
    from .pipe_writer import PipeTextStream, PipeWriter
    from .router import Router
    from .sinks import JsonLinesSink, LossySink, MemorySink, PipeSink, Sink
    from .websocket_feed import WebSocketFeed

__all__ = [
    "EVENT_NAMES",
    "Fleet",
    "JsonLinesSink",
    "LossySink",
    "MemorySink",
    "PipeSink",
    "PipeTextStream",
    "PipeWriter",
    "Router",
    "ScenarioRun",
    "Sink",
    "WebSocketFeed",
    "make_event",
    "open_fleet",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".events": ("EVENT_NAMES", "make_event"),
        ".fleet": ("Fleet", "ScenarioRun", "open_fleet"),
        ".pipe_writer": ("PipeTextStream", "PipeWriter"),
        ".router": ("Router",),
        ".sinks": ("JsonLinesSink", "LossySink", "MemorySink", "PipeSink", "Sink"),
        ".websocket_feed": ("WebSocketFeed",),
    },
)
