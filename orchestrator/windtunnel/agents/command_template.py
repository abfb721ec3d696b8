"""Command templates: the `{field}` placeholders an agent command may use, and filling them.

Kept apart from `CommandAgent` so that reading a pack (`wt plan`, `wt validate`) checks templates
without loading Trio.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["TEMPLATE_FIELDS", "render_command", "template_fields"]

TEMPLATE_FIELDS: tuple[str, ...] = (
    "mcp_config",
    "python",
    "scenario",
    "seed",
    "task",
    "task_file",
    "workdir",
)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render_command(command: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Fill `{field}` placeholders; each element stays one argument (no shell).

    One pass, so a value that itself looks like a placeholder (a task mentioning `{workdir}`)
    stays as it is; names not in `values` and other braces (JSON arguments) are left as text.
    """

    def fill(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return [_PLACEHOLDER.sub(fill, part) for part in command]


def template_fields(part: str) -> list[str]:
    """The placeholder names one template element uses; `ValueError` for an unknown one."""
    names: list[str] = _PLACEHOLDER.findall(part)
    for name in names:
        if name not in TEMPLATE_FIELDS:
            raise ValueError(
                f"unknown placeholder {{{name}}} in {part!r}; expected one of "
                + ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
            )
    return names
