"""Typed reading of one TOML table, where every problem names the file and the key path.

`Fields` wraps a table found at a key path (`scenario[2].policies[0]`); each accessor checks the
type of one key and records it as known, and `finish()` refuses the keys nobody asked for, so a
typo never silently does nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, NoReturn

from ..canonical import is_json_value
from ..errors import ConfigError

__all__ = ["Fields", "toml_type"]


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


class Fields:
    """One TOML table at a key path."""

    def __init__(self, data: Mapping[str, Any], path: str, file: str) -> None:
        self.data = data
        self.path = path
        self.file = file
        self.known: set[str] = set()

    def where(self, key: str | None = None) -> str:
        if key is None:
            return self.path
        return f"{self.path}.{key}" if self.path else key

    def fail(self, message: str, key: str | None = None) -> NoReturn:
        raise ConfigError(message, file=self.file, path=self.where(key) or None)

    def has(self, key: str) -> bool:
        return key in self.data

    def _get(self, key: str, required: bool) -> Any:
        self.known.add(key)
        if key not in self.data:
            if required:
                self.fail("required key missing", key)
            return None
        return self.data[key]

    def _expect(self, key: str, value: Any, what: str) -> NoReturn:
        self.fail(f"expected {what}, got {toml_type(value)}", key)

    def text(self, key: str, *, required: bool = False, nonempty: bool = True) -> str | None:
        value = self._get(key, required)
        if value is None:
            return None
        if not isinstance(value, str):
            self._expect(key, value, "a string")
        if nonempty and not value:
            self.fail("must not be empty", key)
        return value

    def required_text(self, key: str) -> str:
        value = self.text(key, required=True)
        assert value is not None  # `required` has failed otherwise
        return value

    def integer(self, key: str, default: int, *, minimum: int) -> int:
        value = self._get(key, False)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self._expect(key, value, "an integer")
        if value < minimum:
            self.fail(f"must be at least {minimum}, got {value}", key)
        return value

    def number(
        self,
        key: str,
        default: float,
        *,
        minimum: float,
        maximum: float | None = None,
        exclusive_minimum: bool = False,
    ) -> float:
        value = self._get(key, False)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._expect(key, value, "a number")
        number = float(value)
        if exclusive_minimum and not number > minimum:
            self.fail(f"must be greater than {minimum:g}, got {value}", key)
        if number < minimum or (maximum is not None and number > maximum):
            bounds = (
                f"within [{minimum:g}, {maximum:g}]"
                if maximum is not None
                else (f"at least {minimum:g}")
            )
            self.fail(f"must be {bounds}, got {value}", key)
        return number

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._expect(key, value, "a boolean")
        return value

    def str_list(self, key: str, *, required: bool = False, nonempty: bool = False) -> list[str]:
        value = self._get(key, required)
        if value is None:
            return []
        if not isinstance(value, list):
            self._expect(key, value, "an array of strings")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self._expect(f"{key}[{i}]", item, "a string")
        if nonempty and not value:
            self.fail("must list at least one item", key)
        return list(value)

    def json(self, key: str, *, required: bool = False) -> Any:
        """Any value that is plain JSON data (TOML dates are refused)."""
        value = self._get(key, required)
        if value is not None and not is_json_value(value):
            self.fail("expected JSON-like data (strings, numbers, booleans, arrays, tables)", key)
        return value

    def json_table(self, key: str) -> dict[str, Any] | None:
        value = self._get(key, False)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._expect(key, value, "a table")
        if not is_json_value(value):
            self.fail("expected JSON-like data (strings, numbers, booleans, arrays, tables)", key)
        return dict(value)

    def str_table(self, key: str) -> dict[str, str]:
        value = self._get(key, False)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._expect(key, value, "a table")
        for name, item in value.items():
            if not isinstance(item, str):
                self._expect(f"{key}.{name}", item, "a string")
        return dict(value)

    def table(self, key: str, *, required: bool = False) -> Fields | None:
        value = self._get(key, required)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._expect(key, value, "a table")
        return Fields(value, self.where(key), self.file)

    def tables(self, key: str, *, header: str | None = None) -> list[Fields]:
        """An array of tables (`[[key]]`)."""
        value = self._get(key, False)
        if value is None:
            return []
        shown = header or key
        if not isinstance(value, list):
            self._expect(key, value, f"an array of tables ([[{shown}]])")
        items: list[Fields] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self._expect(f"{key}[{i}]", item, "a table")
            items.append(Fields(item, self.where(f"{key}[{i}]"), self.file))
        return items

    def reject(self, key: str, message: str) -> None:
        """Refuse `key` when present (it does not apply here)."""
        self.known.add(key)
        if key in self.data:
            self.fail(message, key)

    def finish(self) -> None:
        """Refuse every key no accessor asked for."""
        for key in self.data:
            if key not in self.known:
                expected = ", ".join(sorted(self.known))
                self.fail(f"unknown key {key!r}; expected one of {expected}", key)
