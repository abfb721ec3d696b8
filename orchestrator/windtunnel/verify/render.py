"""`wt verify`'s output: text for a terminal, markdown for a PR comment, JSON for scripts.

Every string from a universe or a server (tool names, descriptions quoted in details, server
error messages) is somebody's data: the text form escapes terminal control bytes, the markdown
form shows each as inline code (as `wt diff` does: no links, images or mentions from a server's
answer in a PR comment), and JSON is JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..compare.render_markdown import code_span
from ..errors import InputError
from ..input_files import read_input
from ..terminal_text import escape_terminal
from .findings import UniverseReport

__all__ = ["load_reports", "render_json", "render_markdown", "render_text", "totals"]


def totals(reports: Sequence[UniverseReport]) -> tuple[int, int]:
    """(breaking, informational) findings over every universe."""
    return (
        sum(len(r.breaking) for r in reports),
        sum(len(r.informational) for r in reports),
    )


def _headline(reports: Sequence[UniverseReport]) -> str:
    broken, info = totals(reports)
    resent = sum(len(r.resent) for r in reports)
    skipped = sum(len(r.skipped) for r in reports)
    verdict = "breaking drift" if broken else "drift" if info else "no drift"
    return (
        f"{verdict}: {broken} breaking, {info} informational change(s) in {len(reports)} "
        f"universe(s); {resent} call(s) re-sent, {skipped} skipped"
    )


def render_text(reports: Sequence[UniverseReport]) -> str:
    lines: list[str] = []
    for report in reports:
        lines.append(f"{report.file} against {report.upstream}")
        for finding in report.findings:
            lines.append(
                f"  {finding.severity:13} {finding.kind}: {finding.subject}: {finding.detail}"
            )
        for call in report.skipped:
            lines.append(f"  skipped recording #{call.index} ({call.tool}): {call.reason}")
        if report.updated is not None:
            lines.append(f"  updated {report.updated}")
    lines.append(_headline(reports))
    return "\n".join(escape_terminal(line) for line in lines) + "\n"


def render_markdown(reports: Sequence[UniverseReport]) -> str:
    lines = [f"### wt verify: {_headline(reports)}", ""]
    for report in reports:
        lines.append(f"#### {code_span(report.file)} against {code_span(report.upstream)}")
        lines.append("")
        if report.findings:
            lines += ["| severity | change | what | detail |", "|---|---|---|---|"]
            for finding in report.findings:
                lines.append(
                    f"| {finding.severity} | {finding.kind} | "
                    f"{code_span(finding.subject, in_table=True)} | "
                    f"{code_span(finding.detail, in_table=True)} |"
                )
            lines.append("")
        else:
            lines += ["No change.", ""]
        if report.skipped:
            lines.append(f"<details><summary>{len(report.skipped)} call(s) not re-sent</summary>")
            lines.append("")
            for call in report.skipped:
                lines.append(
                    f"- recording #{call.index} {code_span(call.tool)}: "
                    f"{code_span(call.reason or '')}"
                )
            lines += ["", "</details>", ""]
        if report.updated is not None:
            lines += [f"Updated {code_span(report.updated)}.", ""]
    return "\n".join(lines)


class _Document(msgspec.Struct):
    universes: list[UniverseReport]
    breaking: int
    informational: int


def render_json(reports: Sequence[UniverseReport]) -> str:
    broken, info = totals(reports)
    document = _Document(universes=list(reports), breaking=broken, informational=info)
    return msgspec.json.encode(document).decode() + "\n"


def load_reports(path: str) -> list[UniverseReport]:
    """The reports in a `wt verify --format json` output file (`wt diff --verify`)."""
    data = read_input(path, what="a wt verify JSON report", error=InputError)
    try:
        return msgspec.json.decode(data, type=_Document).universes
    except msgspec.ValidationError as exc:
        raise InputError(f"not a wt verify JSON report: {exc}", file=path) from None
    except (msgspec.DecodeError, RecursionError):
        raise InputError("not a wt verify JSON report: invalid JSON", file=path) from None
