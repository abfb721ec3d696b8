"""The one line format of everything Wind Tunnel writes to stderr and to event files.

Events (`actors.events`: the fleet's `tool_call`, `universe_divergence`, ...) and log lines
(structlog: `synthesize_failed`, `accept_failed`, ...) are both dicts with `event`, `timestamp` and
`level`; both become lines here, in one of two styles chosen once per process by
`cli.logs.configure_logging`:

- `json`: one compact JSON object per line, `event` first, then `timestamp` and `level`, then the
  rest in the order given (msgspec's separators: `{"event":"tool_call","timestamp":...}`);
  what JSON leaves raw and a terminal would obey is escaped (the same JSON value);
- `console`: structlog's console renderer (a terminal), its values escaped.

Event files (`events.jsonl`, `--events FILE`) are always `json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from .canonical import encode_json
from .terminal_text import escape_terminal

__all__ = [
    "LineRenderer",
    "LineStyle",
    "console_line",
    "json_line",
    "line_renderer",
    "terminal_safe",
]

LineStyle = Literal["json", "console"]
LineRenderer = Callable[[Mapping[str, Any]], bytes]
_HEAD = ("event", "timestamp", "level")


def json_line(fields: Mapping[str, Any]) -> bytes:
    """`fields` as one JSON line: `event`, `timestamp`, `level` first when present (a key keeps
    its first position when `**fields` repeats it), then the rest in order."""
    try:
        # Every event and log line has the three: one dict display, the per-event cost.
        ordered = {
            "event": fields["event"],
            "timestamp": fields["timestamp"],
            "level": fields["level"],
            **fields,
        }
    except KeyError:
        ordered = {key: fields[key] for key in _HEAD if key in fields}
        ordered.update(fields)
    return encode_json(ordered) + b"\n"


def terminal_safe(line: bytes) -> bytes:
    """A JSON line with the control characters JSON leaves raw written as `\\u` escapes: the
    same JSON value, safe on a terminal (stderr often is one)."""
    if line.isascii() and b"\x7f" not in line:
        return line  # JSON already escapes C0: nothing else can be there
    return escape_terminal(line.decode("utf-8"), keep_newlines=True).encode("utf-8")


def console_line(fields: Mapping[str, Any], *, colors: bool) -> bytes:
    """`fields` as structlog's console renderer prints a log line. Strings are escaped; arrays and
    objects are shown as their JSON (escaped the same way), never as Python reprs."""
    import structlog  # only for console output

    renderer = structlog.dev.ConsoleRenderer(colors=colors)
    shown = {escape_terminal(str(key)): _console_value(value) for key, value in fields.items()}
    return (str(renderer(None, str(shown.get("level", "info")), shown)) + "\n").encode()


def _console_value(value: Any) -> Any:
    if isinstance(value, str):
        return escape_terminal(value)
    if isinstance(value, (dict, list, tuple)):
        return terminal_safe(encode_json(value)).decode("utf-8")
    return value


def line_renderer(style: LineStyle, *, colors: bool = False) -> LineRenderer:
    """How an event becomes a stderr line in `style`."""
    if style == "console":
        return lambda fields: console_line(fields, colors=colors)
    return lambda fields: terminal_safe(json_line(fields))
