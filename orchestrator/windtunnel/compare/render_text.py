"""`wt diff` for a terminal: a table of the changed scenarios, then what changed in each."""

from __future__ import annotations

from .model import DivergenceDiff, RunDiff, ScenarioDiff, Side

__all__ = ["headline", "render_text", "requests_of", "side_text"]


def side_text(side: Side | None) -> str:
    """`2/3 passed` (`, 1 invalid` and `, 4 faults` when there are any), or `-` when the run
    lacks the scenario."""
    if side is None:
        return "-"
    text = f"{side.passed}/{side.runs} passed"
    if side.invalid:
        text += f", {side.invalid} invalid"
    if side.faults_injected:
        text += f", {side.faults_injected} fault" + ("s" if side.faults_injected > 1 else "")
    return text


def _requests(count: int) -> str:
    """Of some divergences, how many were requests other than tool calls (when any were)."""
    return f" ({count} request{'s' if count != 1 else ''})" if count else ""


def requests_of(items: list[DivergenceDiff]) -> str:
    """` (2 requests)`: how many of `items` are requests other than tool calls, if any."""
    return _requests(sum(item.is_request for item in items))


def headline(diff: RunDiff) -> str:
    """One line: the counts that matter, for a terminal or a PR comment's first line."""
    c = diff.counts
    return (
        f"{c.regressed} regressed ({c.significant_regressions} significant), "
        f"{c.improved} improved, {c.added} added, {c.removed} removed, {c.unchanged} unchanged; "
        f"divergences: {c.new_divergences} new{_requests(c.new_request_divergences)}, "
        f"{c.gone_divergences} gone{_requests(c.gone_request_divergences)}, "
        f"{c.unchanged_divergences} unchanged; pass rate {diff.base_pass_rate:.1%} -> "
        f"{diff.new_pass_rate:.1%}"
        + (
            f"; invalid units {diff.base_invalid} -> {diff.new_invalid}"
            if diff.base_invalid or diff.new_invalid
            else ""
        )
    )


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _details(d: ScenarioDiff) -> list[str]:
    lines = [f"== {d.scenario}: {d.change}"]
    if d.new_divergences or d.gone_divergences:
        lines[0] += (
            f"; divergences {len(d.new_divergences)} new{requests_of(d.new_divergences)}, "
            f"{len(d.gone_divergences)} gone{requests_of(d.gone_divergences)}"
        )
    for label, items in (("new", d.new_divergences), ("gone", d.gone_divergences)):
        for item in items:
            times = item.new if label == "new" else item.base
            lines.append(f"  {label} divergence: {item.label}: {item.reason} (x{times})")
            for kd in item.differences:
                called = kd.called if kd.called is not None else "(absent)"
                recorded = kd.recorded if kd.recorded is not None else "(absent)"
                at = f"recording #{item.nearest_index}"
                lines.append(f"      {kd.key}: called {called}, {at} has {recorded}")
    if d.calls_diff:
        lines.append("  calls:")
        lines += [f"    {line}" for line in d.calls_diff]
    return lines


def render_text(diff: RunDiff, *, all_scenarios: bool = False) -> str:
    """The changed scenarios as a table (every scenario with `all_scenarios`), then details."""
    shown = [d for d in diff.scenarios if all_scenarios or d.changed]
    out = [f"wt diff {diff.base} -> {diff.new}", headline(diff)]
    if shown:
        rows = [["scenario", "change", "base", "new", "p", "divergences +new/-gone"]]
        for d in shown:
            p = f"{d.p_value:.3g}" + (" *" if d.significant else "")
            rows.append(
                [
                    d.scenario,
                    d.change + (" (flip)" if d.flipped else ""),
                    side_text(d.base),
                    side_text(d.new),
                    p,
                    f"+{len(d.new_divergences)}/-{len(d.gone_divergences)}",
                ]
            )
        out += ["", *_table(rows)]
        out.append(f"p: Fisher's exact test on passes and failures; * marks p < {diff.alpha:g}")
    else:
        out.append("No scenario changed.")
    for d in shown:
        if d.changed:
            out += ["", *_details(d)]
    return "\n".join(out) + "\n"
