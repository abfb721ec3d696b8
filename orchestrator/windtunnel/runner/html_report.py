"""`report.html`: one self-contained page (inline CSS, one small inline script) for humans.

It shows the run's counts, three inline SVG charts, a table of scenarios (failing ones first) with
pass@k / pass^k and coverage, then the units: failures and errors first, each with its verdicts,
scores, agent error and answer, coverage, every divergence with a key-by-key diff against the
nearest recording, and the call timeline per upstream; then every passed unit as one row of a
folded table, its details a link away in `traces/`. So a 10,000-unit run stays a few MB.

The page is written unit by unit from the run directory (`ReportUnits`), never held whole. A
filter (status) and search box come from an inline script allowed by its hash; without scripts
the page reads the same, only unfiltered. Everything taken from a trace is HTML-escaped; the
Content-Security-Policy forbids loading anything at all.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..calls import MCPCall
from ..divergence import divergence_label
from ..rundir.layout import trace_relpath
from .fault_checks import fault_label, injected_fault
from .html_page import e, page_parts
from .policies import render_json
from .report_charts import ChartStats
from .summary import Summary
from .trace import Trace, divergent_calls, undelivered_faults
from .unit_order import RANKS

__all__ = ["FULL_DETAILS", "ReportUnits", "render_report", "write_report"]

_VALUE_LIMIT = 300
_OUTPUT_LIMIT = 20_000
_ABSENT = object()
FULL_DETAILS = 500
"""Units shown in full; failures past this many are listed as rows (their traces a link away)."""


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
    if summary.invalid or summary.faults_injected:
        cards[4:4] = [("invalid", summary.invalid), ("faults injected", summary.faults_injected)]
    verdict = '<span class="ok">OK</span>' if summary.ok else '<span class="bad">FAILED</span>'
    return (
        f"<h1>Wind Tunnel run: {_e(summary.pack)} {verdict}</h1>"
        + '<div class="cards">'
        + "".join(f'<div class="card"><b>{_e(v)}</b>{_e(k)}</div>' for k, v in cards)
        + "</div>"
    )


def _scenario_table(summary: Summary) -> str:
    """Failing scenarios first, then by name."""
    rows = []
    ordered = sorted(summary.scenarios.items(), key=lambda item: (item[1].all_passed, item[0]))
    for name, s in ordered:
        n = str(s.runs)
        served = sum(c.served for c in s.coverage.values())
        recordings = sum(c.recordings for c in s.coverage.values())
        coverage = f"{served}/{recordings}" if s.coverage else "-"
        status = "passed" if s.all_passed else "failed" if not s.any_passed else "mixed"
        rows.append(
            f'<tr data-s="{status}" data-k="{_e(name.lower())}"><td>{_e(name)}</td>'
            f"<td>{s.passed}/{s.runs}</td><td>{_fmt(s.pass_at_k.get('1', 0.0))}</td>"
            f"<td>{_fmt(s.pass_at_k.get(n, 0.0))}</td><td>{_fmt(s.pass_hat_k.get(n, 0.0))}</td>"
            f"<td>{s.divergences}</td><td>{coverage}</td></tr>"
        )
    return (
        f"<h2>Scenarios ({len(rows)})</h2><table><tr><th>scenario</th><th>passed</th>"
        "<th>pass@1</th><th>pass@n</th><th>pass^n</th><th>divergences</th>"
        "<th>recordings served</th></tr>" + "".join(rows) + "</table>"
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


_REQUEST_MISSES = {
    "resources/read": "No recorded read of this URI (resource_reads).",
    "prompts/get": "No recorded get of this prompt with these arguments (prompt_gets).",
    "completion/complete": "No recorded completion of this ref and argument (completions).",
}


def _client_exchange(warning: dict[str, Any]) -> str:
    """A `client_answer_differs` divergence's evidence: the request the server made while
    answering, the client's answer when recorded and the live client's answer now."""
    client = warning.get("client")
    if not isinstance(client, dict):
        return ""
    asked = client.get("asked")
    method = asked.get("method") if isinstance(asked, dict) else None
    params = asked.get("params") if isinstance(asked, dict) else None
    return (
        f"<p>The server asked the client <code>{_e(method)}</code> "
        f"(<code>{_json(params)}</code>) while answering recording "
        f"#{_e(warning.get('recording'))}; the client answered otherwise:</p>"
        '<table class="diff"><tr><th>answered when recorded</th><th>answered now</th></tr>'
        f'<tr><td class="mono rec">{_json(client.get("answered_then"))}</td>'
        f'<td class="mono call">{_json(client.get("answered_now"))}</td></tr></table>'
    )


def _diff(warning: dict[str, Any]) -> str:
    method = warning.get("method", "tools/call")
    if method != "tools/call":
        miss = _REQUEST_MISSES.get(str(method), "No recorded answer to this request.")
        return f'<p class="muted">{_e(miss)}</p>'
    if warning.get("reason") == "client_answer_differs":
        return _client_exchange(warning)
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


def _live(count: int) -> str:
    """Of the calls matching none, those the live upstream answered (`new_episodes`)."""
    return f" ({count} live)" if count else ""


def _coverage(trace: Trace) -> str:
    if not trace.coverage:
        return ""
    rows = "".join(
        f"<tr><td>{_e(upstream)}</td><td>{cov.served}/{cov.recordings}</td>"
        f"<td>{cov.calls}</td><td>{cov.unmatched}{_live(cov.live)}</td>"
        f"<td>{_e(_indexes(cov.unused))}</td></tr>"
        for upstream, cov in trace.coverage.items()
    )
    return (
        "<h3>Coverage</h3><table><tr><th>upstream</th><th>recordings served</th><th>calls</th>"
        f"<th>calls matching none</th><th>never used</th></tr>{rows}</table>"
        + _request_coverage(trace)
    )


def _request_coverage(trace: Trace) -> str:
    """The recorded answers to requests other than tool calls, per upstream and section."""
    rows = "".join(
        f"<tr><td>{_e(upstream)}</td><td>{_e(section)}</td><td>{cov.served}/{cov.recorded}</td>"
        f"<td>{cov.calls}</td><td>{cov.unmatched}</td><td>{_e(_indexes(cov.unused))}</td></tr>"
        for upstream, upstream_cov in trace.coverage.items()
        for section, cov in upstream_cov.requests.items()
    )
    if not rows:
        return ""
    return (
        "<table><tr><th>upstream</th><th>requests answered from</th><th>entries served</th>"
        f"<th>requests</th><th>requests matching none</th><th>never used</th></tr>{rows}</table>"
    )


def _diverged(where: str, warning: dict[str, Any]) -> str:
    """What diverged, after `where` (`call 3 `): `upstream.tool`, or for another request the
    upstream, its method (set apart) and its target (URI, prompt name, completion ref)."""
    method = warning.get("method", "tools/call")
    if method == "tools/call":
        return f"<b>{_e(where)}{_e(divergence_label(warning))}</b>"
    upstream = warning.get("upstream")
    if isinstance(upstream, str) and upstream:
        where += f"{upstream} "
    return (
        f'<b>{_e(where)}</b><code class="method">{_e(method)}</code> '
        f"<b>{_e(warning.get('tool'))}</b>"
    )


def _faults(trace: Trace) -> str:
    """The faults the unit declared, and how many calls got each."""
    if not trace.faults:
        return ""
    rows = "".join(
        f'<tr><td class="mono">{_e(check.fault)}</td><td>{check.injected}</td></tr>'
        for check in trace.faults
    )
    head = "<tr><th>declared fault</th><th>calls injected</th></tr>"
    return f"<h3>Faults</h3><table>{head}{rows}</table>"


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
        parts.append(
            f'<div class="divergence"><p>{_diverged(where, warning)}'
            f"(<code>{_json(warning.get('args'))}</code>) diverged: "
            f"<b>{_e(warning.get('reason'))}</b>, answered with policy "
            f"<code>{_e(warning.get('policy'))}</code></p>{_diff(warning)}</div>"
        )
    return "".join(parts)


def _called(call: MCPCall) -> str:
    """A timeline row's call: the tool, or a request's method before its target."""
    if call.method == "tools/call":
        return _e(call.tool_name)
    return f'<code class="method">{_e(call.method)}</code> {_e(call.tool_name)}'


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
            fault = injected_fault(call)
            if fault is not None:
                flags.append(f"fault injected: {fault_label(fault)}")
            if call.is_error:
                flags.append("error")
            css = ' class="diverged"' if call.divergence is not None else ""
            css = ' class="faulted"' if fault is not None else css
            rows.append(
                f"<tr{css}><td>{n}</td><td>{offset:.0f}</td><td>{_called(call)}</td>"
                f'<td class="mono">{_json(call.args)}</td><td class="mono">{_json(call.result)}'
                f"</td><td>{_e(', '.join(flags))}</td></tr>"
            )
        parts.append(
            f"<h3>upstream {_e(upstream)}</h3><table><tr><th>#</th><th>+ms</th>"
            "<th>tool or request</th><th>args</th><th>result</th><th>flags</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    return "".join(parts)


def _unit(trace: Trace) -> str:
    is_open = " open" if trace.status != "passed" else ""
    # Links are rebuilt from the unit id, never taken from the (editable) results file.
    link = f' · <a href="{_e(trace_relpath(trace.unit_id))}">trace</a>' if trace.trace_file else ""
    body = [
        f'<details class="unit" id="{_anchor(trace.unit_id)}"{is_open}{_keys(trace)}><summary>'
        f"{_pill(trace.status)} {_e(trace.unit_id)} "
        f'<span class="muted">{trace.duration_s:.2f}s · seed {trace.seed}</span>{link}'
        "</summary>",
        f"<p><b>Task:</b> {_e(trace.task)}</p>",
    ]
    if trace.error is not None:
        body.append(f'<p class="bad">Agent error: {_e(trace.error)}</p>')
    body += [f'<p class="bad">Invalid: {_e(reason)}</p>' for reason in undelivered_faults(trace)]
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
        _faults(trace),
        _divergences(trace),
        _timeline(trace),
        "</details>",
    ]
    return "".join(body)


def _keys(trace: Trace) -> str:
    """What the filter script matches: the status, and the id, scenario and tags to search."""
    words = " ".join([trace.unit_id, trace.scenario, *trace.tags]).lower()
    return f' data-s="{_e(trace.status)}" data-k="{_e(words)}"'


def _row(trace: Trace) -> str:
    """A unit as one table row: its details are in its trace file."""
    link = f'<a href="{_e(trace_relpath(trace.unit_id))}">trace</a>' if trace.trace_file else ""
    return (
        f'<tr id="{_anchor(trace.unit_id)}"{_keys(trace)}><td>{_pill(trace.status)}</td>'
        f"<td>{_e(trace.unit_id)}</td><td>{_e(', '.join(trace.tags))}</td>"
        f"<td>{trace.duration_s:.2f}s</td><td>{trace.divergence_count}</td><td>{link}</td></tr>"
    )


_ROWS_HEAD = (
    "<table><tr><th>status</th><th>unit</th><th>tags</th><th>duration</th><th>divergences</th>"
    "<th>details</th></tr>"
)

_FILTER_SCRIPT = """(function(){
var bar=document.getElementById('filter');bar.hidden=false;
var q=document.getElementById('q'),st=document.getElementById('st'),n=document.getElementById('n');
var units=document.querySelectorAll('main [data-k]');
function apply(){var t=q.value.trim().toLowerCase(),s=st.value,shown=0;
for(var i=0;i<units.length;i++){var u=units[i];
var ok=(!s||u.getAttribute('data-s')===s)&&(!t||u.getAttribute('data-k').indexOf(t)>=0);
u.hidden=!ok;if(ok)shown++;}
n.textContent=shown+' of '+units.length+' rows shown';
var p=document.getElementById('passed');if(p&&(t||s==='passed'))p.open=true;}
q.addEventListener('input',apply);st.addEventListener('change',apply);apply();})();"""

_FILTER_BAR = (
    '<div class="toolbar" id="filter" hidden><input type="search" id="q" '
    'placeholder="Search units and scenarios by id, name or tag" aria-label="search">'
    '<select id="st" aria-label="status"><option value="">any status</option>'
    '<option value="failed">failed</option><option value="error">error</option>'
    '<option value="invalid">invalid</option>'
    '<option value="mixed">mixed (scenarios)</option><option value="passed">passed</option>'
    '</select><span class="muted" id="n"></span></div>'
)


class ReportUnits(abc.ABC):
    """Where the report reads its units from, one at a time."""

    @abc.abstractmethod
    def rows(self) -> Iterable[Trace]:
        """Every unit once (call logs not needed)."""

    @abc.abstractmethod
    def ordered(self) -> Iterable[Trace]:
        """Every unit once: failures and errors first, then passes, each group by unit id."""

    @abc.abstractmethod
    def full(self, row: Trace) -> Trace:
        """The unit with its call log."""


class _ListUnits(ReportUnits):
    def __init__(self, traces: Sequence[Trace]) -> None:
        self.traces = traces

    def rows(self) -> Iterable[Trace]:
        return self.traces

    def ordered(self) -> Iterable[Trace]:
        return sorted(self.traces, key=lambda t: (RANKS.get(t.status, 0), t.unit_id))

    def full(self, row: Trace) -> Trace:
        return row


def write_report(write: Callable[[str], object], units: ReportUnits, summary: Summary) -> None:
    """Write the whole report through `write`, one unit at a time."""
    head, tail = page_parts(f"Wind Tunnel: {summary.pack}", script=_FILTER_SCRIPT)
    stats = ChartStats(summary.durations.max)
    for row in units.rows():
        stats.add(row)
    write(head + _header(summary) + stats.render() + _FILTER_BAR + _scenario_table(summary))
    failing = summary.total - summary.passed
    write(f"<h2>Failures and errors ({failing})</h2>")
    if not failing:
        write('<p class="muted">None: every unit passed.</p>')
    shown = 0
    in_rows = False
    passed_open = False
    for row in units.ordered():
        if row.status != "passed":
            if shown < FULL_DETAILS:
                write(_unit(units.full(row)))
                shown += 1
                continue
            if not in_rows:
                write(f"<p>{failing - shown} more, one row each:</p>{_ROWS_HEAD}")
                in_rows = True
            write(_row(row))
            continue
        if not passed_open:
            if in_rows:
                write("</table>")
                in_rows = False
            write(
                f'<details class="unit" id="passed"><summary>Passed units ({summary.passed})'
                f"</summary>{_ROWS_HEAD}"
            )
            passed_open = True
        write(_row(row))
    if in_rows:
        write("</table>")
    if passed_open:
        write("</table></details>")
    write(tail)


def render_report(traces: Sequence[Trace], summary: Summary) -> str:
    """The whole report as one HTML document (in memory: for a handful of traces)."""
    parts: list[str] = []
    write_report(parts.append, _ListUnits(traces), summary)
    return "".join(parts)
