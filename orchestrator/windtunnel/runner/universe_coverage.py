"""Universe coverage: which recordings a unit's calls were served from, and which none used.

Per unit and upstream (each upstream served from a universe): how many recordings the universe
holds, how many distinct ones answered a call (`served`), the indexes of those no call used
(`unused`), the calls made and those that matched no recording (`unmatched`, the divergences),
and the same counts per tool. Requests of other methods (`resources/read`, `prompts/get`,
`completion/complete`) count among the calls, and among `unmatched` when no recording answered
them. Per scenario the summary keeps the recordings that no run used
(`never_used`); an incident where skipping a step is the bug is caught by the `coverage` policy.
Calls the live upstream answered under the `new_episodes` record mode (divergence reason
`recorded_live`) are counted apart as `live`: they are among `unmatched` (no recording answered
them), and `calls - unmatched` are the ones replayed.

The recorded answers to those requests are covered apart, per section of the universe
(`requests`: `resource_reads`, `prompt_gets`, `completions`): how many entries it holds, how many
answered a request (`served`), the indexes no request used (`unused`), the requests of that
method and those no entry answered (`unmatched`). A section is listed when the universe holds
entries in it or the unit made requests of its method.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from ..calls import MCPCall
from ..universe import Universe

RECORDED_LIVE = "recorded_live"
"""`record.live_misses.RECORDED_LIVE` (not imported: coverage must not load the serving stack)."""

REQUEST_SECTIONS = {
    "resources/read": "resource_reads",
    "prompts/get": "prompt_gets",
    "completion/complete": "completions",
}
"""The universe section whose entries answer each request method (`surface_matching`)."""

__all__ = [
    "REQUEST_SECTIONS",
    "CoverageTotals",
    "RequestCoverage",
    "ScenarioCoverage",
    "ToolCoverage",
    "UpstreamCoverage",
    "unit_coverage",
]


class ToolCoverage(msgspec.Struct, kw_only=True):
    """One tool of one upstream: its recordings, how many answered a call, which none used."""

    recordings: int = 0
    served: int = 0
    unused: list[int] = msgspec.field(default_factory=list)


class RequestCoverage(msgspec.Struct, kw_only=True):
    """One section of recorded request answers (`resource_reads`, `prompt_gets`,
    `completions`) of one upstream: its entries, how many answered a request, which none used,
    and the requests of its method, those no entry answered among them."""

    recorded: int = 0
    served: int = 0
    unused: list[int] = msgspec.field(default_factory=list)
    calls: int = 0
    unmatched: int = 0


class UpstreamCoverage(msgspec.Struct, kw_only=True):
    """One upstream in one unit."""

    recordings: int
    served: int
    unused: list[int]
    calls: int
    unmatched: int
    live: int = 0
    tools: dict[str, ToolCoverage]
    requests: dict[str, RequestCoverage] = msgspec.field(default_factory=dict)


def _served_indexes(calls: Iterable[MCPCall], count: int) -> set[int]:
    served: set[int] = set()
    for call in calls:
        match = call.extra.get("match")
        index = match.get("index") if isinstance(match, dict) else None
        if isinstance(index, int) and 0 <= index < count:
            served.add(index)
    return served


def _request_coverage(calls: Iterable[MCPCall], universe: Universe) -> dict[str, RequestCoverage]:
    by_method: dict[str, list[MCPCall]] = {method: [] for method in REQUEST_SECTIONS}
    for call in calls:
        if call.method in by_method:
            by_method[call.method].append(call)
    sections: dict[str, RequestCoverage] = {}
    for method, section in REQUEST_SECTIONS.items():
        recorded = len(getattr(universe, section))
        method_calls = by_method[method]
        if not recorded and not method_calls:
            continue
        served = _served_indexes(method_calls, recorded)
        sections[section] = RequestCoverage(
            recorded=recorded,
            served=len(served),
            unused=[i for i in range(recorded) if i not in served],
            calls=len(method_calls),
            unmatched=sum(1 for call in method_calls if call.divergence is not None),
        )
    return sections


def _answered_live(call: MCPCall) -> bool:
    divergence = call.divergence
    return divergence is not None and divergence.get("reason") == RECORDED_LIVE


def unit_coverage(
    calls: Iterable[MCPCall], universes: Mapping[str, Universe]
) -> dict[str, UpstreamCoverage]:
    """Coverage of every upstream in `universes` by one unit's merged call log."""
    by_upstream: dict[str, list[MCPCall]] = {name: [] for name in universes}
    for call in calls:
        if call.upstream in by_upstream:
            by_upstream[call.upstream].append(call)
    coverage: dict[str, UpstreamCoverage] = {}
    for name, universe in universes.items():
        upstream_calls = by_upstream[name]
        tool_calls = [call for call in upstream_calls if call.method == "tools/call"]
        # A request's match index is into its own section, never into `recordings`.
        served = _served_indexes(tool_calls, len(universe.recordings))
        tools: dict[str, ToolCoverage] = {}
        for index, recording in enumerate(universe.recordings):
            tool = tools.setdefault(recording.tool_name, ToolCoverage())
            tool.recordings += 1
            if index in served:
                tool.served += 1
            else:
                tool.unused.append(index)
        coverage[name] = UpstreamCoverage(
            recordings=len(universe.recordings),
            served=len(served),
            unused=[i for i in range(len(universe.recordings)) if i not in served],
            calls=len(upstream_calls),
            unmatched=sum(1 for call in upstream_calls if call.divergence is not None),
            live=sum(1 for call in upstream_calls if _answered_live(call)),
            tools=tools,
            requests=_request_coverage(upstream_calls, universe),
        )
    return coverage


class ScenarioCoverage(msgspec.Struct, kw_only=True):
    """One upstream over every run of one scenario.

    `never_used` lists the recordings that no run used; `served` counts the others; `unmatched`
    sums the calls of every run that matched no recording.
    """

    recordings: int = 0
    served: int = 0
    never_used: list[int] = msgspec.field(default_factory=list)
    unmatched: int = 0
    live: int = 0
    runs: int = 0

    def add(self, unit: UpstreamCoverage) -> None:
        """Fold one run in: a recording stays never used only while every run left it unused."""
        if self.runs == 0 or unit.recordings != self.recordings:
            # The first run, or a universe that changed between runs: the latest one counts.
            self.recordings = unit.recordings
            self.never_used = list(unit.unused)
        else:
            unused = set(unit.unused)
            self.never_used = [i for i in self.never_used if i in unused]
        self.served = self.recordings - len(self.never_used)
        self.unmatched += unit.unmatched
        self.live += unit.live
        self.runs += 1


class CoverageTotals(msgspec.Struct, kw_only=True):
    """One upstream name over every scenario of a run (each scenario's universe counted once)."""

    recordings: int = 0
    served: int = 0
    never_used: int = 0
    unmatched: int = 0
    live: int = 0
