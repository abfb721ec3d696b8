"""msgspec's validation errors, said in the pack format's words (docs/pack-format.md).

msgspec reports `Expected `int` >= 1 - at `$.pack.concurrency``; a pack author reads
`pack.concurrency: must be at least 1, got 0`. The key path, the expected type and its bounds come
from the Struct types (their `Annotated` constraints), the offending value from the parsed TOML, so
every message names the key, what it should be and what it is.
"""

from __future__ import annotations

import datetime as dt
import re
import types
import typing
from typing import Any

import msgspec

__all__ = ["pack_error", "toml_type"]

Segment = str | int
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `([^`]+)`$")
_INVALID_TAG = re.compile(r"^Invalid value (.+)$")
_WRONG_TYPE = re.compile(r"^Expected `[^`]+`, got `[^`]+`$")
_MISSING_KEY = "<missing>"
# What each tagged union is called in messages, by the key that holds it.
_UNION_NAMES = {"agent": "agent kind", "policies": "policy", "scorers": "scorer"}
_AGENT = "agent"


def toml_type(value: Any) -> str:
    """The TOML name of a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "table"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return "date/time"
    return type(value).__name__


def pack_error(exc: msgspec.ValidationError, data: Any, root: type) -> tuple[str, str | None]:
    """The message and key path (`scenario[2].policies[0].kind`) of a `ValidationError` raised
    while converting `data` to `root`."""
    text, _, where = str(exc).partition(" - at `")
    path = _parse(where.rstrip("`"))
    path = _find_dict_keys(path, data, root)
    if (match := _MISSING.match(text)) is not None:
        return "required key missing", _show([*path, match.group(1)])
    if (match := _UNKNOWN.match(text)) is not None:
        return _unknown_key(match.group(1), path, data, root), _show([*path, match.group(1)])
    if (match := _INVALID_TAG.match(text)) is not None and path and path[-1] == "kind":
        union = _strip(_type_at(root, path[:-1], data, pick_variant=False))[0]
        what = _UNION_NAMES.get(_last_key(path[:-1]), "kind")
        kinds = ", ".join(sorted(_tags(union)))
        return f"unknown {what} {match.group(1)}; expected one of {kinds}", _show(path)
    value = _value_at(data, path)
    expected = _type_at(root, path, data)
    if _WRONG_TYPE.match(text):
        return f"expected {_what(expected, path)}, got {toml_type(value)}", _show(path)
    return _out_of_bounds(expected, value), _show(path)


def _parse(where: str) -> list[Segment]:
    segments: list[Segment] = []
    for name, index in _SEGMENT.findall(where.removeprefix("$")):
        if name:
            segments.append(name)
        else:
            segments.append(index if index == "..." else int(index))
    return segments


def _show(path: list[Segment]) -> str | None:
    text = ""
    for segment in path:
        text += f"[{segment}]" if isinstance(segment, int) else (f".{segment}" if text else segment)
    return text or None


def _last_key(path: list[Segment]) -> str:
    return next((s for s in reversed(path) if isinstance(s, str)), "")


def _value_at(data: Any, path: list[Segment]) -> Any:
    for segment in path:
        try:
            data = data[segment]
        except (KeyError, IndexError, TypeError):
            return _MISSING_KEY
    return data


def _find_dict_keys(path: list[Segment], data: Any, root: type) -> list[Segment]:
    """msgspec writes a dict key as `[...]`: the key is the first whose value does not convert."""
    for i, segment in enumerate(path):
        if segment != "...":
            continue
        table = _value_at(data, path[:i])
        value_type = _type_at(root, [*path[:i], ""], data)
        for key, value in table.items() if isinstance(table, dict) else ():
            try:
                msgspec.convert(value, value_type)
            except msgspec.ValidationError:
                path = [*path[:i], key, *path[i + 1 :]]
                break
    return path


def _strip(tp: Any) -> tuple[Any, tuple[msgspec.Meta, ...]]:
    """`Annotated[T, Meta(...)] | None` -> (T, its Metas)."""
    metas: tuple[msgspec.Meta, ...] = ()
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = tuple(a for a in typing.get_args(tp) if a is not type(None))
        tp = members[0] if len(members) == 1 else typing.Union[members]  # noqa: UP007
    if typing.get_origin(tp) is typing.Annotated:
        tp, *extra = typing.get_args(tp)
        metas = tuple(m for m in extra if isinstance(m, msgspec.Meta))
    return tp, metas


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _tags(union: Any) -> list[str]:
    return [member.__struct_config__.tag for member in typing.get_args(union)]


def _variant(union: Any, table: Any) -> Any:
    kind = table.get("kind") if isinstance(table, dict) else None
    for member in typing.get_args(union):
        if member.__struct_config__.tag == kind:
            return member
    return union


def _type_at(root: Any, path: list[Segment], data: Any, *, pick_variant: bool = True) -> Any:
    """The declared type at `path` (a union of Structs resolved by the data's `kind`)."""
    tp: Any = root
    for depth, segment in enumerate(path):
        tp, _ = _strip(tp)
        if _is_union(tp):
            tp = _variant(tp, _value_at(data, path[:depth]))
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            if segment == "kind" and tp.__struct_config__.tag_field == "kind":
                return str
            hints = typing.get_type_hints(tp, include_extras=True)
            tp = hints.get(str(segment), Any)
        elif typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]
        else:
            return Any
    if pick_variant and _is_union(_strip(tp)[0]):
        return _variant(_strip(tp)[0], _value_at(data, path))
    return tp


def _what(tp: Any, path: list[Segment]) -> str:
    base, _ = _strip(tp)
    if base is str:
        return "a string"
    if base is bool:
        return "a boolean"
    if base is int:
        return "an integer"
    if base is float:
        return "a number"
    if typing.get_origin(base) is list:
        item, _ = _strip(typing.get_args(base)[0])
        if item is str:
            return "an array of strings"
        header = ".".join(s for s in path if isinstance(s, str))
        return f"an array of tables ([[{header}]])"
    return "a table"


def _out_of_bounds(tp: Any, value: Any) -> str:
    base, metas = _strip(tp)
    bounds: dict[str, Any] = {}
    for meta in metas:
        for name in ("ge", "gt", "le", "min_length"):
            if getattr(meta, name) is not None:
                bounds[name] = getattr(meta, name)
    if "min_length" in bounds:
        return "must not be empty" if base is str else "must list at least one item"
    if "gt" in bounds:
        return f"must be greater than {bounds['gt']:g}, got {value}"
    if "le" in bounds:
        return f"must be within [{bounds.get('ge', 0):g}, {bounds['le']:g}], got {value}"
    return f"must be at least {bounds.get('ge', 0):g}, got {value}"


def _unknown_key(key: str, path: list[Segment], data: Any, root: Any) -> str:
    table = _strip(_type_at(root, path, data))[0]
    if _last_key(path) == _AGENT:
        # One table for every agent kind: a key of another kind does not apply to this one.
        union = _type_at(root, path, data, pick_variant=False)
        union = _strip(union)[0]
        every = {f for member in typing.get_args(union) for f in member.__struct_fields__}
        if key in every:
            kind = _value_at(data, [*path, "kind"])
            return f"not used by agent kind {kind!r}"
        return f"unknown key {key!r}; expected one of {', '.join(sorted({*every, 'kind'}))}"
    fields = set(table.__struct_fields__)
    if table.__struct_config__.tag_field is not None:
        fields.add(table.__struct_config__.tag_field)
    return f"unknown key {key!r}; expected one of {', '.join(sorted(fields))}"
