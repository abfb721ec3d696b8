"""The per-value rules: arguments, truncation, schema inference, TOML values, timestamps."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.importing.inference import infer_schema
from windtunnel.importing.normalize import (
    iso_from_nanos,
    iso_from_text,
    looks_truncated,
    parse_args,
    slug,
)
from windtunnel.importing.toml_text import NotTomlError, toml_value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1}, ({"a": 1}, None, [])),
        ('{"a": 1}', ({"a": 1}, '{"a": 1}', [])),
        ("[1, 2]", ({"input": [1, 2]}, "[1, 2]", ["args_wrapped"])),
        ('{"a": "cut', ({}, '{"a": "cut', ["args_truncated"])),
        ("{'a': 1}", ({}, "{'a': 1}", ["args_unparseable"])),
        ('{"q": "long text…', ({}, '{"q": "long text…', ["args_truncated"])),
        (None, ({}, None, [])),
        ("", ({}, "", [])),
        (7, ({"input": 7}, None, ["args_wrapped"])),
    ],
)
def test_parse_args(value: Any, expected: tuple[Any, Any, Any]) -> None:
    """Arguments become a flat object; every conversion keeps the raw text and says what it did."""
    parsed = parse_args(value)
    assert (parsed.args, parsed.raw, parsed.flags) == expected


def test_infer_schema_merges_samples() -> None:
    """Types are unioned, integer+number is number, required is what every sample has."""
    schema = infer_schema([{"n": 1, "tags": ["a"], "f": {"x": True}}, {"n": 2.5, "opt": None}])
    assert schema == {
        "type": "object",
        "properties": {
            "f": {
                "type": "object",
                "properties": {"x": {"type": "boolean"}},
                "required": ["x"],
                "additionalProperties": True,
            },
            "n": {"type": "number"},
            "opt": {"type": "null"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["n"],
        "additionalProperties": True,
        "x-wt-inferred": {"samples": 2},
    }


def test_infer_schema_without_samples() -> None:
    """A tool seen with no usable arguments gets an open object schema marked 0 samples."""
    assert infer_schema([]) == {"type": "object", "x-wt-inferred": {"samples": 0}}


toml_data = st.recursive(
    st.one_of(
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), toml_data, max_size=4))
def test_toml_values_round_trip_through_tomllib(args: dict[str, Any]) -> None:
    """Any null-free JSON object written as a TOML inline table reads back equal."""
    assert tomllib.loads(f"args = {toml_value(args)}\n") == {"args": args}


def test_null_is_not_toml() -> None:
    """TOML has no null; the writer says so instead of inventing a value."""
    with pytest.raises(NotTomlError):
        toml_value({"a": None})


def test_timestamps_normalize_to_utc_milliseconds() -> None:
    """OTLP nanoseconds and ISO 8601 with offsets become RFC 3339 UTC with milliseconds."""
    assert iso_from_nanos(1788000001010000000) == "2026-08-29T10:40:01.010Z"
    assert iso_from_text("2026-10-12T11:00:00.5+02:00") == "2026-10-12T09:00:00.500Z"
    assert iso_from_text("yesterday") is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [("Acme Calendar", "acme-calendar"), ("__x__", "x"), ("", "default"), ("CRM.v2", "crm.v2")],
)
def test_slug(name: str, expected: str) -> None:
    """Upstream ids are lower-case slugs usable as file names."""
    assert slug(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "cut', True),
        ('[{"x":1}', True),
        ("[1, 2", True),
        ("results follow…", True),
        ("[truncated]", True),
        ('{"a":1}', False),
        ("[warn] disk low", False),
        ("{ not json }", False),
        ('{"a": 1} and more', False),
    ],
)
def test_looks_truncated(text: str, expected: bool) -> None:
    """Cut-off JSON and trailing ellipses are truncation; bracketed prose is not."""
    assert looks_truncated(text) is expected
