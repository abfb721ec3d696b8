"""Redaction for recordings: rules that find secrets, one placeholder per distinct secret.

A rule finds values: `key:NAME` (any value under that key, anywhere, case-insensitive),
`path:$.args.token` (a JSON path into a call, `$.args...` or `$.result...`, with `*` and `[*]`
wildcards) or `regex:PATTERN` (every match inside any string). Every value found gets a numbered
placeholder, `[REDACTED:1]`, `[REDACTED:2]`, ... in order of discovery, and every occurrence of that
value in any string (a JSON text block that repeats a structured field, a later call's arguments,
the raw log) is replaced by the same placeholder, so a replayed agent that feeds a redacted result
back into its next call still matches the recording. Pure: no I/O.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["PLACEHOLDER", "RedactionRules", "Redactor", "load_rules_file", "parse_rule"]

PLACEHOLDER = "[REDACTED:{n}]"
"""`wt validate` treats `[REDACTED...]` as already redacted, never as a secret."""

MIN_SUBSTRING = 4
"""Values at least this long are also replaced inside other strings; shorter ones only where a
rule found them (replacing every "1" inside every text would destroy the recording)."""

_PATH_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*|\*)|\[(\*|\d+|\"(?:[^\"\\]|\\.)*\")\]")


@dataclass(frozen=True)
class _Path:
    text: str
    steps: tuple[str | int, ...]  # "*" is the wildcard for keys and indexes alike


def _parse_path(text: str, where: str) -> _Path:
    if not text.startswith("$"):
        raise ConfigError(f"a JSON path starts with `$`, got {text!r}", file=where)
    steps: list[str | int] = []
    position = 1
    while position < len(text):
        match = _PATH_TOKEN.match(text, position)
        if match is None:
            raise ConfigError(
                f"cannot read JSON path {text!r} at character {position + 1}; expected "
                '`.key`, `.*`, `[N]`, `[*]` or `["key"]`',
                file=where,
            )
        name, bracket = match.group(1), match.group(2)
        if name is not None:
            steps.append(name)
        elif bracket == "*":
            steps.append("*")
        elif bracket.startswith('"'):
            steps.append(bracket[1:-1].replace('\\"', '"').replace("\\\\", "\\"))
        else:
            steps.append(int(bracket))
        position = match.end()
    if not steps or steps[0] not in ("args", "result", "*"):
        raise ConfigError(
            f"JSON path {text!r} must start with `$.args` or `$.result` (it applies to every "
            "call's arguments or result)",
            file=where,
        )
    return _Path(text, tuple(steps))


@dataclass
class RedactionRules:
    """What to redact; empty rules redact nothing."""

    keys: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.keys or self.paths or self.patterns)

    def extend(self, other: RedactionRules) -> None:
        self.keys.extend(other.keys)
        self.paths.extend(other.paths)
        self.patterns.extend(other.patterns)


def parse_rule(spec: str, *, where: str = "--redact") -> RedactionRules:
    """`key:NAME`, `path:$.args.x` or `regex:PATTERN` (a bare word is a key)."""
    kind, sep, value = spec.partition(":")
    if not sep:
        kind, value = "key", spec
    if not value:
        raise ConfigError(f"empty rule {spec!r}; expected key:NAME, path:$.…, regex:…", file=where)
    if kind == "key":
        return RedactionRules(keys=[value])
    if kind == "path":
        _parse_path(value, where)
        return RedactionRules(paths=[value])
    if kind == "regex":
        _compile(value, where)
        return RedactionRules(patterns=[value])
    raise ConfigError(
        f"unknown rule kind {kind!r} in {spec!r}; expected key:NAME, path:$.…, regex:…", file=where
    )


def _compile(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"regex {pattern!r} does not compile: {exc}", file=where) from None


def load_rules_file(path: str) -> RedactionRules:
    """A TOML file: `keys = [...]`, `paths = [...]`, `patterns = [...]` (lists of strings)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=path) from None
    unknown = sorted(set(data) - {"keys", "paths", "patterns"})
    if unknown:
        raise ConfigError(
            f"unknown field(s) {', '.join(unknown)}; expected keys, paths, patterns", file=path
        )
    lists: dict[str, list[str]] = {}
    for name in ("keys", "paths", "patterns"):
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError("expected a list of non-empty strings", file=path, path=f"$.{name}")
        lists[name] = value
    for text in lists["paths"]:
        _parse_path(text, path)
    for text in lists["patterns"]:
        _compile(text, path)
    return RedactionRules(keys=lists["keys"], paths=lists["paths"], patterns=lists["patterns"])


