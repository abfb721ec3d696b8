"""Redaction for recordings: rules that find secrets, one placeholder per distinct secret.

A rule finds values: `key:NAME` (any value under that key, anywhere, case-insensitive),
`path:$.args.token` (a JSON path into a call, `$.args...` or `$.result...`, with `*` and `[*]`
wildcards) or `regex:PATTERN` (every match inside any string). Every value found gets a numbered
placeholder, `[REDACTED:1]`, `[REDACTED:2]`, ... in order of discovery, and every occurrence of that
value in any string (a JSON text block that repeats a structured field, a later call's arguments,
the raw log) is replaced by the same placeholder, so a replayed agent that feeds a redacted result
back into its next call still matches the recording. Object keys are values too: a secret used
as a key is replaced there as well. A secret number (a `key:pin` that holds 482193) is also
replaced where its digits stand alone in text: inside a JSON text block it becomes the quoted
placeholder, so the text stays the JSON of the redacted structured value.

The upstream's own address goes through the same rules (`see_upstream`, `printable`): a key rule
names a URL query parameter or a command-line option, a regex matches anywhere in it; and a URL's
userinfo, query values and fragment are always masked where they are written or printed
(`credentials.py`). Pure: no I/O.
"""

from __future__ import annotations

import contextlib
import json
import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from .credentials import is_placeholder, mask_urls_in, option_keys, option_secrets

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
    """Finds secrets with the rules (`see_call`, `see`, `see_upstream`), then rewrites values
    (`apply`) and text to print (`printable`).

    Placeholders are stable for the life of the redactor: the same secret always becomes the same
    placeholder, in args, results, object keys and the raw log alike.
    """

    def __init__(self, rules: RedactionRules) -> None:
        self.rules = rules
        self._keys = {key.casefold() for key in rules.keys}
        self._paths = [_parse_path(text, "--redact") for text in rules.paths]
        self._patterns = [_compile(text, "--redact") for text in rules.patterns]
        self._placeholders: dict[str, str] = {}
        self._spellings: dict[str, str] = {}
        """Each secret string as it may stand in text (itself, and as written inside a JSON
        string) -> its placeholder."""
        self._exact: dict[Any, str] = {}  # short or non-string values: replaced where found
        self._numbers: dict[str, str] = {}  # secret numbers as text -> placeholder
        self._by_rule: Counter[str] = Counter()
        self._substring: re.Pattern[str] | None = None
        self._number_text: re.Pattern[str] | None = None

    @property
    def active(self) -> bool:
        """Rules were given, or a credential was found without one (a URL's userinfo)."""
        return bool(self.rules) or self.distinct > 0

    def summary(self) -> dict[str, int]:
        """Distinct values found per rule (`key:password`, `path:$.args.x`, `regex:...`)."""
        return dict(self._by_rule)

    def unmatched(self) -> list[str]:
        """The rules that found nothing so far, named as in `summary`."""
        named = [f"key:{key}" for key in dict.fromkeys(self._keys)]
        named += [f"path:{path.text}" for path in self._paths]
        named += [f"regex:{pattern.pattern}" for pattern in self._patterns]
        return [rule for rule in named if rule not in self._by_rule]

    @property
    def distinct(self) -> int:
        return len(self._placeholders) + len(self._exact)

    # -- finding --------------------------------------------------------------------------

    def see_call(self, args: Any, result: Any) -> None:
        """Find secrets in one call: path rules apply to `{"args": ..., "result": ...}`."""
        self.see({"args": args, "result": result}, paths=True)

    def see(self, value: Any, *, paths: bool = False) -> None:
        """Find secrets anywhere in `value` by key and regex (and by path, for a call)."""
        if not self.rules:
            return
        if paths:
            for path in self._paths:
                for found in _select(value, path.steps):
                    self._remember(found, f"path:{path.text}")
        self._walk(value)

    def see_upstream(self, upstream: str | Sequence[str]) -> None:
        """Find secrets in the upstream's URL or command line: its userinfo (always), the query
        parameters and options a key rule names, and regex matches."""
        keys = option_keys(self._keys)
        words = [upstream] if isinstance(upstream, str) else list(upstream)
        for value, rule in option_secrets(words, keys):
            self._remember(value, rule)
        self.see(words)

    def see_text(self, text: str) -> None:
        """Find secrets in text from the upstream (an HTTP error body): as JSON when it is JSON,
        so key rules apply, and by regex."""
        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            self.see(msgspec.json.decode(text))
        self.see(text)

    def _walk(self, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.casefold() in self._keys:
                    self._remember_tree(item, f"key:{key.casefold()}")
                    continue
                if isinstance(key, str):
                    self._walk(key)  # a secret used as an object key
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
                placeholder = self._placeholders[value] = self._next()
                self._by_rule[rule] += 1
                for spelling in _spellings(value):
                    self._spellings.setdefault(spelling, placeholder)
                self._substring = None
            return
        key = (type(value).__name__, value)
        if key not in self._exact:
            placeholder = self._exact[key] = self._next()
            self._by_rule[rule] += 1
            text = _number_text(value)
            if text is not None and len(text) >= MIN_SUBSTRING:
                self._numbers.setdefault(text, placeholder)
                self._number_text = None

    def _next(self) -> str:
        return PLACEHOLDER.format(n=self.distinct + 1)

    # -- rewriting ------------------------------------------------------------------------

    def apply(self, value: Any) -> Any:
        """A copy of `value` with every secret found so far replaced by its placeholder."""
        if not self.distinct:
            return value
        if self._substring is None and self._spellings:
            # Longest first, so a secret that contains another is replaced whole.
            ordered = sorted(self._spellings, key=len, reverse=True)
            self._substring = re.compile("|".join(re.escape(text) for text in ordered))
        if self._number_text is None and self._numbers:
            ordered = sorted(self._numbers, key=len, reverse=True)
            alternatives = "|".join(re.escape(text) for text in ordered)
            # Digits that stand alone: not part of a longer number, a word or a placeholder.
            self._number_text = re.compile(rf"(?<![\w.:])(?:{alternatives})(?![\w]|\.\d)")
        return self._rewrite(value)

    def printable(self, text: str) -> str:
        """Text about the upstream to print or write (an error, its URL or command line): secrets
        found so far replaced, and every URL's credentials masked."""
        return mask_urls_in(self.apply(text))

    def printable_upstream(self, upstream: str | Sequence[str]) -> str:
        """The upstream's URL or command line, as written to `meta.upstream.source`."""
        return self.printable(upstream if isinstance(upstream, str) else " ".join(upstream))

    def _rewrite(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {self._rewrite(key): self._rewrite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._rewrite(item) for item in value]
        if value is None or isinstance(value, bool):
            return value
        exact = self._exact.get((type(value).__name__, value))
        if exact is not None:
            return exact
        if isinstance(value, str):
            return self._rewrite_text(value)
        return value

    def _rewrite_text(self, text: str) -> str:
        if self._substring is not None:
            text = self._substring.sub(lambda m: self._spellings[m.group(0)], text)
        numbers = self._number_text
        if numbers is None or numbers.search(text) is None:
            return text

        def bare(match: re.Match[str]) -> str:
            return self._numbers[match.group(0)]

        if not _is_json_document(text):
            return numbers.sub(bare, text)

        def token(match: re.Match[str]) -> str:
            if match.group(0).startswith('"'):
                return numbers.sub(bare, match.group(0))
            placeholder = self._numbers.get(match.group(0))
            return f'"{placeholder}"' if placeholder is not None else match.group(0)

        return _JSON_TOKEN.sub(token, text)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')
"""A JSON string or number: a secret number standing as a number in a JSON text becomes the
quoted placeholder (the text stays the JSON of the redacted value); inside a string, bare."""


def _is_json_document(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def _spellings(value: str) -> list[str]:
    """A secret as it stands in text: itself, and escaped as JSON writes it inside a string (both
    with and without `ensure_ascii`), when that differs."""
    forms = [value]
    for escaped in (
        msgspec.json.encode(value).decode()[1:-1],
        json.dumps(value)[1:-1],
    ):
        if escaped not in forms and len(escaped) >= MIN_SUBSTRING:
            forms.append(escaped)
    return forms


def _number_text(value: Any) -> str | None:
    """How a secret number is written in JSON and in text (`482193`, `12.5`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return repr(value)
    return None


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and is_placeholder(value)


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
