"""How a request other than `tools/call` finds its recording (issue 25; docs/universe.md).

- `resources/read`: the earliest `resource_reads` entry with exactly the same `uri`;
- `prompts/get`: the earliest `prompt_gets` entry with the same `name` and canonically equal
  `arguments` (absent arguments are `{}`);
- `completion/complete`: the earliest `completions` entry whose `{ref, argument, context}` is
  canonically equal to the request's (without `_meta`; an absent `context` is absent).

No sequence semantics and no keyed tier: the same request always finds the same answer. One
that finds none is answered by `matching.per_method_on_miss` (`miss_answers.empty_request_result`
for `empty`). Pure: no I/O, the universe is only read.
"""

from __future__ import annotations

from typing import Any

from .canonical import CanonicalKey, canonical_key
from .universe import REQUEST_METHODS, Universe

__all__ = ["REQUEST_METHODS", "SurfaceIndex", "completion_target"]


def completion_target(ref: dict[str, Any]) -> str:
    """What a completion is for: the prompt's name or the resource template's URI."""
    target = ref.get("name", ref.get("uri"))
    return target if isinstance(target, str) else ""


class SurfaceIndex:
    """Lookups of recorded reads, prompt gets and completions: each gives the entry's index."""

    def __init__(self, universe: Universe) -> None:
        self._reads: dict[str, int] = {}
        for i, read in enumerate(universe.resource_reads):
            self._reads.setdefault(read.uri, i)
        self._gets: dict[tuple[str, CanonicalKey], int] = {}
        for i, get in enumerate(universe.prompt_gets):
            self._gets.setdefault((get.name, canonical_key(get.arguments)), i)
        self._completions: dict[CanonicalKey, int] = {}
        for i, completion in enumerate(universe.completions):
            self._completions.setdefault(canonical_key(completion.request()), i)

    def find(self, method: str, target: str, args: dict[str, Any]) -> int | None:
        """The index of the entry answering a request (as `MCPCall` logs it), or None."""
        if method == "resources/read":
            return self._reads.get(target)
        if method == "prompts/get":
            return self._gets.get((target, canonical_key(args)))
        if method == "completion/complete":
            return self._completions.get(canonical_key(args))
        return None
