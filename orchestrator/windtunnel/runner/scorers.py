"""Quality scorers: graded, thresholded, reported apart from the constraint layer.

A scorer turns a trace (usually its final answer) into a `Score`: a value in [0, 1] that passes
when it reaches the scorer's threshold. The builtins are binary (0 or 1); user scorers may grade.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..canonical import canonical_key
from ..errors import ConfigError
from .policies import render_json
from .trace import Score, Trace

__all__ = [
    "Contains",
    "JsonField",
    "Regex",
    "Scorer",
    "contains",
    "json_field",
    "regex",
]

_NO_ANSWER = "no final answer"


@runtime_checkable
class Scorer(Protocol):
    """A quality scorer: `score` grades a trace in [0, 1] against a threshold."""

    @property
    def name(self) -> str: ...

    def score(self, trace: Trace) -> Score: ...


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold must be within [0, 1], got {threshold}")


def _binary(name: str, hit: bool, threshold: float, detail: str) -> Score:
    value = 1.0 if hit else 0.0
    return Score(
        name=name, value=value, threshold=threshold, passed=value >= threshold, detail=detail
    )


@dataclass(frozen=True)
class Contains:
    """1.0 when the final answer contains `text`."""

    text: str
    case_sensitive: bool = False
    threshold: float = 1.0
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _check_threshold(self.threshold)
        if not self.name:
            object.__setattr__(self, "name", f"contains({self.text})")

    def score(self, trace: Trace) -> Score:
        if trace.output is None:
            return _binary(self.name, False, self.threshold, _NO_ANSWER)
        haystack, needle = trace.output, self.text
        if not self.case_sensitive:
            haystack, needle = haystack.casefold(), needle.casefold()
        hit = needle in haystack
        detail = f"answer {'contains' if hit else 'does not contain'} {self.text!r}"
        return _binary(self.name, hit, self.threshold, detail)


@dataclass(frozen=True)
class Regex:
    """1.0 when `pattern` matches somewhere in the final answer (`re.search`)."""

    pattern: str
    threshold: float = 1.0
    name: str = field(default="", compare=False)
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_threshold(self.threshold)
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ConfigError(f"invalid regex {self.pattern!r}: {exc}") from None
        object.__setattr__(self, "_compiled", compiled)
        if not self.name:
            object.__setattr__(self, "name", f"regex({self.pattern})")

    def score(self, trace: Trace) -> Score:
        if trace.output is None:
            return _binary(self.name, False, self.threshold, _NO_ANSWER)
        match = self._compiled.search(trace.output)
        if match is None:
            return _binary(self.name, False, self.threshold, f"no match for {self.pattern!r}")
        detail = f"matched {match.group(0)!r} at {match.start()}"
        return _binary(self.name, True, self.threshold, detail)


_MISSING = object()


def _lookup(value: Any, path: str) -> Any:
    """Follow a dotted path; integer segments index arrays. `_MISSING` when absent."""
    for segment in path.split("."):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


@dataclass(frozen=True)
class JsonField:
    """1.0 when the final answer is JSON whose dotted `field` canonically equals `equals`."""

    field: str
    equals: Any
    threshold: float = 1.0
    name: str = ""

    def __post_init__(self) -> None:
        _check_threshold(self.threshold)
        if not self.field or any(not part for part in self.field.split(".")):
            raise ConfigError(f"json_field needs a dotted path like 'a.b.0', got {self.field!r}")
        if not self.name:
            object.__setattr__(self, "name", f"json_field({self.field})")

    def score(self, trace: Trace) -> Score:
        if trace.output is None:
            return _binary(self.name, False, self.threshold, _NO_ANSWER)
        try:
            document = json.loads(trace.output)
        except ValueError as exc:
            return _binary(self.name, False, self.threshold, f"answer is not JSON: {exc}")
        actual = _lookup(document, self.field)
        expected = render_json(self.equals)
        if actual is _MISSING:
            return _binary(self.name, False, self.threshold, f"no field {self.field}")
        if canonical_key(actual) == canonical_key(self.equals):
            return _binary(self.name, True, self.threshold, f"{self.field} = {expected}")
        detail = f"{self.field} is {render_json(actual)}, expected {expected}"
        return _binary(self.name, False, self.threshold, detail)


def contains(text: str, case_sensitive: bool = False, threshold: float = 1.0) -> Contains:
    """A scorer: the final answer contains `text` (case-insensitive unless asked)."""
    return Contains(text, case_sensitive, threshold)


def regex(pattern: str, threshold: float = 1.0) -> Regex:
    """A scorer: `pattern` matches somewhere in the final answer."""
    return Regex(pattern, threshold)


def json_field(field: str, equals: Any, threshold: float = 1.0) -> JsonField:
    """A scorer: the final answer parsed as JSON has `field` (dotted path) equal to `equals`."""
    return JsonField(field, equals, threshold)
