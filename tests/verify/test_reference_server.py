"""`wt verify` against two real releases of `@modelcontextprotocol/server-everything` from npm
(2026.1.26, installed under the alias `server-everything-2026-1`, and the current 2026.8.31):
what changed between them is reported exactly, and what is re-sent follows the live server's
own read-only annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest

from tests.record.test_reference_servers import EVERYTHING, EVERYTHING_COMMAND
from tests.verify.recorded import record
from windtunnel.cli.main import main

pytestmark = [pytest.mark.node, pytest.mark.timeout(180)]

OLD_EVERYTHING = EVERYTHING.parents[3] / "server-everything-2026-1" / "dist" / "index.js"
OLD_COMMAND = ["node", str(OLD_EVERYTHING), "stdio"]

ANNOTATED = [
    ("echo", True),
    ("get-annotated-message", True),
    ("get-env", False),
    ("get-resource-links", True),
    ("get-resource-reference", True),
    ("get-structured-content", True),
    ("get-sum", True),
    ("get-tiny-image", False),
    ("gzip-file-as-resource", True),
    ("toggle-simulated-logging", False),
    ("toggle-subscriber-updates", False),
    ("trigger-long-running-operation", True),
    ("simulate-research-query", True),
]
"""The tools whose annotations 2026.8.31 added (all of them), and whether it also dropped
`additionalProperties: false` from the tool's input schema (every tool with parameters)."""

NOT_READ_ONLY = "not annotated readOnlyHint: true (re-send it with --allow TOOL)"


@pytest.fixture(scope="module", autouse=True)
def _both_installed() -> None:
    for script in (EVERYTHING, OLD_EVERYTHING):
        if not script.is_file():
            pytest.fail(f"{script} missing: run scripts/test (it runs npm install in tests/node)")


async def everything_session(client: mcp.Client) -> None:
    await client.list_tools()
    await client.list_resources()
    await client.list_prompts()
    await client.call_tool("echo", {"message": "hi"})
    await client.call_tool("get-sum", {"a": 1, "b": 2})
    await client.call_tool("get-structured-content", {"location": "Chicago"})
    await client.call_tool("toggle-simulated-logging", {})


def verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", "--format", "json", *argv])
    captured = capsys.readouterr()
    assert captured.out, captured.err
    document: dict[str, Any] = json.loads(captured.out)
    return code, document["universes"][0]


def test_old_release_verified_against_the_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recorded from 2026.1.26, verified against 2026.8.31 by value: each tool's new annotations
    and opened input schema are informational, and the three calls the new release annotates
    read-only are re-sent and answer exactly as recorded."""
    path = record(OLD_COMMAND, everything_session, tmp_path / "e.universe.json", name="everything")
    code, report = verify(capsys, str(path), "--compare", "value", "--", *EVERYTHING_COMMAND)
    expected = []
    for tool, opened in ANNOTATED:
        expected.append(("informational", "annotations_changed", f"tool {tool}"))
        if opened:
            expected.append(
                ("informational", "additional_properties_opened", f"tool {tool}: input")
            )
    assert code == 0
    assert [(f["severity"], f["kind"], f["subject"]) for f in report["findings"]] == expected
    assert [(c["tool"], c["resent"], c.get("reason")) for c in report["calls"]] == [
        ("echo", True, None),
        ("get-sum", True, None),
        ("get-structured-content", True, None),
        ("toggle-simulated-logging", False, NOT_READ_ONLY),
    ]


def test_new_release_verified_against_the_old_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other way (a rollback): the old release annotates nothing, so nothing is re-sent
    unless named with --allow; what was recorded as read-only does not count."""
    path = record(EVERYTHING_COMMAND, everything_session, tmp_path / "e.universe.json", name="e")
    code, report = verify(capsys, str(path), "--allow", "echo", "--", *OLD_COMMAND)
    assert code == 0
    assert {f["kind"] for f in report["findings"]} == {
        "annotations_changed",
        "additional_properties_closed",
    }
    assert [(c["tool"], c["resent"]) for c in report["calls"]] == [
        ("echo", True),
        ("get-sum", False),
        ("get-structured-content", False),
        ("toggle-simulated-logging", False),
    ]
