"""Text from data, made safe to print on a terminal.

Names, arguments, answers and stderr lines come from universes, traces and agents: anyone may
have written them. Printed raw, their control characters drive the terminal (ESC sequences
recolour or clear the screen, retitle the window or plant OSC 8 links; BEL rings; CR rewrites
the line) and bidirectional overrides (RLO) make a line read differently from what it says.
Every place that prints such text puts it through `escape_terminal`, which writes each of those
characters as a visible escape in JSON's form (`\\u001b`, `\\u202e`), so the line shows what the
data holds and nothing more, and a JSON line stays valid JSON.
"""

from __future__ import annotations

import re

__all__ = ["escape_terminal"]

# C0 controls (but tab), DEL, C1 controls (8-bit CSI/OSC on some terminals), and the Unicode
# bidirectional marks, embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEPING_NEWLINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escaped(match: re.Match[str]) -> str:
    # JSON's escape form: a JSON line (`wt watch`, `wt explain --json`) stays valid JSON.
    return f"\\u{ord(match.group()):04x}"


def escape_terminal(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every terminal control character written as a visible escape.

    Newlines are escaped too (one record stays one line) unless `keep_newlines`, for text whose
    lines are laid out by Wind Tunnel itself.
    """
    pattern = _UNSAFE_KEEPING_NEWLINES if keep_newlines else _UNSAFE
    return pattern.sub(_escaped, text)
