"""The report's charts: inline SVG drawn from counts gathered in one pass over the units.

Three pictures people would rather look at than read: the pass rate by tag, divergences by
upstream and tool, and the distribution of unit durations. Each is a plain `<svg>` element with
`<title>` tooltips and the numbers written beside the bars, so it reads the same printed, in any
browser, and with scripts off.
"""

from __future__ import annotations

from collections import Counter

from ..divergence import divergence_label
from .html_page import e
from .trace import Trace

__all__ = ["ChartStats"]

_TOP = 12
_BINS = 20
_WIDTH = 380
_LABEL = 150
_ROW = 18


class ChartStats:
    """Counts for the charts, fed one unit at a time (memory grows with tags and tools only)."""

    def __init__(self, max_duration: float) -> None:
        self.by_tag: dict[str, list[int]] = {}
        self.divergences: Counter[str] = Counter()
        self.max_duration = max_duration
        self.bins = [0] * _BINS

    def add(self, trace: Trace) -> None:
        for tag in trace.tags or ["(untagged)"]:
            counts = self.by_tag.setdefault(tag, [0, 0])
            counts[0] += trace.status == "passed"
            counts[1] += 1
        for warning in trace.warnings:
            if warning.get("event") == "universe_divergence":
                self.divergences[divergence_label(warning)] += 1
        if self.max_duration > 0:
            index = int(trace.duration_s / self.max_duration * _BINS)
            self.bins[min(max(index, 0), _BINS - 1)] += 1
        else:
            self.bins[0] += 1

    def render(self) -> str:
        return (
            '<div class="charts">'
            + self._pass_rate_by_tag()
            + self._divergences_by_tool()
            + self._durations()
            + "</div>"
        )

    def _pass_rate_by_tag(self) -> str:
        tags = sorted(self.by_tag.items(), key=lambda item: (-item[1][1], item[0]))[:_TOP]
        bars = [
            (tag, passed / total, f"{passed}/{total} ({passed / total:.0%})")
            for tag, (passed, total) in sorted(tags, key=lambda item: item[1][0] / item[1][1])
        ]
        more = len(self.by_tag) - len(tags)
        return _bar_chart("Pass rate by tag", bars, "#1a7f37", more)

    def _divergences_by_tool(self) -> str:
        top = self.divergences.most_common(_TOP)
        if not top:
            return _chart("Divergences by upstream and tool", '<p class="muted">None.</p>')
        peak = top[0][1]
        bars = [(label, count / peak, str(count)) for label, count in top]
        more = len(self.divergences) - len(top)
        return _bar_chart("Divergences by upstream and tool", bars, "#cf222e", more)

    def _durations(self) -> str:
        peak = max(self.bins) or 1
        height, bar = 90, (_WIDTH - 20) / _BINS
        step = self.max_duration / _BINS
        rects = []
        for i, count in enumerate(self.bins):
            h = count / peak * height
            low, high = i * step, (i + 1) * step
            rects.append(
                f'<rect x="{10 + i * bar:.1f}" y="{10 + height - h:.1f}" width="{bar - 2:.1f}" '
                f'height="{h:.1f}" fill="#0969da"><title>{low:.2f}-{high:.2f}s: {count} unit(s)'
                "</title></rect>"
            )
        svg = (
            f'<svg role="img" width="{_WIDTH}" height="{height + 34}" '
            f'viewBox="0 0 {_WIDTH} {height + 34}"><title>Unit durations</title>'
            + "".join(rects)
            + f'<text x="10" y="{height + 26}" font-size="11">0s</text>'
            f'<text x="{_WIDTH - 10}" y="{height + 26}" font-size="11" text-anchor="end">'
            f"{self.max_duration:.2f}s</text></svg>"
        )
        return _chart(f"Duration of units (peak bin: {peak})", svg)


def _chart(title: str, inner: str) -> str:
    return f'<div class="chart"><h3>{e(title)}</h3>{inner}</div>'


def _bar_chart(title: str, bars: list[tuple[str, float, str]], colour: str, more: int) -> str:
    height = _ROW * len(bars) + 4
    span = _WIDTH - _LABEL - 90
    rows = []
    for i, (label, fraction, text) in enumerate(bars):
        y = i * _ROW + 2
        shown = label if len(label) <= 22 else label[:21] + "…"
        rows.append(
            f'<text x="{_LABEL - 6}" y="{y + 12}" font-size="11" text-anchor="end">{e(shown)}'
            f"<title>{e(label)}</title></text>"
            f'<rect x="{_LABEL}" y="{y}" width="{span}" height="14" fill="#eef1f4"></rect>'
            f'<rect x="{_LABEL}" y="{y}" width="{max(fraction, 0.0) * span:.1f}" height="14" '
            f'fill="{colour}"><title>{e(label)}: {e(text)}</title></rect>'
            f'<text x="{_LABEL + max(fraction, 0.0) * span + 4:.1f}" y="{y + 12}" '
            f'font-size="11">{e(text)}</text>'
        )
    svg = (
        f'<svg role="img" width="{_WIDTH}" height="{height}" viewBox="0 0 {_WIDTH} {height}">'
        f"<title>{e(title)}</title>" + "".join(rows) + "</svg>"
    )
    note = f'<p class="muted">and {more} more</p>' if more > 0 else ""
    return _chart(title, svg + note)
