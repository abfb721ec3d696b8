"""`wt verify`'s usage and connection errors: one line naming the problem, exit 2."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from windtunnel.cli.main import main

pytestmark = pytest.mark.timeout(60)

TOOL = {"name": "lookup", "input_schema": {"type": "object"}}


def universe_file(tmp_path: Path, meta: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "u.universe.json"
    document: dict[str, Any] = {"windtunnel_universe": 1, "tools": [TOOL]}
    if meta is not None:
        document["meta"] = meta
    path.write_text(json.dumps(document))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["verify", *argv])
    return code, capsys.readouterr().err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_no_recorded_upstream_needs_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A universe without meta.upstream.source, and no --against: exit 2, saying what to give."""
    path = universe_file(tmp_path)
    assert run(capsys, str(path)) == (
        2,
        f"wt: error: {path}: no upstream recorded (meta.upstream.source): give --against URL "
        "or -- COMMAND\n",
    )


def test_a_redacted_recorded_upstream_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded URL whose token was masked cannot be reached as written."""
    meta = {"upstream": {"name": "crm", "source": "https://crm.example/mcp?token=[REDACTED]"}}
    path = universe_file(tmp_path, meta)
    code, err = run(capsys, str(path))
    assert code == 2
    assert err == (
        f"wt: error: {path} at $.meta.upstream.source: the recorded upstream has redacted parts "
        "(credentials are never written): give --against URL or -- COMMAND\n"
    )


def test_unreachable_upstream_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at --against: exit 2 naming the upstream, no report."""
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    code = main(["verify", str(universe_file(tmp_path)), "--against", url])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith(f"wt: error: upstream 'upstream' ({url}) cannot be reached at")


def test_a_command_that_cannot_start_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-- COMMAND naming no program: exit 2 naming it."""
    code, err = run(capsys, str(universe_file(tmp_path)), "--", str(tmp_path / "no-such-server"))
    assert code == 2
    assert "cannot start" in err and "no-such-server" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give at least one universe file"),
        (
            ["U", "--compare-tool", "lookup"],
            "--compare-tool 'lookup': expected TOOL=shape or TOOL=value",
        ),
        (["U", "--against", "crm.internal"], "--against 'crm.internal': expected an http(s) URL"),
        (
            ["U", "--against", "http://x/mcp", "--", "node"],
            "give --against URL or -- COMMAND, not both",
        ),
        (["U", "--"], "no command after --"),
        (["U", "--timeout", "0"], "--timeout must be positive"),
        (["U", "--bogus"], "not a universe or option: --bogus"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Each usage error is one line on stderr and exit 2."""
    path = str(universe_file(tmp_path))
    code, err = run(capsys, *[path if word == "U" else word for word in argv])
    assert code == 2
    assert err.startswith("wt: error: <command line>: " + message), err


def test_a_bad_universe_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The universe is loaded (and checked) before any upstream is contacted."""
    path = tmp_path / "bad.universe.json"
    path.write_text('{"windtunnel_universe": 1, "tools": "none"}')
    code, err = run(capsys, str(path), "--against", "http://127.0.0.1:9/mcp")
    assert code == 2
    assert err.startswith(f"wt: error: {path}")
