"""`wt diff --format markdown`: a PR comment, short by default, with the details folded.

A headline, a table of the changed scenarios (at most `MAX_ROWS`), then one folded `<details>`
per changed scenario (at most `MAX_DETAILS`) with its new and gone divergences, the arguments
that kept each from its nearest recording, and the call-sequence diff.

Every string from the runs (pack and scenario names, unit ids, tools, arguments, reasons) is
somebody's data, and a PR comment is rendered by GitHub: a line break ends a table row or the
`<summary>` HTML block, after which the rest is parsed as markdown (images fetched from anywhere,
`@mentions` that notify people, links). So each such string is shown only as code, which GitHub
renders as text (no images, links, mentions or emoji inside code): an inline code span fenced
with more backticks than it holds, `<code>` with HTML escaped inside the `<summary>`, a fence
longer than any backtick run for the call diff, and every line break or other control character
written as a visible escape (`\u000a`) so one string stays on one line.
"""

from __future__ import annotations

import html
import re

from ..terminal_text import escape_terminal
from .model import DivergenceDiff, RunDiff, ScenarioDiff
from .render_text import headline, requests_of, side_text

__all__ = ["MAX_DETAILS", "MAX_ROWS", "code_span", "render_markdown"]

MAX_ROWS = 25
MAX_DETAILS = 10
MAX_DIFF_LINES = 60

# A reason such as `no_recorded_result` reads better as a word; anything else is code.
_PLAIN_WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
# Besides CR and LF, U+2028 / U+2029 are not line breaks to cmark, but are to some viewers.
_LINE_SEPARATORS = re.compile("[\u2028\u2029]")


def _one_line(text: str) -> str:
    """`text` with every control character (CR and LF included) as a visible escape."""
    text = escape_terminal(text)
    return _LINE_SEPARATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _code(text: str, *, in_table: bool = False) -> str:
    """Inline code showing `text` as it is; in a table cell its pipes are escaped, since GFM
    splits a row on `|` before it reads the code spans in it."""
    text = _one_line(text)
    if in_table:
        text = text.replace("|", "\\|")
    ticks = "`" * (max((len(m) for m in re.findall("`+", text)), default=0) + 1)
    # CommonMark strips one space from each end of a code span that starts and ends with one
    # (unless it is all spaces), and an edge backtick would join the fence: pad both cases.
    edge_space = text.startswith(" ") and text.endswith(" ") and text.strip(" ") != ""
    pad = " " if not text or edge_space or text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


code_span = _code
"""Inline code for somebody's string in a PR comment (`wt verify --format markdown` uses it)."""


def _html_code(text: str) -> str:
    """`<code>` for raw HTML (the `<summary>` line), where markdown is not read."""
    return f"<code>{html.escape(_one_line(text))}</code>"


def _reason(reason: str | None) -> str:
    text = str(reason)
    return text if _PLAIN_WORD.fullmatch(text) else _code(text)


def _fence(lines: list[str], language: str) -> list[str]:
    lines = [_one_line(line) for line in lines]
    body = "\n".join(lines)
    ticks = "`" * max(3, max((len(m) for m in re.findall("`+", body)), default=0) + 1)
    return [f"{ticks}{language}", *lines, ticks]


def _divergence(kind: str, item: DivergenceDiff) -> list[str]:
    times = item.new if kind == "new" else item.base
    lines = [f"- {kind}: {_code(item.label)} {_reason(item.reason)}, {times} time(s)"]
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
        parts.append(f"{len(d.new_divergences)} new divergence(s){requests_of(d.new_divergences)}")
    if d.gone_divergences:
        parts.append(f"{len(d.gone_divergences)} gone{requests_of(d.gone_divergences)}")
    lines = [
        f"<details><summary>{_html_code(d.scenario)}: {html.escape(', '.join(parts))}</summary>",
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
    out = [f"### Wind Tunnel diff: {_code(diff.new_pack)} ({gate})", "", headline(diff), ""]
    if not changed:
        return "\n".join([*out, "No scenario changed."]) + "\n"
    out += [
        "| scenario | change | base | new | p (Fisher) | divergences |",
        "|---|---|---|---|---|---|",
    ]
    for d in changed[:MAX_ROWS]:
        change = d.change + (" (flip)" if d.flipped else "")
        p = f"{d.p_value:.3g}" + (" **significant**" if d.significant else "")
        name = _code(d.scenario, in_table=True)
        out.append(
            f"| {name} | {change} | {side_text(d.base)} | {side_text(d.new)} | {p} "
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
