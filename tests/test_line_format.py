"""One line format on stderr: events, our log lines and the libraries' log lines alike."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import structlog

from tests.compat import COMPAT_UNIVERSE
from tests.processes import WT
from windtunnel.actors.events import make_event
from windtunnel.cli.logs import configure_logging
from windtunnel.line_format import json_line, line_renderer

HOOK = "def boom(tool, args, universe):\n    raise RuntimeError('no synthesis today')\n"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def assert_one_format(lines: list[str]) -> None:
    for line in lines:
        fields = json.loads(line)
        assert list(fields)[:3] == ["event", "timestamp", "level"], line
        assert msgspec.json.encode(fields).decode() == line  # compact separators, same order


def test_events_and_every_kind_of_log_line_share_the_json_format(tmp_path: Path) -> None:
    """`wt serve --stdio` with a hook that raises: the fleet's events and our `synthesize_failed`
    log line come out in one format."""
    universe = json.loads(COMPAT_UNIVERSE.read_text())
    universe["matching"] = {"on_miss": "synthesize"}
    path = tmp_path / "compat.universe.json"
    path.write_text(json.dumps(universe))
    (tmp_path / "failing_hook.py").write_text(HOOK)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "client_lookup", "arguments": {"query": "Nobody"}},
    }
    stdin = "\n".join(
        json.dumps(message)
        for message in (INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [*WT, "serve", "--stdio", "--synthesize", "failing_hook:boom", str(path)],
        input=stdin + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert_one_format(lines)
    names = [json.loads(line)["event"] for line in lines]
    assert "synthesize_failed" in names  # a log line
    assert {"tool_call", "universe_divergence", "server_fault", "fleet_stopped"} <= set(names)


def test_a_library_log_line_gets_the_same_format() -> None:
    stream = _Lines()
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers.clear()  # as in a real process, where nothing else configured logging
    try:
        configure_logging(fmt="json", stream=stream)
        logging.getLogger("hypercorn.error").warning("socket %s gone", "x")
        structlog.get_logger("windtunnel").warning("accept_failed", error="EMFILE")
    finally:
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        root.handlers.extend(saved)
    lines = stream.text.splitlines()
    assert_one_format(lines)
    first, second = (json.loads(line) for line in lines)
    assert {k: first[k] for k in ("event", "level", "logger")} == {
        "event": "socket x gone",
        "level": "warning",
        "logger": "hypercorn.error",
    }
    assert {k: second[k] for k in ("event", "level", "error")} == {
        "event": "accept_failed",
        "level": "warning",
        "error": "EMFILE",
    }


def test_an_event_rendered_for_stderr_is_its_file_line_made_terminal_safe() -> None:
    event = make_event("tool_call", tool="lookup\x9b31m", args={})
    line = line_renderer("json")(event)
    assert json.loads(line) == json.loads(json_line(event))
    assert b"\xc2\x9b" not in line  # a C1 control a terminal would obey, written as \u009b


def test_console_style_escapes_what_a_terminal_would_obey() -> None:
    line = line_renderer("console")(make_event("tool_call", tool="x\x1b[2J"))
    assert b"\x1b" not in line
    assert b"tool_call" in line


class _Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
