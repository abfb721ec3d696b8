"""Verify one universe against its live upstream: the surface, then the re-sendable calls.

    verified = await verify_universe(universe, file="crm.universe.json",
                                     upstream="https://crm.internal/mcp", name="crm",
                                     options=VerifyOptions(allow={"lookup"}))
    verified.report.findings      # every change, breaking or informational
    write_update(verified, path)   # --update: the universe as the live server is now

The session goes through a `RecordingProxy`'s link (`record/live_client.py`), so the live side comes
out as the universe `wt record` would have written for it, redacted by the same rules; the
surface is diffed universe to universe (`surface_diff.py`), and each re-sent call is compared
with its recording by shape or value (`result_shapes.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..calls import MCPCall
from ..errors import InputError
from ..record.limits import DEFAULT_TIMEOUT_S
from ..record.live_client import LiveClient, LiveRequestError, open_live_session
from ..record.proxy import RecordingProxy
from ..record.redact import RedactionRules
from ..universe import Universe
from .findings import CallOutcome, Finding, UniverseReport, breaking, informational
from .resend_plan import Comparison, PlannedCall, plan_resends
from .result_shapes import result_view, shape_changes, value_difference
from .surface_diff import diff_surface

__all__ = ["Verified", "VerifyOptions", "verify_universe"]

_SHOWN_CHANGES = 5
"""A call whose result changed in many places names the first few."""


@dataclass(frozen=True)
class VerifyOptions:
    allow: frozenset[str] = frozenset()
    """Tools re-sent although not annotated read-only."""
    compare: Comparison = "shape"
    per_tool: Mapping[str, Comparison] = field(default_factory=dict)
    redact: RedactionRules | None = None
    timeout_s: float | None = DEFAULT_TIMEOUT_S


@dataclass
class Verified:
    """A universe verified: the report, the live answers by recording index (redacted), and the
    proxy whose tap holds the live session (what `--update` writes from)."""

    universe: Universe
    report: UniverseReport
    live_calls: dict[int, MCPCall]
    proxy: RecordingProxy


async def verify_universe(
    universe: Universe,
    *,
    file: str,
    upstream: str | Sequence[str],
    name: str,
    options: VerifyOptions,
) -> Verified:
    """Compare `universe` with what `upstream` shows and answers now (see the module)."""
    proxy = RecordingProxy(upstream, name=name, redact=options.redact, timeout_s=options.timeout_s)
    report = UniverseReport(file=file, upstream=proxy.source)
    positions: dict[int, int] = {}
    failures: list[tuple[PlannedCall, str]] = []
    async with open_live_session(proxy) as client:
        recorded = universe.server.protocol_version if universe.server is not None else None
        initialized = await client.handshake(recorded)
        capabilities = initialized.get("capabilities")
        await _read_lists(client, universe, capabilities if isinstance(capabilities, dict) else {})
        live = proxy.recording(with_log=False, find_secrets=False).universe
        report.findings += diff_surface(universe, live)
        planned, skipped = plan_resends(
            universe,
            live.tools,
            allow=options.allow,
            compare=options.compare,
            per_tool=options.per_tool,
        )
        for call in planned:
            before = len(proxy.tap.calls)
            try:
                await client.request("tools/call", {"name": call.tool, "arguments": call.args})
            except LiveRequestError as exc:
                failures.append((call, str(exc)))
                continue
            if len(proxy.tap.calls) > before:
                positions[call.index] = before
    answered = proxy.call_log()
    live_calls = {index: answered[at] for index, at in positions.items()}
    outcomes = list(skipped)
    for call in planned:
        outcomes.append(CallOutcome(index=call.index, tool=call.tool, resent=True, by=call.by))
    for call, message in failures:
        report.findings.append(
            breaking("call_failed", _call_subject(call), f"the live server refused it: {message}")
        )
    for call in planned:
        if call.index in live_calls:
            recording = universe.recordings[call.index]
            report.findings += _compared(call, recording.result, live_calls[call.index].result)
    report.calls = sorted(outcomes, key=lambda outcome: outcome.index)
    return Verified(universe, report, live_calls, proxy)


async def _read_lists(client: LiveClient, universe: Universe, capabilities: dict[str, Any]) -> None:
    """`tools/list` always; the other lists the universe holds, when the server offers them (a
    list the server refuses counts as empty: each recorded entry is then reported gone)."""
    try:
        await client.list_all("tools/list", "tools")
    except LiveRequestError as exc:
        raise InputError(f"the live server refused tools/list: {exc}") from None
    wanted = [
        ("resources/list", "resources", bool(universe.resources), "resources"),
        (
            "resources/templates/list",
            "resourceTemplates",
            bool(universe.resource_templates),
            "resources",
        ),
        ("prompts/list", "prompts", bool(universe.prompts), "prompts"),
    ]
    for method, key, held, capability in wanted:
        if held and capability in capabilities:
            try:
                await client.list_all(method, key)
            except LiveRequestError:
                continue


def _call_subject(call: PlannedCall) -> str:
    return f"tool {call.tool}: recording #{call.index}"


def _compared(call: PlannedCall, recorded: Any, live: Any) -> list[Finding]:
    before, after = result_view(recorded), result_view(live)
    subject = _call_subject(call)
    if call.by == "value":
        where = value_difference(before, after)
        if where is None:
            return []
        return [breaking("result_value_changed", subject, f"the live answer differs at {where}")]
    changes = shape_changes(before, after)
    if not changes:
        return []
    shown = "; ".join(f"{c.path}: {c.detail}" for c in changes[:_SHOWN_CHANGES])
    more = len(changes) - _SHOWN_CHANGES
    if more > 0:
        shown += f"; and {more} more"
    if any(change.is_breaking for change in changes):
        return [breaking("result_shape_changed", subject, shown)]
    return [informational("result_shape_extended", subject, shown)]
