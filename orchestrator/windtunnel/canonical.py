"""Canonical form of JSON values: the equality that matching uses.

Two values are canonically equal when they are equal as JSON data: object keys are unordered,
numbers compare by value (``1`` equals ``1.0``), booleans are never numbers (``true`` is not ``1``),
strings compare exactly and array order matters.

`canonical_key` maps a value to a hashable Python value with exactly that equality, so matching is
a dictionary lookup. Python already makes ``1 == 1.0`` with equal hashes; booleans are tagged so
they stop being equal to ``1``/``0``, and containers are tagged so a list never equals an object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec

__all__ = [
    "CanonicalKey",
    "args_key",
    "canonical_json",
    "canonical_key",
    "encode_json",
    "is_json_value",
    "nested_deeper_than",
    "scrub_surrogates",
]

CanonicalKey = Any
"""A hashable value; equal keys mean canonically equal JSON values."""

_TRUE: Final = ("b", 1)
_FALSE: Final = ("b", 0)


def canonical_key(value: Any) -> CanonicalKey:
    """Return the hashable canonical key of a JSON value."""
    # Ordered by how often each type shows up in tool arguments.
    if value.__class__ is str:
        return value
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if isinstance(value, dict):
        return ("o", tuple(sorted([(k, canonical_key(v)) for k, v in value.items()])))
    if isinstance(value, list | tuple):
        return ("a", tuple([canonical_key(v) for v in value]))
    if isinstance(value, str):
        return str(value)
    return value


def args_key(args: dict[str, Any]) -> CanonicalKey:
    """`canonical_key(args)` for an args object, with scalar values handled inline.

    Flat calls are the common case: one sort instead of one recursive call per value.
    """
    items = []
    for key, value in args.items():
        cls = value.__class__
        if cls is str or cls is int or cls is float or value is None:
            items.append((key, value))
        else:
            items.append((key, canonical_key(value)))
    items.sort()  # keys are distinct strings: the sort never compares values
    return ("o", tuple(items))


def _plain(value: Any) -> Any:
    """Integral floats become ints so `1.0` and `1` render the same."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Render a JSON value canonically: sorted keys, integral floats as ints, compact."""
    return msgspec.json.encode(_plain(value), order="sorted").decode()


def is_json_value(value: Any) -> bool:
    """True when `value` is made only of JSON types (dict keys must be strings)."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_value(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(is_json_value(v) for v in value)
    return False


def scrub_surrogates(value: Any) -> Any:
    """`value` with lone surrogates in its strings (and keys) replaced by U+FFFD.

    Python strings may hold them (`surrogateescape` decoding, `\\udc80` escapes in JSON) but
    UTF-8 cannot: without this, one odd string from an agent would fail a whole file write.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
        return value
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_surrogates(v) for v in value]
    return value


def encode_json(value: Any) -> bytes:
    """JSON bytes of `value` (structs included); lone surrogates are written as U+FFFD."""
    try:
        return msgspec.json.encode(value)
    except UnicodeEncodeError:
        return msgspec.json.encode(scrub_surrogates(msgspec.to_builtins(value)))


def nested_deeper_than(value: Any, limit: int) -> bool:
    """True when arrays and objects in `value` nest more than `limit` levels (checked without
    recursion, so any depth is safe to ask about)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children: Iterable[Any] = current.values()
        elif isinstance(current, list | tuple):
            children = current
        else:
            continue
        if depth == limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
