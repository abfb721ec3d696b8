"""Logging set-up for the CLI: structlog events as JSON lines (or console lines on a terminal)."""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal, TextIO, cast

import structlog

from ..runner.progress import TextStream
from ..terminal_text import escape_terminal
from .accept_errors import install_accept_filter

__all__ = ["LogFormat", "LogStream", "configure_logging"]

LogFormat = Literal["auto", "json", "console"]


LogStream = TextStream
"""What log lines are printed to: `sys.stderr`, a file, a `PipeTextStream` or `StderrLines`."""


class _CurrentStderr:
    """Writes to whatever `sys.stderr` is at the time of writing (it may be swapped later)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def _escape_values(
    logger: object, method: str, event: structlog.types.EventDict
) -> structlog.types.EventDict:
    """Console lines show tool names, arguments and agents' text: escape their control bytes."""
    return {
        escape_terminal(str(key)): escape_terminal(value) if isinstance(value, str) else value
        for key, value in event.items()
    }


def _escape_line(logger: object, method: str, rendered: Any) -> str:
    """After the JSON renderer: `rendered` is the line."""
    return escape_terminal(str(rendered), keep_newlines=True)


def configure_logging(
    *, fmt: LogFormat = "auto", stream: LogStream | None = None, level: int = logging.INFO
) -> None:
    """Configure structlog once: ISO timestamps, level names, one line per event (stderr by
    default, looked up at each write)."""
    # structlog and logging only ever call write, flush (and isatty) on the stream.
    out = cast(TextIO, stream if stream is not None else _CurrentStderr())
    if fmt == "auto":
        fmt = "console" if out.isatty() else "json"
    # Console lines print values as they are: each is escaped first. JSON escapes C0 controls
    # itself; the line is escaped after for what JSON leaves raw (the same JSON value).
    rendering: list[structlog.types.Processor] = (
        [_escape_values, structlog.dev.ConsoleRenderer(colors=out.isatty())]
        if fmt == "console"
        else [structlog.processors.JSONRenderer(sort_keys=False), _escape_line]
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *rendering,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    # The SDK and hypercorn log through stdlib logging: warnings and worse, as plain lines.
    logging.basicConfig(
        level=logging.WARNING, stream=out, format="%(levelname)s %(name)s: %(message)s"
    )
    install_accept_filter()
