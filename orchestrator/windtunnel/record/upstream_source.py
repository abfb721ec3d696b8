"""Where a universe's live server is: what `wt record` wrote in `meta.upstream.source`, or what
the user gives (a URL, or a command line). Pure."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..errors import ConfigError
from ..universe import Universe

__all__ = ["given_upstream", "is_url", "recorded_name", "recorded_upstream"]


def is_url(upstream: str | Sequence[str]) -> bool:
    return isinstance(upstream, str) and upstream.startswith(("http://", "https://"))


def given_upstream(text: str, *, where: str) -> str | list[str]:
    """A URL as it is; anything else a command line, split as a shell would."""
    if is_url(text):
        return text
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"cannot read the command {text!r}: {exc}", file=where) from None
    if not words:
        raise ConfigError("the upstream is empty: expected a URL or a command", file=where)
    return words


def recorded_upstream(universe: Universe, file: str) -> str | list[str]:
    """The upstream `wt record` wrote into `meta.upstream.source`: a URL, or a command line.

    A source with a masked or redacted part (a URL's query token) cannot be reached as written:
    the user must say where the server is."""
    recorded = universe.meta.get("upstream")
    source = recorded.get("source") if isinstance(recorded, dict) else None
    if not isinstance(source, str) or not source.strip():
        raise ConfigError(
            "no upstream recorded (meta.upstream.source): give --against URL or -- COMMAND",
            file=file,
        )
    if "[REDACTED" in source:
        raise ConfigError(
            "the recorded upstream has redacted parts (credentials are never written): give "
            "--against URL or -- COMMAND",
            file=file,
            path="$.meta.upstream.source",
        )
    return given_upstream(source, where=file)


def recorded_name(universe: Universe) -> str | None:
    recorded = universe.meta.get("upstream")
    name = recorded.get("name") if isinstance(recorded, dict) else None
    return name if isinstance(name, str) else None
