"""`wt diff --format html`: the comparison as one self-contained page (no scripts, no fetches).

Changed scenarios first, each open, with its new / gone divergences, the arguments that kept each
from its nearest recording, and the coloured call-sequence diff; unchanged scenarios are listed
in a folded table. Everything taken from the runs is HTML-escaped.
"""

from __future__ import annotations

from ..runner.html_page import e, page
from .model import DivergenceDiff, RunDiff, ScenarioDiff
from .render_text import headline, requests_of, side_text

__all__ = ["render_html"]

_CHANGE_CSS = {
    "regressed": "failed",
    "removed": "failed",
    "improved": "passed",
    "added": "passed",
    "unchanged": "neutral",
}


def _pill(change: str) -> str:
    return f'<span class="pill {_CHANGE_CSS[change]}">{e(change)}</span>'


def _value(json_text: str | None) -> str:
    return "<i>absent</i>" if json_text is None else e(json_text)


def _divergences(title: str, items: list[DivergenceDiff], new: bool) -> str:
    if not items:
        return ""
    parts = [f"<h3>{e(title)} ({len(items)}){e(requests_of(items))}</h3>"]
    for item in items:
        times = item.new if new else item.base
        parts.append(
            f"<p><code>{e(item.label)}</code>: <b>{e(item.reason)}</b>, policy "
            f"<code>{e(item.policy)}</code>, {times} time(s)</p>"
        )
        if item.differences:
            rows = "".join(
                f'<tr><td class="mono">{e(kd.key)}</td><td class="mono call">- {_value(kd.called)}'
                f'</td><td class="mono rec">+ {_value(kd.recorded)}</td></tr>'
                for kd in item.differences
            )
            parts.append(
                f'<table class="diff"><tr><th>key</th><th>this call</th>'
                f"<th>nearest recording #{e(item.nearest_index)}</th></tr>{rows}</table>"
            )
    return "".join(parts)


def _calls(d: ScenarioDiff) -> str:
    if not d.calls_diff:
        return ""
    lines = []
    for line in d.calls_diff:
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        lines.append(f'<span class="{css}">{e(line)}</span>')
    units = " vs ".join(d.compared_units)
    # Each line is a block of its own: a newline between them would add an empty line.
    return f"<h3>Calls ({e(units)})</h3><pre>" + "".join(lines) + "</pre>"


def _scenario(d: ScenarioDiff) -> str:
    flip = " (status flipped)" if d.flipped else ""
    significant = " — significant" if d.significant else ""
    return (
        f'<details class="unit" open><summary>{_pill(d.change)} {e(d.scenario)}{e(flip)} '
        f'<span class="muted">{e(side_text(d.base))} → {e(side_text(d.new))}, '
        f"Fisher p = {d.p_value:.3g}{e(significant)}</span></summary>"
        + _divergences("New divergences", d.new_divergences, True)
        + _divergences("Gone divergences", d.gone_divergences, False)
        + (
            f'<p class="muted">{len(d.unchanged_divergences)} divergence(s) unchanged.</p>'
            if d.unchanged_divergences
            else ""
        )
        + _calls(d)
        + "</details>"
    )


def render_html(diff: RunDiff) -> str:
    changed = [d for d in diff.scenarios if d.changed]
    unchanged = [d for d in diff.scenarios if not d.changed]
    c = diff.counts
    cards = [
        ("regressed", c.regressed),
        ("significant", c.significant_regressions),
        ("improved", c.improved),
        ("added", c.added),
        ("removed", c.removed),
        ("new divergences", c.new_divergences),
        ("gone divergences", c.gone_divergences),
        ("pass rate", f"{diff.base_pass_rate:.1%} → {diff.new_pass_rate:.1%}"),
    ]
    body = [
        f"<h1>Wind Tunnel diff: {e(diff.new_pack)}</h1>",
        f'<p class="muted">base <code>{e(diff.base)}</code> ({diff.base_units} units) → new '
        f"<code>{e(diff.new)}</code> ({diff.new_units} units). {e(headline(diff))}</p>",
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{e(v)}</b>{e(k)}</div>' for k, v in cards)
        + "</div>",
        f'<p class="muted">p: Fisher\'s exact test on passes and failures of each scenario; '
        f"significant below {diff.alpha:g}.</p>",
        f"<h2>Changed scenarios ({len(changed)})</h2>",
        "".join(_scenario(d) for d in changed) or '<p class="muted">None.</p>',
    ]
    if unchanged:
        rows = "".join(
            f"<tr><td>{e(d.scenario)}</td><td>{e(side_text(d.base))}</td>"
            f"<td>{e(side_text(d.new))}</td></tr>"
            for d in unchanged
        )
        body.append(
            f'<details class="unit"><summary>Unchanged scenarios ({len(unchanged)})</summary>'
            f"<table><tr><th>scenario</th><th>base</th><th>new</th></tr>{rows}</table></details>"
        )
    return page(f"Wind Tunnel diff: {diff.new_pack}", "".join(body))
