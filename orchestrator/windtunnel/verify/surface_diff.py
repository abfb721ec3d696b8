"""The recorded surface against the live one: every change, classified (`findings.py`). Pure.

Both sides are universes: the recorded file, and what the live server showed a fresh session
(built by the same code `wt record` uses, `record/live_client.py`). Compared: the server's identity,
instructions, protocol version and capabilities; every tool (presence, description, title,
annotations, input schema, output schema: `schema_compat.py`); and the resources, resource
templates and prompts the universe holds. A list the universe never recorded (no resources in
the file) is not compared: the recording says nothing about it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..canonical import canonical_key
from ..universe import Universe, UniverseTool
from .findings import Finding, breaking, informational
from .schema_compat import compare_schemas

__all__ = ["diff_surface"]


def diff_surface(recorded: Universe, live: Universe) -> list[Finding]:
    """Every surface change from `recorded` to `live`, in a stable order: server, tools,
    resources, resource templates, prompts."""
    findings = list(_server(recorded, live))
    findings += _tools(recorded.tools, live.tools)
    findings += _listed(
        recorded.resources, live.resources, key="uri", what="resource", fields=("name", "mimeType")
    )
    findings += _listed(
        recorded.resource_templates,
        live.resource_templates,
        key="uriTemplate",
        what="resource_template",
        fields=("name", "mimeType"),
    )
    findings += _prompts(recorded.prompts, live.prompts)
    return findings


def _server(recorded: Universe, live: Universe) -> Iterator[Finding]:
    before, after = recorded.server, live.server
    if before is None or after is None:
        return
    if before.info is not None and after.info is not None:
        for field in ("name", "version"):
            old, new = before.info.get(field), after.info.get(field)
            if old != new:
                yield informational(
                    f"server_{field}_changed", "server", f"{field} {old!r} -> {new!r}"
                )
    if before.instructions != after.instructions:
        detail = (
            "instructions added"
            if before.instructions is None
            else "instructions removed"
            if after.instructions is None
            else "the instructions changed"
        )
        yield informational("instructions_changed", "server", detail)
    if (
        before.protocol_version is not None
        and after.protocol_version is not None
        and before.protocol_version != after.protocol_version
    ):
        yield informational(
            "protocol_version_changed",
            "server",
            f"{before.protocol_version} -> {after.protocol_version}",
        )
    if before.capabilities is not None and after.capabilities is not None:
        for name in before.capabilities:
            if name not in after.capabilities:
                yield breaking("capability_removed", f"capability {name}", "no longer offered")
        for name in after.capabilities:
            if name not in before.capabilities:
                yield informational("capability_added", f"capability {name}", "newly offered")


def _tools(recorded: list[UniverseTool], live: list[UniverseTool]) -> Iterator[Finding]:
    live_by_name = {tool.name: tool for tool in live}
    recorded_names = {tool.name for tool in recorded}
    for tool in recorded:
        subject = f"tool {tool.name}"
        now = live_by_name.get(tool.name)
        if now is None:
            yield breaking("tool_removed", subject, "the live server no longer lists it")
            continue
        yield from _tool(tool, now, subject)
    for tool in live:
        if tool.name not in recorded_names:
            yield informational("tool_added", f"tool {tool.name}", "a new tool")


def _tool(before: UniverseTool, after: UniverseTool, subject: str) -> Iterator[Finding]:
    if before.description != after.description:
        yield informational("description_changed", subject, "the description changed")
    if before.title != after.title:
        yield informational("title_changed", subject, f"title {before.title!r} -> {after.title!r}")
    if canonical_key(before.annotations) != canonical_key(after.annotations):
        yield informational("annotations_changed", subject, _annotation_change(before, after))
    yield from compare_schemas(
        before.input_schema, after.input_schema, subject=subject, direction="input"
    )
    if before.output_schema is not None and after.output_schema is None:
        yield breaking(
            "output_schema_removed", subject, "no output schema now: structured results unpromised"
        )
    elif before.output_schema is None and after.output_schema is not None:
        yield informational("output_schema_added", subject, "now declares an output schema")
    elif before.output_schema is not None and after.output_schema is not None:
        yield from compare_schemas(
            before.output_schema, after.output_schema, subject=subject, direction="output"
        )


def _annotation_change(before: UniverseTool, after: UniverseTool) -> str:
    old, new = before.annotations or {}, after.annotations or {}
    changed = sorted(
        key
        for key in old.keys() | new.keys()
        if canonical_key(old.get(key)) != canonical_key(new.get(key))
    )
    return "changed: " + ", ".join(
        f"{key} {old.get(key, 'absent')!r} -> {new.get(key, 'absent')!r}" for key in changed
    )


def _listed(
    recorded: list[dict[str, Any]],
    live: list[dict[str, Any]],
    *,
    key: str,
    what: str,
    fields: tuple[str, ...],
) -> Iterator[Finding]:
    if not recorded:
        return
    live_by_key = {entry.get(key): entry for entry in live}
    recorded_keys = {entry.get(key) for entry in recorded}
    label = what.replace("_", " ")
    for entry in recorded:
        subject = f"{label} {entry.get(key)}"
        now = live_by_key.get(entry.get(key))
        if now is None:
            yield breaking(f"{what}_removed", subject, "the live server no longer lists it")
            continue
        for field in (*fields, "description"):
            if entry.get(field) != now.get(field):
                yield informational(
                    f"{what}_changed",
                    subject,
                    f"{field} {entry.get(field)!r} -> {now.get(field)!r}",
                )
    for entry in live:
        if entry.get(key) not in recorded_keys:
            yield informational(f"{what}_added", f"{label} {entry.get(key)}", f"a new {label}")


def _prompts(recorded: list[dict[str, Any]], live: list[dict[str, Any]]) -> Iterator[Finding]:
    if not recorded:
        return
    live_by_name = {entry.get("name"): entry for entry in live}
    recorded_names = {entry.get("name") for entry in recorded}
    for entry in recorded:
        subject = f"prompt {entry.get('name')}"
        now = live_by_name.get(entry.get("name"))
        if now is None:
            yield breaking("prompt_removed", subject, "the live server no longer lists it")
            continue
        if entry.get("description") != now.get("description"):
            yield informational("description_changed", subject, "the description changed")
        yield from _prompt_arguments(entry, now, subject)
    for entry in live:
        if entry.get("name") not in recorded_names:
            yield informational("prompt_added", f"prompt {entry.get('name')}", "a new prompt")


def _prompt_arguments(
    before: dict[str, Any], after: dict[str, Any], subject: str
) -> Iterator[Finding]:
    old = _arguments(before)
    new = _arguments(after)
    for name, required in old.items():
        place = f"{subject}: argument {name}"
        if name not in new:
            yield breaking("prompt_argument_removed", place, "the argument is gone")
        elif new[name] and not required:
            yield breaking("parameter_now_required", place, "was optional, is now required")
        elif required and not new[name]:
            yield informational("parameter_now_optional", place, "was required, is now optional")
    for name, required in new.items():
        if name in old:
            continue
        place = f"{subject}: argument {name}"
        if required:
            yield breaking("required_parameter_added", place, "a new argument, required")
        else:
            yield informational("optional_parameter_added", place, "a new optional argument")


def _arguments(prompt: dict[str, Any]) -> dict[str, bool]:
    """Each argument's name -> whether it is required."""
    arguments = prompt.get("arguments")
    if not isinstance(arguments, list):
        return {}
    return {
        a["name"]: a.get("required") is True
        for a in arguments
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    }
