"""`report.html`: one self-contained page (inline CSS, no scripts, no network) for humans.

It shows the run's counts, a table of scenarios with pass@k / pass^k, and for each unit its
verdicts, scores, agent error and answer, every divergence with a key-by-key diff against the
nearest recording, and the call timeline per upstream. Everything taken from a trace is
HTML-escaped; a Content-Security-Policy forbids the page from loading anything at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..calls import MCPCall
from .html_page import e, page
from .layout import trace_relpath
from .policies import render_json
from .summary import Summary
from .trace import Trace, divergent_calls

__all__ = ["render_report"]

_VALUE_LIMIT = 300
_OUTPUT_LIMIT = 20_000
_ABSENT = object()


_e = e


def _json(value: Any, limit: int = _VALUE_LIMIT) -> str:
    return _e(render_json(value, limit))


def _anchor(unit_id: str) -> str:
    return "u-" + hashlib.sha256(unit_id.encode("utf-8")).hexdigest()[:12]


def _pill(status: str) -> str:
    return f'<span class="pill {_e(status)}">{_e(status)}</span>'


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _header(summary: Summary) -> str:
    cards = [
        ("units", summary.total),
        ("passed", summary.passed),
        ("failed", summary.failed),
        ("errors", summary.errors),
        ("divergences", summary.divergences),
        ("policy failures", summary.policy_failures),
        ("scorer failures", summary.scorer_failures),
        ("wall time", f"{summary.wall_s:.1f}s"),
    ]
    verdict = '<span class="ok">OK</span>' if summary.ok else '<span class="bad">FAILED</span>'
    return (
        f"<h1>Wind Tunnel run: {_e(summary.pack)} {verdict}</h1>"
        + '<div class="cards">'
        + "".join(f'<div class="card"><b>{_e(v)}</b>{_e(k)}</div>' for k, v in cards)
        + "</div>"
    )


def _scenario_table(summary: Summary, traces: Sequence[Trace]) -> str:
    units: dict[str, list[Trace]] = {}
    for trace in traces:
        units.setdefault(trace.scenario, []).append(trace)
    rows = []
    for name, s in summary.scenarios.items():
        n = str(s.runs)
        runs = " ".join(
            f'<a href="#{_anchor(t.unit_id)}">{_pill(t.status)}</a>' for t in units.get(name, [])
        )
        rows.append(
            f"<tr><td>{_e(name)}</td><td>{s.passed}/{s.runs}</td>"
            f"<td>{_fmt(s.pass_at_k.get('1', 0.0))}</td>"
            f"<td>{_fmt(s.pass_at_k.get(n, 0.0))}</td><td>{_fmt(s.pass_hat_k.get(n, 0.0))}</td>"
            f"<td>{s.divergences}</td><td>{runs}</td></tr>"
        )
    return (
        "<h2>Scenarios</h2><table><tr><th>scenario</th><th>passed</th><th>pass@1</th>"
        "<th>pass@n</th><th>pass^n</th><th>divergences</th><th>runs</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _verdicts(trace: Trace) -> str:
    if not trace.verdicts:
        return '<p class="muted">No policies.</p>'
    rows = "".join(
        f"<tr><td>{_e(v.name)}</td><td>{_result(v.passed)}</td><td>{_e(v.reason)}</td></tr>"
        for v in trace.verdicts
    )
    return f"<table><tr><th>policy</th><th>result</th><th>reason</th></tr>{rows}</table>"


def _result(passed: bool) -> str:
    return '<span class="ok">pass</span>' if passed else '<span class="bad">FAIL</span>'


def _scores(trace: Trace) -> str:
    if not trace.scores:
        return '<p class="muted">No scorers.</p>'
    rows = "".join(
        f"<tr><td>{_e(s.name)}</td><td>{_e(f'{s.value:g}')}</td><td>{_e(f'{s.threshold:g}')}"
        f"</td><td>{_result(s.passed)}</td><td>{_e(s.detail)}</td></tr>"
        for s in trace.scores
    )
    return (
        "<table><tr><th>scorer</th><th>value</th><th>threshold</th><th>result</th>"
        f"<th>detail</th></tr>{rows}</table>"
    )


def _diff(warning: dict[str, Any]) -> str:
    nearest = warning.get("nearest")
    if not isinstance(nearest, dict):
        if warning.get("reason") == "unknown_tool":
            return '<p class="muted">The universe does not declare this tool.</p>'
        return '<p class="muted">No recording of this tool to compare with.</p>'
    args = warning.get("args") if isinstance(warning.get("args"), dict) else {}
    recorded = nearest.get("args")
    keys = nearest.get("differing_keys") or []
    head = (
        f"<p>Nearest recording: #{_e(nearest.get('index'))}, "
        f"{_e(nearest.get('shared'))} shared key/value pair(s).</p>"
    )
    if not keys:
        return head
    rows = []
    for key in keys:
        called = args.get(key, _ABSENT) if isinstance(args, dict) else _ABSENT
        if isinstance(recorded, dict):
            rec = recorded.get(key, _ABSENT)
            rec_html = "<i>absent</i>" if rec is _ABSENT else _json(rec)
        else:
            rec_html = '<i class="muted">not in trace</i>'
        call_html = "<i>absent</i>" if called is _ABSENT else _json(called)
        rows.append(
            f'<tr><td class="mono">{_e(key)}</td><td class="mono call">- {call_html}</td>'
            f'<td class="mono rec">+ {rec_html}</td></tr>'
        )
    return (
        head
        + '<table class="diff"><tr><th>key</th><th>this call</th><th>nearest recording</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _indexes(indexes: Sequence[int], limit: int = 20) -> str:
    shown = ", ".join(f"#{i}" for i in indexes[:limit])
    return shown + (f" and {len(indexes) - limit} more" if len(indexes) > limit else "")


def _coverage(trace: Trace) -> str:
    if not trace.coverage:
        return ""
    rows = "".join(
        f"<tr><td>{_e(upstream)}</td><td>{cov.served}/{cov.recordings}</td>"
        f"<td>{cov.calls}</td><td>{cov.unmatched}</td><td>{_e(_indexes(cov.unused))}</td></tr>"
        for upstream, cov in trace.coverage.items()
    )
    return (
        "<h3>Coverage</h3><table><tr><th>upstream</th><th>recordings served</th><th>calls</th>"
        f"<th>calls matching none</th><th>never used</th></tr>{rows}</table>"
    )


def _divergences(trace: Trace) -> str:
    warnings = [w for w in trace.warnings if w.get("event") == "universe_divergence"]
    if not warnings:
        return ""
    numbers = [n for n, _ in divergent_calls(trace.mcp_calls)]
    if len(numbers) != len(warnings):
        numbers = []
    parts = [f"<h3>Divergences ({len(warnings)})</h3>"]
    for i, warning in enumerate(warnings):
        where = f"call {numbers[i]} " if numbers else ""
        upstream = f"{warning.get('upstream')}." if warning.get("upstream") else ""
        parts.append(
            f'<div class="divergence"><p><b>{_e(where)}{_e(upstream)}{_e(warning.get("tool"))}'
            f"</b>(<code>{_json(warning.get('args'))}</code>) diverged: "
            f"<b>{_e(warning.get('reason'))}</b>, answered with policy "
            f"<code>{_e(warning.get('policy'))}</code></p>{_diff(warning)}</div>"
        )
    return "".join(parts)


def _timeline(trace: Trace) -> str:
    if not trace.mcp_calls:
        return '<h3>Calls</h3><p class="muted">No calls in this trace.</p>'
    by_upstream: dict[str, list[tuple[int, MCPCall]]] = {}
    for n, call in enumerate(trace.mcp_calls, 1):
        by_upstream.setdefault(call.upstream or "(unnamed)", []).append((n, call))
    # Offsets count from the unit's start, or from its first call when that came earlier.
    starts = [call.started_at for call in trace.mcp_calls if call.started_at]
    origin = min([*starts, trace.started_at] if trace.started_at else starts, default=0.0)
    parts = [f"<h3>Calls ({len(trace.mcp_calls)})</h3>"]
    for upstream, calls in by_upstream.items():
        rows = []
        for n, call in calls:
            offset = (call.started_at - origin) * 1000.0 if call.started_at else 0.0
            flags = []
            if call.divergence is not None:
                flags.append(f"diverged: {call.divergence.get('reason')}")
            if call.is_error:
                flags.append("error")
            css = ' class="diverged"' if call.divergence is not None else ""
            rows.append(
                f"<tr{css}><td>{n}</td><td>{offset:.0f}</td><td>{_e(call.tool_name)}</td>"
                f'<td class="mono">{_json(call.args)}</td><td class="mono">{_json(call.result)}'
                f"</td><td>{_e(', '.join(flags))}</td></tr>"
            )
        parts.append(
            f"<h3>upstream {_e(upstream)}</h3><table><tr><th>#</th><th>+ms</th><th>tool</th>"
            "<th>args</th><th>result</th><th>flags</th></tr>" + "".join(rows) + "</table>"
        )
    return "".join(parts)


def _unit(trace: Trace) -> str:
    is_open = " open" if trace.status != "passed" else ""
    # Links are rebuilt from the unit id, never taken from the (editable) results file.
    link = f' · <a href="{_e(trace_relpath(trace.unit_id))}">trace</a>' if trace.trace_file else ""
    body = [
        f'<details class="unit" id="{_anchor(trace.unit_id)}"{is_open}><summary>'
        f"{_pill(trace.status)} {_e(trace.unit_id)} "
        f'<span class="muted">{trace.duration_s:.2f}s · seed {trace.seed}</span>{link}'
        "</summary>",
        f"<p><b>Task:</b> {_e(trace.task)}</p>",
    ]
    if trace.error is not None:
        body.append(f'<p class="bad">Agent error: {_e(trace.error)}</p>')
    answer = trace.output
    if answer is not None:
        shown = answer if len(answer) <= _OUTPUT_LIMIT else answer[:_OUTPUT_LIMIT] + "…"
        body.append(f"<h3>Final answer</h3><pre>{_e(shown)}</pre>")
    body += [
        "<h3>Policies</h3>",
        _verdicts(trace),
        "<h3>Scorers</h3>",
        _scores(trace),
        _coverage(trace),
        _divergences(trace),
        _timeline(trace),
        "</details>",
    ]
    return "".join(body)


def render_report(traces: Sequence[Trace], summary: Summary) -> str:
    """The whole report as one HTML document."""
    body = (
        _header(summary)
        + _scenario_table(summary, traces)
        + "<h2>Units</h2>"
        + "".join(_unit(trace) for trace in traces)
    )
    return page(f"Wind Tunnel: {summary.pack}", body)
