"""`wt diff --format markdown`: a PR comment, short by default, with the details folded.

A headline, a table of the changed scenarios (at most `MAX_ROWS`), then one folded `<details>`
per changed scenario (at most `MAX_DETAILS`) with its new and gone divergences, the arguments
that kept each from its nearest recording, and the call-sequence diff. Text from the runs is
escaped for tables, inline code and HTML, and fenced with more backticks than it contains.
"""

from __future__ import annotations

import html
import re

from .model import DivergenceDiff, RunDiff, ScenarioDiff
from .render_text import headline, side_text

__all__ = ["MAX_DETAILS", "MAX_ROWS", "render_markdown"]

MAX_ROWS = 25
MAX_DETAILS = 10
MAX_DIFF_LINES = 60


def _code(text: str) -> str:
    """Inline code that survives any backticks and pipes in `text`."""
    text = text.replace("|", "\\|").replace("\n", " ")
    ticks = "`" * (max((len(m) for m in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(lines: list[str], language: str) -> list[str]:
    body = "\n".join(lines)
    ticks = "`" * max(3, max((len(m) for m in re.findall("`+", body)), default=0) + 1)
    return [f"{ticks}{language}", *lines, ticks]


def _divergence(kind: str, item: DivergenceDiff) -> list[str]:
    times = item.new if kind == "new" else item.base
    lines = [f"- {kind}: {_code(item.label)} {html.escape(str(item.reason))}, {times} time(s)"]
    for kd in item.differences:
        called = _code(kd.called) if kd.called is not None else "*absent*"
        recorded = _code(kd.recorded) if kd.recorded is not None else "*absent*"
        lines.append(
            f"  - {_code(kd.key)}: called {called}, recording #{item.nearest_index} has {recorded}"
        )
    return lines


def _details(d: ScenarioDiff) -> list[str]:
    parts = [f"{d.change}"]
    if d.new_divergences:
        parts.append(f"{len(d.new_divergences)} new divergence(s)")
    if d.gone_divergences:
        parts.append(f"{len(d.gone_divergences)} gone")
    lines = [
        f"<details><summary>{html.escape(d.scenario)}: {html.escape(', '.join(parts))}</summary>",
        "",
    ]
    for item in d.new_divergences:
        lines += _divergence("new", item)
    for item in d.gone_divergences:
        lines += _divergence("gone", item)
    if d.calls_diff:
        shown = d.calls_diff[:MAX_DIFF_LINES]
        if len(d.calls_diff) > MAX_DIFF_LINES:
            shown.append(f"... {len(d.calls_diff) - MAX_DIFF_LINES} more lines (wt diff --json)")
        lines += ["", f"Calls of {' vs '.join(map(_code, d.compared_units))}:", ""]
        lines += _fence(shown, "diff")
    return [*lines, "", "</details>"]


def render_markdown(diff: RunDiff) -> str:
    changed = [d for d in diff.scenarios if d.changed]
    gate = "regressed" if diff.counts.regressed else "no regression"
    out = [f"### Wind Tunnel diff: {html.escape(diff.new_pack)} ({gate})", "", headline(diff), ""]
    if not changed:
        return "\n".join([*out, "No scenario changed."]) + "\n"
    out += [
        "| scenario | change | base | new | p (Fisher) | divergences |",
        "|---|---|---|---|---|---|",
    ]
    for d in changed[:MAX_ROWS]:
        change = d.change + (" (flip)" if d.flipped else "")
        p = f"{d.p_value:.3g}" + (" **significant**" if d.significant else "")
        out.append(
            f"| {_code(d.scenario)} | {change} | {side_text(d.base)} | {side_text(d.new)} | {p} "
            f"| +{len(d.new_divergences)} / -{len(d.gone_divergences)} |"
        )
    if len(changed) > MAX_ROWS:
        out.append(f"\n…and {len(changed) - MAX_ROWS} more changed scenario(s) (wt diff --json).")
    out.append("")
    for d in changed[:MAX_DETAILS]:
        out += _details(d)
    if len(changed) > MAX_DETAILS:
        out.append(
            f"\nDetails of {len(changed) - MAX_DETAILS} more scenario(s): wt diff --format html."
        )
    return "\n".join(out) + "\n"
