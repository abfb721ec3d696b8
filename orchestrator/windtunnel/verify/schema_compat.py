"""Whether a tool's live JSON Schema still fits what was recorded. Pure.

Two directions, because a schema means different things on each side of a call:

- an **input** schema says what the server accepts: the live one must accept every call the
  recorded one allowed, so a parameter removed or newly required, a type or enum narrowed is
  breaking, and a new optional parameter, a type widened or a reworded description is not;
- an **output** schema says what the server promises to return: the live one must promise no
  less, so a property removed or no longer required, a type or enum widened is breaking, and a
  new property or a narrower type is not.

The comparison walks `properties` (and `items`) recursively and reads `type`, `enum`,
`required`, `description` and `additionalProperties`; other keywords (`anyOf`, `$ref`, formats,
bounds) changing is an informational `schema_changed` naming them, since telling a narrowing from
a widening there needs a schema solver, not a diff.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from ..canonical import canonical_key
from .findings import Finding, breaking, informational

__all__ = ["Direction", "compare_schemas"]

Direction = Literal["input", "output"]

_READ = {
    "type",
    "enum",
    "required",
    "description",
    "properties",
    "items",
    "title",
    "additionalProperties",
}
"""The keywords the walk understands; a change elsewhere is `schema_changed`."""

_ANY = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def compare_schemas(
    recorded: dict[str, Any], live: dict[str, Any], *, subject: str, direction: Direction
) -> list[Finding]:
    """Every change from `recorded` to `live`, classified for `direction`."""
    findings = list(_compare(recorded, live, subject, "", direction))
    changed = _changed_keywords(recorded, live)
    if changed:
        findings.append(
            informational(
                "schema_changed", f"{subject}: {direction}", f"keywords changed: {changed}"
            )
        )
    return findings


def _compare(
    recorded: Any, live: Any, subject: str, where: str, direction: Direction
) -> Iterator[Finding]:
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return
    at = f"{subject}: {direction} {where}" if where else f"{subject}: {direction}"
    yield from _types(recorded, live, at, direction)
    yield from _enums(recorded, live, at, direction)
    if where and recorded.get("description") != live.get("description"):
        yield informational("description_changed", at, "the description changed")
    yield from _additional(recorded, live, at, direction)
    recorded_props = _properties(recorded)
    live_props = _properties(live)
    recorded_required = _required(recorded)
    live_required = _required(live)
    for name in recorded_props:
        path = f"{where}.{name}" if where else name
        place = f"{subject}: {direction} {path}"
        if name not in live_props:
            what = "parameter" if direction == "input" else "property"
            yield breaking(f"{what}_removed", place, f"the {what} is gone")
            continue
        yield from _compare(recorded_props[name], live_props[name], subject, path, direction)
    for name in live_props:
        if name in recorded_props:
            continue
        path = f"{where}.{name}" if where else name
        place = f"{subject}: {direction} {path}"
        if direction == "input" and name in live_required:
            yield breaking("required_parameter_added", place, "a new parameter, required")
        elif direction == "input":
            yield informational("optional_parameter_added", place, "a new optional parameter")
        else:
            yield informational("property_added", place, "a new property")
    for name in sorted(live_required - recorded_required):
        if name not in recorded_props:
            continue  # a new parameter: reported above
        path = f"{where}.{name}" if where else name
        place = f"{subject}: {direction} {path}"
        if direction == "input":
            yield breaking("parameter_now_required", place, "was optional, is now required")
        else:
            yield informational("property_now_required", place, "was optional, is now promised")
    for name in sorted(recorded_required - live_required):
        if name not in live_props:
            continue  # gone: reported above
        path = f"{where}.{name}" if where else name
        place = f"{subject}: {direction} {path}"
        if direction == "input":
            yield informational("parameter_now_optional", place, "was required, is now optional")
        else:
            yield breaking("property_now_optional", place, "was promised, may now be absent")
    if "items" in recorded or "items" in live:
        path = f"{where}[]" if where else "[]"
        yield from _compare(recorded.get("items"), live.get("items"), subject, path, direction)
    changed = _changed_keywords(recorded, live)
    if where and changed:
        yield informational("schema_changed", at, f"keywords changed: {changed}")


def _additional(
    recorded: dict[str, Any], live: dict[str, Any], at: str, direction: Direction
) -> Iterator[Finding]:
    """`additionalProperties: false` appearing or going. Informational both ways: an agent sends
    the parameters a tool declares, and a recorded call that sent others is re-sent and fails."""
    before = recorded.get("additionalProperties", True) is not False
    after = live.get("additionalProperties", True) is not False
    if before and not after:
        what = "parameters" if direction == "input" else "properties"
        yield informational("additional_properties_closed", at, f"undeclared {what} refused")
    elif after and not before:
        yield informational("additional_properties_opened", at, "undeclared ones allowed")


def _types(
    recorded: dict[str, Any], live: dict[str, Any], at: str, direction: Direction
) -> Iterator[Finding]:
    before, after = _type_set(recorded), _type_set(live)
    if before == after:
        return
    lost, gained = before - after, after - before
    shown = f"{_show(before)} -> {_show(after)}"
    if direction == "input" and lost:
        yield breaking("type_narrowed", at, f"accepts less: {shown}")
    elif direction == "output" and gained:
        yield breaking("type_widened", at, f"may return more: {shown}")
    else:
        word = "type_widened" if gained else "type_narrowed"
        yield informational(word, at, shown)


def _enums(
    recorded: dict[str, Any], live: dict[str, Any], at: str, direction: Direction
) -> Iterator[Finding]:
    before, after = recorded.get("enum"), live.get("enum")
    if not isinstance(before, list) and not isinstance(after, list):
        return
    before_keys = {canonical_key(v) for v in before} if isinstance(before, list) else None
    after_keys = {canonical_key(v) for v in after} if isinstance(after, list) else None
    if before_keys == after_keys:
        return
    # No enum is every value: going from none to one narrows, from one to none widens.
    narrowed = after_keys is not None and (before_keys is None or bool(before_keys - after_keys))
    widened = before_keys is not None and (after_keys is None or bool(after_keys - before_keys))
    if direction == "input" and narrowed:
        yield breaking("enum_narrowed", at, "accepts fewer values")
    elif direction == "output" and widened:
        yield breaking("enum_widened", at, "may return values it did not")
    else:
        yield informational("enum_changed", at, "the allowed values changed compatibly")


def _type_set(schema: dict[str, Any]) -> frozenset[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        names = {kind}
    elif isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        names = set(kind)
    else:
        return _ANY
    if "number" in names:
        names.add("integer")  # every integer is a number: number -> integer narrows
    return frozenset(names)


def _show(types: frozenset[str]) -> str:
    if types == _ANY:
        return "any"
    shown = sorted(types - {"integer"} if "number" in types else types)
    return "|".join(shown)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(schema: dict[str, Any]) -> set[str]:
    required = schema.get("required")
    if not isinstance(required, list):
        return set()
    return {name for name in required if isinstance(name, str)}


def _changed_keywords(recorded: dict[str, Any], live: dict[str, Any]) -> str:
    """The keywords this walk does not read whose values differ, named (empty when none)."""
    names = sorted(
        key
        for key in (recorded.keys() | live.keys()) - _READ
        if canonical_key(recorded.get(key)) != canonical_key(live.get(key))
    )
    return ", ".join(names)
