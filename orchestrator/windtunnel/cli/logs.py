"""Logging set-up for the CLI: structlog log lines in the one stderr line format (`line_format`)."""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO, cast

import structlog

from ..actors.events import utc_timestamp
from ..line_format import LineRenderer, LineStyle, line_renderer
from ..runner.progress import TextStream
from .accept_errors import install_accept_filter

__all__ = ["LogFormat", "LogStream", "configure_logging", "line_style"]

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


def line_style(fmt: LogFormat, stream: LogStream | None = None) -> LineStyle:
    """The style of every stderr line: `console` on a terminal unless told, else `json`."""
    if fmt != "auto":
        return fmt
    out = stream if stream is not None else _CurrentStderr()
    return "console" if out.isatty() else "json"


def configure_logging(
    *, fmt: LogFormat = "auto", stream: LogStream | None = None, level: int = logging.INFO
) -> LineRenderer:
    """Configure structlog once: log lines in the line format (`line_format`) of `fmt`, to
    `stream` (stderr by default, looked up at each write). Returns the renderer, for the
    command's event lines to use the same."""
    # structlog and logging only ever call write, flush (and isatty) on the stream.
    out = cast(TextIO, stream if stream is not None else _CurrentStderr())
    render = line_renderer(line_style(fmt, out), colors=out.isatty())

    def render_line(logger: object, method: str, event: structlog.types.EventDict) -> str:
        return render(event).decode("utf-8").removesuffix("\n")

    structlog.configure(
        processors=[structlog.processors.add_log_level, _add_timestamp, render_line],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    _route_stdlib_logging(out, render_line)
    install_accept_filter()
    return render


_stdlib_handler: logging.Handler | None = None
"""The handler `configure_logging` put on the root logger (replaced when configured again)."""


def _route_stdlib_logging(out: TextIO, render_line: structlog.types.Processor) -> None:
    """The SDK and hypercorn log through stdlib logging: their warnings and worse become lines
    in the same format, with `logger` naming where they came from and `exception` holding a
    traceback. Like `logging.basicConfig`, nothing is added when someone else (a test runner, an
    embedding application) already put a handler on the root logger."""
    global _stdlib_handler
    root = logging.getLogger()
    if _stdlib_handler is not None:
        root.removeHandler(_stdlib_handler)
        _stdlib_handler = None
    if root.handlers:
        return
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                _add_timestamp,
            ],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                render_line,
            ],
        )
    )
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    _stdlib_handler = handler


def _add_timestamp(
    logger: object, method: str, event: structlog.types.EventDict
) -> structlog.types.EventDict:
    event["timestamp"] = utc_timestamp()  # the events' clock and format
    return event
