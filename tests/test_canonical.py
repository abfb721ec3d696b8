"""Canonical form: the equality matching is built on (DESIGN §4 tier 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.canonical import canonical_json, canonical_key, is_json_value

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        (1, 1.0, True),
        ({"n": 1}, {"n": 1.0}, True),
        (True, 1, False),
        (False, 0, False),
        ([True], [1], False),
        ("1", 1, False),
        ([1, 2], [2, 1], False),
        ([1, 2], {"0": 1, "1": 2}, False),
        ([], {}, False),
        (None, False, False),
        ("Bluewing", "bluewing", False),
        ({"a": {"x": [1, {"y": 2.0}]}}, {"a": {"x": [1.0, {"y": 2}]}}, True),
        (("a", 1), ["a", 1], True),
    ],
)
def test_canonical_equality_table(left: Any, right: Any, equal: bool) -> None:
    """Keys unordered, numbers by value, booleans never numbers, arrays ordered."""
    assert (canonical_key(left) == canonical_key(right)) is equal
    if equal:
        assert hash(canonical_key(left)) == hash(canonical_key(right))
        assert canonical_json(left) == canonical_json(right)


def test_canonical_json_is_sorted_and_compact() -> None:
    """The rendering sorts keys and writes integral floats as integers."""
    assert canonical_json({"b": 1.0, "a": [True, None, 2.5]}) == '{"a":[true,null,2.5],"b":1}'


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_canonical_key_ignores_key_order(value: dict[str, Any]) -> None:
    """Reversing insertion order never changes the key."""
    reordered = dict(reversed(list(value.items())))
    assert canonical_key(reordered) == canonical_key(value)


@given(json_values)
def test_canonical_key_survives_a_json_round_trip(value: Any) -> None:
    """A value and its JSON round trip are canonically equal."""
    assert canonical_key(json.loads(json.dumps(value))) == canonical_key(value)


@given(json_values, json_values)
def test_canonical_json_agrees_with_canonical_key(left: Any, right: Any) -> None:
    """Equal keys exactly when equal canonical renderings."""
    assert (canonical_key(left) == canonical_key(right)) == (
        canonical_json(left) == canonical_json(right)
    )


def test_is_json_value() -> None:
    """Only JSON types qualify; non-string keys and NaN do not."""
    assert is_json_value({"a": [1, 2.5, None, True, "x"]})
    assert not is_json_value({1: "a"})
    assert not is_json_value(float("nan"))
    assert not is_json_value({"a": object()})
