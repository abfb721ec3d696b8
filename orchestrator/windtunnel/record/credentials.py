"""Where an upstream's address carries credentials: URL userinfo and query, command-line options.

`wt record` writes the upstream's URL or command line into the universe (`meta.upstream.source`)
and prints it in errors ("cannot be reached at ..."). A URL's userinfo, query values and fragment
are credentials often enough (`https://user:pass@host/`, `.../mcp?token=sk-live-...`) that they
are always masked in what is written or printed (any scheme: `postgres://user:pass@db` on a
command line too) (`mask_url`, `mask_urls_in`), rule or no rule:
nobody can tell a token from `format=json`, and a serious tool never writes a URL credential.
`url_secrets` and `option_secrets` find the values `--redact` key rules name (a query parameter
or a `--NAME VALUE` option), so the redactor can replace them everywhere else too. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from urllib.parse import parse_qsl, unquote

__all__ = [
    "MASK",
    "is_placeholder",
    "mask_url",
    "mask_urls_in",
    "option_keys",
    "option_secrets",
    "url_secrets",
]

MASK = "[REDACTED]"
"""What a URL credential becomes when no rule gave it a numbered placeholder."""

_PLACEHOLDER = re.compile(r"\[REDACTED(?::\d+)?\]")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]*[^\s'\"<>.,:;!?)]")
"""A URL of any scheme (`https://`, `postgres://`, ...) as it stands in text, without the
punctuation that ends a sentence or comes before an explanation (`... at URL: refused`)."""
_URL_PARTS = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?")


def is_placeholder(text: str) -> bool:
    return _PLACEHOLDER.fullmatch(text) is not None


def _option_name(text: str) -> str:
    """`--API-Key`, `api_key`, `API-KEY` all name the same thing."""
    return text.lstrip("-").casefold().replace("-", "_")


def _masked_value(value: str) -> str:
    return value if not value or is_placeholder(value) else MASK


def mask_url(url: str) -> str:
    """`url` with its userinfo, every query value and its fragment masked (placeholders kept).

    Split by hand, not by `urlsplit`: a placeholder already in the userinfo (`[REDACTED:1]`)
    or a broken IPv6 literal must not stop the masking."""
    parts = _URL_PARTS.match(url)
    if parts is None:
        return url
    scheme, netloc, path, query, fragment = parts.groups()
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    masked = f"{scheme}{netloc}{path}"
    if query is not None:
        pairs: list[str] = []
        for pair in query.split("&") if query else []:
            name, equals, value = pair.partition("=")
            pairs.append(f"{name}={_masked_value(value)}" if equals else _masked_value(name))
        masked += "?" + "&".join(pairs)
    if fragment is not None:
        masked += "#" + _masked_value(fragment)
    return masked


def mask_urls_in(text: str) -> str:
    """Every http(s) URL inside `text` masked as by `mask_url` (error messages quote URLs)."""
    return _URL.sub(lambda match: mask_url(match.group(0)), text)


def url_secrets(url: str, keys: dict[str, str]) -> Iterator[tuple[str, str]]:
    """`(value, rule)` for the URL's credentials: the userinfo's password (or its user name when
    there is no password: a token in user position), always; a query value whose parameter a
    `key:` rule names (`keys`: from `option_keys`)."""
    parts = _URL_PARTS.match(url)
    if parts is None:
        return
    netloc, query = parts.group(2), parts.group(4)
    userinfo, at, _ = netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    if at and (password or username):
        yield unquote(password or username), "url:userinfo"
    for name, value in parse_qsl(query or "", keep_blank_values=False):
        rule = keys.get(_option_name(name))
        if rule is not None:
            yield value, rule


def option_secrets(words: Sequence[str], keys: dict[str, str]) -> Iterator[tuple[str, str]]:
    """`(value, rule)` for command-line values a `key:` rule names: `--NAME VALUE`,
    `--NAME=VALUE` and `NAME=VALUE` (an environment assignment), where NAME matches the key
    case-insensitively with `-` and `_` alike; URLs among the words give their `url_secrets`."""
    for position, word in enumerate(words):
        if _URL.fullmatch(word):
            yield from url_secrets(word, keys)
            continue
        name, equals, value = word.partition("=")
        rule = keys.get(_option_name(name))
        if rule is None:
            continue
        if equals and value:
            yield value, rule
        elif not equals and word.startswith("-") and position + 1 < len(words):
            value = words[position + 1]
            if not value.startswith("--"):  # `--token --verbose`: the option has no value here
                yield value, rule


def option_keys(keys: set[str]) -> dict[str, str]:
    """`key:` rules (casefolded names) by the form option and query names are compared in."""
    return {_option_name(key): f"key:{key}" for key in keys}
