"""How a tool's schema change is classified, each direction (`schema_compat`)."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.verify.schema_compat import Direction, compare_schemas


def kinds(
    before: dict[str, Any], after: dict[str, Any], direction: Direction
) -> list[tuple[str, str, str]]:
    found = compare_schemas(before, after, subject="tool t", direction=direction)
    return [(f.severity, f.kind, f.subject) for f in found]


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **more: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **more}
    if required is not None:
        schema["required"] = required
    return schema


S = {"type": "string"}
N = {"type": "number"}
I = {"type": "integer"}  # noqa: E741


@pytest.mark.parametrize(
    ("before", "after", "direction", "expected"),
    [
        (obj({"q": S}), obj({"q": S}), "input", []),
        (obj({"q": S}), obj({}), "input", [("breaking", "parameter_removed", "tool t: input q")]),
        (
            obj({"q": S}),
            obj({"q": S}, ["q"]),
            "input",
            [("breaking", "parameter_now_required", "tool t: input q")],
        ),
        (
            obj({"q": S}, ["q"]),
            obj({"q": S}),
            "input",
            [("informational", "parameter_now_optional", "tool t: input q")],
        ),
        (
            obj({}),
            obj({"x": S}, ["x"]),
            "input",
            [("breaking", "required_parameter_added", "tool t: input x")],
        ),
        (
            obj({}),
            obj({"x": S}),
            "input",
            [("informational", "optional_parameter_added", "tool t: input x")],
        ),
        (obj({"n": N}), obj({"n": I}), "input", [("breaking", "type_narrowed", "tool t: input n")]),
        (
            obj({"n": I}),
            obj({"n": N}),
            "input",
            [("informational", "type_widened", "tool t: input n")],
        ),
        (
            obj({"n": S}),
            obj({"n": {"type": ["string", "null"]}}),
            "output",
            [("breaking", "type_widened", "tool t: output n")],
        ),
        (
            obj({"n": N}),
            obj({"n": I}),
            "output",
            [("informational", "type_narrowed", "tool t: output n")],
        ),
        (
            obj({"p": S}, ["p"]),
            obj({"p": S}),
            "output",
            [("breaking", "property_now_optional", "tool t: output p")],
        ),
        (obj({"p": S}), obj({}), "output", [("breaking", "property_removed", "tool t: output p")]),
        (
            obj({}),
            obj({"p": S}),
            "output",
            [("informational", "property_added", "tool t: output p")],
        ),
        (
            obj({"c": {"enum": ["a", "b"]}}),
            obj({"c": {"enum": ["a"]}}),
            "input",
            [("breaking", "enum_narrowed", "tool t: input c")],
        ),
        (
            obj({"c": {"enum": ["a"]}}),
            obj({"c": {"enum": ["a", "b"]}}),
            "output",
            [("breaking", "enum_widened", "tool t: output c")],
        ),
        (
            obj({"c": {"enum": ["a"]}}),
            obj({"c": {"enum": ["a", "b"]}}),
            "input",
            [("informational", "enum_changed", "tool t: input c")],
        ),
        (
            obj({"f": obj({"x": S})}),
            obj({"f": obj({"x": S, "y": S}, ["y"])}),
            "input",
            [("breaking", "required_parameter_added", "tool t: input f.y")],
        ),
        (
            obj({"l": {"type": "array", "items": S}}),
            obj({"l": {"type": "array", "items": I}}),
            "input",
            [("breaking", "type_narrowed", "tool t: input l[]")],
        ),
        (
            obj({}),
            obj({}, additionalProperties=False),
            "input",
            [("informational", "additional_properties_closed", "tool t: input")],
        ),
        (
            obj({"q": S}),
            obj({"q": {"type": "string", "maxLength": 3}}),
            "input",
            [("informational", "schema_changed", "tool t: input q")],
        ),
        (
            obj({}),
            obj({}, anyOf=[{"required": ["a"]}]),
            "input",
            [("informational", "schema_changed", "tool t: input")],
        ),
    ],
)
def test_classification(
    before: dict[str, Any],
    after: dict[str, Any],
    direction: Direction,
    expected: list[tuple[str, str, str]],
) -> None:
    """Input schemas must accept no less, output schemas promise no less."""
    assert kinds(before, after, direction) == expected
