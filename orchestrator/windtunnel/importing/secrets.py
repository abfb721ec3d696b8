"""Find values that look like secrets or personal data, by JSON path.

Detection only: redaction is the producer's job, and Wind Tunnel never rewrites what it replays.
The patterns favour precision over recall (a date must not look like a phone number); a warning
asks a person to look, it does not prove anything.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SECRET_KINDS", "scan_secrets"]

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("bearer_token", re.compile(r"\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*", re.IGNORECASE)),
    (
        "api_key",
        re.compile(
            r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
            r"|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}"
            r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
            r"|AKIA[0-9A-Z]{16}"
            r"|AIza[0-9A-Za-z_\-]{35}"
            r"|glpat-[A-Za-z0-9_\-]{20,})"
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    (
        "email",
        re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
    ),
    (
        "phone",
        re.compile(
            r"(?<![\w+])\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){2,5}(?![\w\-])"
            r"|(?<![\w\-])\(\d{3}\) ?\d{3}-\d{4}(?![\w\-])"
            r"|(?<![\w\-.])\d{3}[.\-]\d{3}[.\-]\d{4}(?![\w\-.])"
        ),
    ),
)

_CREDENTIAL_KEY = re.compile(
    r"(?:^|[_\-.])(?:password|passwd|secret|api[_\-]?key|access[_\-]?token|auth[_\-]?token"
    r"|refresh[_\-]?token|client[_\-]?secret|authorization)$",
    re.IGNORECASE,
)

# Empty values and the usual redaction markers (logfire's scrubbing placeholder too) are not
# secrets.
_REDACTED = re.compile(
    r"|\*+|\[REDACTED[^\]]*\]|<redacted>|\[FILTERED\]|\[Scrubbed due to '[^']*'\]", re.IGNORECASE
)

SECRET_KINDS: tuple[str, ...] = (
    *(kind for kind, _ in _PATTERNS),
    "credential_field",
)


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{escaped}"]'


def scan_secrets(value: Any, *, root: str = "$") -> list[tuple[str, str]]:
    """Return `(json_path, kind)` for every string that looks like a secret or personal data.

    Kinds: `private_key`, `bearer_token`, `api_key`, `jwt`, `email` (not at reserved example
    domains such as `example.com`, `*.example`, `*.test`), `phone`, and
    `credential_field` (a non-empty string under a key such as `password` or `api_key`). A string
    with several findings is reported once per kind, in the order above; paths come in document
    order.
    """
    found: list[tuple[str, str]] = []
    _scan(value, root, found)
    return found


# RFC 2606 / 6761 reserved names: addresses there are synthetic by definition.
_RESERVED_DOMAIN = re.compile(
    r"(?:^|\.)(?:example(?:\.com|\.net|\.org)?|test|invalid|localhost)$", re.IGNORECASE
)


def _matches(kind: str, pattern: re.Pattern[str], value: str) -> bool:
    if kind != "email":
        return pattern.search(value) is not None
    return any(
        not _RESERVED_DOMAIN.search(match.group(0).rsplit("@", 1)[1])
        for match in pattern.finditer(value)
    )


def _scan(value: Any, path: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, str):
        for kind, pattern in _PATTERNS:
            if _matches(kind, pattern, value):
                found.append((path, kind))
    elif isinstance(value, dict):
        for key, item in value.items():
            item_path = _key_path(path, str(key))
            if (
                isinstance(item, str)
                and _CREDENTIAL_KEY.search(str(key))
                and not _REDACTED.fullmatch(item.strip())
            ):
                before = len(found)
                _scan(item, item_path, found)
                if len(found) == before:
                    found.append((item_path, "credential_field"))
            else:
                _scan(item, item_path, found)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _scan(item, f"{path}[{i}]", found)
