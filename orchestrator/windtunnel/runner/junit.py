"""JUnit XML: the CI projection of a run (the Apache Ant / Jenkins JUnit schema).

One `<testsuite>` is the pack; one `<testcase name="<unit id>" classname="<pack>.<scenario>">` is
one unit. A failed unit gets `<failure type="policy|scorer">` listing every failing verdict and
score and every divergence; an agent crash or timeout gets `<error type="agent_error">`, and a
unit whose declared fault was never injected `<error type="invalid">` (the suite counts it among
its errors: it is no pass). Suite `<properties>` carry the counts, each scenario's pass@k /
pass^k and universe coverage; the suite's `<system-out>` points each unit at its trace file.
The Ant schema allows nothing else inside a `<testcase>`.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO
from xml.sax.saxutils import escape as xml_escape

from ..divergence import divergence_label
from .policies import render_json
from .summary import Summary
from .trace import Trace, undelivered_faults

__all__ = ["failure_lines", "render_junit", "write_junit"]

# Characters XML 1.0 cannot carry at all, even escaped.
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def failure_lines(trace: Trace) -> list[str]:
    """Every reason a unit did not pass: agent error, undelivered faults, failing verdicts and
    scores, divergences."""
    lines: list[str] = []
    if trace.error is not None:
        lines.append(f"agent error: {trace.error}")
    lines += [f"invalid: {reason}" for reason in undelivered_faults(trace)]
    lines += [f"policy {v.name}: {v.reason}" for v in trace.verdicts if not v.passed]
    lines += [
        f"scorer {s.name}: {s.value:g} < {s.threshold:g}: {s.detail}"
        for s in trace.scores
        if not s.passed
    ]
    for warning in trace.warnings:
        if warning.get("event") != "universe_divergence":
            continue
        lines.append(
            f"divergence {divergence_label(warning)}({render_json(warning.get('args'))}): "
            f"{warning.get('reason')} (policy {warning.get('policy')}){_asked(warning)}"
        )
    return lines


def _asked(warning: dict[str, Any]) -> str:
    """For a `client_answer_differs` divergence, which request the live client answered
    otherwise."""
    client = warning.get("client")
    asked = client.get("asked") if isinstance(client, dict) else None
    method = asked.get("method") if isinstance(asked, dict) else None
    return f"; the client answered {method} otherwise" if isinstance(method, str) else ""


def _timestamp(started_at: float) -> str:
    when = dt.datetime.fromtimestamp(started_at, dt.UTC) if started_at else dt.datetime.now(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _properties(summary: Summary) -> Iterator[tuple[str, object]]:
    """Every suite property, one at a time (a pack with many repeats has many pass@k)."""
    yield "divergences", summary.divergences
    if summary.invalid or summary.faults_injected:
        yield "invalid", summary.invalid
        yield "faults_injected", summary.faults_injected
    yield "policy_failures", summary.policy_failures
    yield "scorer_failures", summary.scorer_failures
    for upstream, total in summary.coverage.items():
        for field in ("recordings", "served", "never_used", "unmatched", "live"):
            yield f"coverage.{upstream}.{field}", getattr(total, field)
    for name, scenario in summary.scenarios.items():
        yield f"{name}.runs", scenario.runs
        yield f"{name}.passed", scenario.passed
        yield f"{name}.divergences", scenario.divergences
        for k, value in scenario.pass_at_k.items():
            yield f"{name}.pass_at_k.{k}", f"{value:.6g}"
        for k, value in scenario.pass_hat_k.items():
            yield f"{name}.pass_hat_k.{k}", f"{value:.6g}"
        for upstream, cov in scenario.coverage.items():
            prefix = f"{name}.coverage.{upstream}"
            yield f"{prefix}.recordings", cov.recordings
            yield f"{prefix}.served", cov.served
            yield f"{prefix}.never_used", ",".join(map(str, cov.never_used))
            yield f"{prefix}.unmatched", cov.unmatched
            yield f"{prefix}.live", cov.live


def _suite_open(summary: Summary) -> bytes:
    """The `<testsuite ...>` start tag: an element rendered empty, its end tag cut off."""
    suite = ET.Element(
        "testsuite",
        name=_x(summary.pack),
        package="windtunnel",
        id="0",
        hostname=_x(socket.gethostname() or "localhost"),
        timestamp=_timestamp(summary.started_at),
        tests=str(summary.total),
        failures=str(summary.failed),
        errors=str(summary.errors + summary.invalid),
        skipped="0",
        time=_seconds(summary.wall_s or summary.durations.total),
    )
    suite.text = "\n"
    head: bytes = ET.tostring(suite, encoding="utf-8")
    return head[: head.rindex(b"</testsuite>")]


def _element(element: ET.Element, level: int) -> bytes:
    ET.indent(element, space="  ", level=level)
    data: bytes = ET.tostring(element, encoding="utf-8")
    return b"  " * level + data.rstrip() + b"\n"


def _testcase(trace: Trace, pack: str) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=_x(trace.unit_id),
        classname=_x(f"{pack}.{trace.scenario}"),
        time=_seconds(trace.duration_s),
    )
    if trace.status == "passed":
        return case
    lines = failure_lines(trace)
    if trace.status == "error":
        element = ET.SubElement(case, "error", type="agent_error")
    elif trace.status == "invalid":
        # Not the agent's failure: the run never met the fault it was declared to test.
        element = ET.SubElement(case, "error", type="invalid")
    else:
        kind = "policy" if any(not v.passed for v in trace.verdicts) else "scorer"
        element = ET.SubElement(case, "failure", type=kind)
    element.set("message", _x(lines[0] if lines else trace.status))
    body = lines + ([f"trace: {trace.trace_file}"] if trace.trace_file else [])
    element.text = _x("\n".join(body))
    return case


def write_junit(out: BinaryIO, rows: Callable[[], Iterable[Trace]], summary: Summary) -> None:
    """The run as JUnit XML (UTF-8, with declaration), one unit at a time.

    `rows()` yields every unit (call logs are not needed); it is read twice, for the test cases
    and for the suite's `<system-out>`, so no list of units is ever held.
    """
    out.write(b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites>\n  ")
    out.write(_suite_open(summary))
    out.write(b"    <properties>\n")
    for name, value in _properties(summary):
        out.write(_element(ET.Element("property", name=_x(name), value=_x(str(value))), 3))
    out.write(b"    </properties>\n")
    for trace in rows():
        out.write(_element(_testcase(trace, summary.pack), 2))
    out.write(b"    <system-out>")
    first = True
    for trace in rows():
        if trace.trace_file:
            line = f"{trace.unit_id}: {trace.status} {trace.trace_file}"
            out.write((("" if first else "\n") + xml_escape(_x(line))).encode("utf-8"))
            first = False
    out.write(b"</system-out>\n    <system-err />\n  </testsuite>\n</testsuites>\n")


def render_junit(traces: Sequence[Trace], summary: Summary) -> bytes:
    """The run as JUnit XML (UTF-8, with declaration)."""
    buffer = io.BytesIO()
    write_junit(buffer, lambda: traces, summary)
    return buffer.getvalue()