class Redactor:
    """Finds secrets with the rules (`see_call`, `see`), then rewrites values (`apply`).

    Placeholders are stable for the life of the redactor: the same secret always becomes the same
    placeholder, in args, results and the raw log alike.
    """

    def __init__(self, rules: RedactionRules) -> None:
        self.rules = rules
        self._keys = {key.casefold() for key in rules.keys}
        self._paths = [_parse_path(text, "--redact") for text in rules.paths]
        self._patterns = [_compile(text, "--redact") for text in rules.patterns]
        self._placeholders: dict[str, str] = {}
        self._exact: dict[Any, str] = {}  # short or non-string values: replaced where found
        self._by_rule: Counter[str] = Counter()
        self._substring: re.Pattern[str] | None = None

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def summary(self) -> dict[str, int]:
        """Distinct values found per rule (`key:password`, `path:$.args.x`, `regex:...`)."""
        return dict(self._by_rule)

    @property
    def distinct(self) -> int:
        return len(self._placeholders) + len(self._exact)

    # -- finding --------------------------------------------------------------------------

    def see_call(self, args: Any, result: Any) -> None:
        """Find secrets in one call: path rules apply to `{"args": ..., "result": ...}`."""
        self.see({"args": args, "result": result}, paths=True)

    def see(self, value: Any, *, paths: bool = False) -> None:
        """Find secrets anywhere in `value` by key and regex (and by path, for a call)."""
        if not self.active:
            return
        if paths:
            for path in self._paths:
                for found in _select(value, path.steps):
                    self._remember(found, f"path:{path.text}")
        self._walk(value)

    def _walk(self, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.casefold() in self._keys:
                    self._remember_tree(item, f"key:{key.casefold()}")
                else:
                    self._walk(item)
        elif isinstance(value, list):
            for item in value:
                self._walk(item)
        elif isinstance(value, str):
            for pattern in self._patterns:
                for match in pattern.finditer(value):
                    if match.group(0):
                        self._remember(match.group(0), f"regex:{pattern.pattern}")

    def _remember_tree(self, value: Any, rule: str) -> None:
        if isinstance(value, dict):
            for item in value.values():
                self._remember_tree(item, rule)
        elif isinstance(value, list):
            for item in value:
                self._remember_tree(item, rule)
        else:
            self._remember(value, rule)

    def _remember(self, value: Any, rule: str) -> None:
        if isinstance(value, dict | list):
            self._remember_tree(value, rule)
            return
        if value is None or isinstance(value, bool) or _is_placeholder(value):
            return
        if isinstance(value, str) and len(value) >= MIN_SUBSTRING:
            if value not in self._placeholders:
                self._placeholders[value] = self._next()
                self._by_rule[rule] += 1
                self._substring = None
            return
        key = (type(value).__name__, value)
        if key not in self._exact:
            self._exact[key] = self._next()
            self._by_rule[rule] += 1

    def _next(self) -> str:
        return PLACEHOLDER.format(n=self.distinct + 1)

    # -- rewriting ------------------------------------------------------------------------

    def apply(self, value: Any) -> Any:
        """A copy of `value` with every secret found so far replaced by its placeholder."""
        if not self.distinct:
            return value
        if self._substring is None and self._placeholders:
            # Longest first, so a secret that contains another is replaced whole.
            ordered = sorted(self._placeholders, key=len, reverse=True)
            self._substring = re.compile("|".join(re.escape(text) for text in ordered))
        return self._rewrite(value)

    def _rewrite(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._rewrite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._rewrite(item) for item in value]
        if value is None or isinstance(value, bool):
            return value
        exact = self._exact.get((type(value).__name__, value))
        if exact is not None:
            return exact
        if isinstance(value, str) and self._substring is not None:
            return self._substring.sub(lambda m: self._placeholders[m.group(0)], value)
        return value


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"\[REDACTED:\d+\]", value) is not None


def _select(value: Any, steps: tuple[str | int, ...]) -> list[Any]:
    """The values at a parsed path (wildcards expand); missing steps select nothing."""
    current = [value]
    for step in steps:
        following: list[Any] = []
        for item in current:
            if step == "*":
                if isinstance(item, dict):
                    following.extend(item.values())
                elif isinstance(item, list):
                    following.extend(item)
            elif isinstance(step, int):
                if isinstance(item, list) and -len(item) <= step < len(item):
                    following.append(item[step])
            elif isinstance(item, dict) and step in item:
                following.append(item[step])
        current = following
    return current
