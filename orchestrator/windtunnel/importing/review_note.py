"""`IMPORTED.md`: the review note `wt import` writes beside the fixtures and the pack.

It says what the import inferred and from which evidence (per call: the wire, the model's view,
`witnessed_calls` or pairs reconstructed from messages), the provenance (the trace, the source
file and the producer's `source` object verbatim), and what needs a person: every warning, the
schemas that were inferred or stubbed, the task when the trace did not hold it, the scorer stub.
Values from the trace are data: they are written inside code spans and fences that they cannot
close, never as Markdown.
"""

from __future__ import annotations

import json
import re

from .envelope import ALWAYS_OUT, Call, Envelope
from .fixture import FixturePlan
from .skeleton import origin_ref

__all__ = ["REVIEW_FILE", "render_review_note"]

REVIEW_FILE = "IMPORTED.md"


def _code(text: str) -> str:
    """`text` as one inline code span: a fence longer than any backtick run in it, one line."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _block(text: str, info: str = "") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", text, fence]


def _evidence(call: Call) -> str:
    evidence = call.provenance.get("evidence")
    if evidence == "witnessed_calls":
        return "witnessed_calls (the tool boundary's record)"
    if evidence == "reconstructed":
        return "reconstructed from messages (tool_call + tool_call_response)"
    if call.result is None:
        return "no result in the trace"
    if call.result.view == "wire":
        return "wire (what the server sent)"
    return "model view (what the agent showed its model)"


def _fate(call: Call, replayed: set[int]) -> str:
    if call.seq in replayed:
        return "in the fixture"
    reasons = [flag for flag in call.flags if flag in ALWAYS_OUT] or [
        flag for flag in call.flags if flag != "result_model_view"
    ]
    if call.result is None:
        reasons.insert(0, f"outcome {call.outcome}")
    return "kept out" + (f" ({', '.join(reasons)})" if reasons else "")


def render_review_note(envelope: Envelope, plan: FixturePlan, *, files: list[str]) -> str:
    """The Markdown review note for one import."""
    trace = envelope.trace
    source = trace.source
    lines = [
        "# Imported trace: review before use",
        "",
        "`wt import` wrote this directory from a trace. What it filled in is mechanical; what "
        "the run *should* have done is for you to decide.",
        "",
        "## Provenance",
        "",
        f"- trace: {_code(trace.id)}",
        f"- source format: {_code(source.format)}"
        + (f", file {_code(source.file)}" if source.file else "")
        + (f", sha256 {_code(source.sha256)}" if source.sha256 else ""),
    ]
    if trace.started_at:
        lines.append(f"- started: {_code(trace.started_at)}")
    model = envelope.session.get("model")
    if isinstance(model, str):
        lines.append(f"- model (session.model): {_code(model)}")
    ref = origin_ref(envelope)
    if ref is not None:
        lines.append(f"- scenario tag: {_code('origin:' + ref)} (from `source.ref`)")
    if envelope.source is not None:
        text = json.dumps(envelope.source, indent=2, ensure_ascii=False, sort_keys=False)
        lines += ["", "The envelope's `source`, verbatim:", "", *_block(text, "json")]
    lines += ["", "## Evidence", ""]
    replayed = {call.seq for call in plan.calls}
    if not envelope.calls:
        lines.append("The trace holds no tool call.")
    else:
        lines.append(
            f"{len(envelope.calls)} call(s), {len(plan.calls)} in the fixture. Per call: where "
            "its result came from, and whether it is replayed."
        )
        lines.append("")
        lines.append("| # | upstream.tool | outcome | evidence | fixture |")
        lines.append("|---|---|---|---|---|")
        for call in envelope.calls:
            cells = [
                str(call.seq),
                _code(f"{call.upstream}.{call.tool}"),
                call.outcome,
                _evidence(call),
                _fate(call, replayed),
            ]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += ["", "## Inferred", ""]
    lines.append(
        f"- task: {_code(envelope.task.prompt)}" if envelope.task.prompt else "- task: none"
    )
    for upstream in envelope.upstreams:
        identity = upstream.identity.source
        lines.append(f"- upstream {_code(upstream.id)} ({upstream.kind}), named from {identity}")
        for tool in upstream.tools:
            lines.append(f"  - tool {_code(tool.name)}: input schema from {tool.schema_source}")
    for stateful in plan.sequence_tools:
        lines.append(
            f"- {_code(stateful)} answered the same arguments differently: recorded in "
            "sequence mode"
        )
    lines += ["", "## Surface", "", *_surface(envelope)]
    lines += ["", "## Needs a human", ""]
    todo = _todo(envelope)
    lines += [f"- [ ] {item}" for item in todo]
    lines += ["", "## Files", ""]
    lines += [f"- {_code(name)}" for name in [*files, REVIEW_FILE]]
    lines.append("")
    return "\n".join(lines)


def _surface(envelope: Envelope) -> list[str]:
    """What the trace showed of each upstream besides its tool calls (issue 25), as the universe
    now holds it; said plainly when it showed nothing, so an empty section is never a surprise."""
    lines: list[str] = []
    for upstream in envelope.upstreams:
        surface = upstream.surface
        found: list[str] = []
        if surface is not None and surface.server:
            server = surface.server
            info = server.get("info")
            if isinstance(info, dict):
                found.append(
                    f"server {_code(str(info.get('name')))} {_code(str(info.get('version')))}"
                )
            if server.get("protocol_version"):
                found.append(f"protocol {_code(str(server['protocol_version']))}")
            if server.get("instructions"):
                found.append(f"instructions ({len(str(server['instructions']))} characters)")
            if isinstance(server.get("capabilities"), dict):
                names = ", ".join(sorted(server["capabilities"])) or "none"
                found.append(f"capabilities ({_code(names)})")
        if surface is not None:
            for count, what in (
                (len(surface.resources), "resource(s)"),
                (len(surface.resource_templates), "resource template(s)"),
                (len(surface.resource_reads), "resource read(s)"),
                (len(surface.prompts), "prompt(s)"),
                (len(surface.prompt_gets), "prompt get(s)"),
                (len(surface.completions), "completion(s)"),
            ):
                if count:
                    found.append(f"{count} {what}")
        rich = [
            tool.name
            for tool in upstream.tools
            if (tool.title, tool.annotations, tool.output_schema, tool.icons, tool.execution)
            != (None,) * 5
            or tool.meta is not None
        ]
        if rich:
            found.append(f"{len(rich)} tool(s) with title, annotations or other listed fields")
        own = [call for call in envelope.calls if call.upstream == upstream.id]
        messages = sum(len(call.server_messages or []) for call in own)
        if messages:
            found.append(f"{messages} server message(s) sent during calls")
        summary = "; ".join(found) if found else "nothing beyond its tool calls"
        lines.append(f"- upstream {_code(upstream.id)}: {summary}")
    return lines or ["- no upstream"]


def _todo(envelope: Envelope) -> list[str]:
    todo: list[str] = []
    if not envelope.task.prompt:
        todo.append("The trace does not say what the agent was asked: set `task` in scenario.toml.")
    for upstream in envelope.upstreams:
        for tool in upstream.tools:
            if tool.schema_source in ("inferred", "stub") and upstream.kind != "builtin":
                how = "inferred from the calls" if tool.schema_source == "inferred" else "a stub"
                todo.append(
                    f"Input schema of {_code(upstream.id + '.' + tool.name)} is {how}: replace "
                    "it in the universe with the tool's real schema (the agent is offered it)."
                )
    turns = [
        m
        for m in envelope.messages
        if m.get("role") == "user"
        and any(p.get("type") == "text" and p.get("content") for p in m.get("parts", []))
    ]
    if len(turns) > 1:
        todo.append(
            f"The trace has {len(turns)} user turns; the task is the first. The later ones are "
            "in trace.wtin.json `messages`: a scripted rerun does not send them."
        )
    todo.append(
        "Author the scorer: the `TODO(review)` markers in scenario.toml (expected and forbidden "
        "calls, the reference answer). A trace shows what happened, not what should pass."
    )
    todo.append("Swap `[agent]` for the agent under test to rerun the incident.")
    for warning in envelope.warnings:
        where = f" at {_code(warning.path)}" if warning.path else ""
        todo.append(f"Warning {_code(warning.code)}{where}: {_code(warning.message)}")
    return todo
