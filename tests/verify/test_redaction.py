"""`wt verify` redacts as `wt record` does: a call whose arguments hold a placeholder is not
re-sent, live answers are compared and written redacted, no secret reaches stdout or the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.record.sdk_upstream import SECRET
from tests.record.upstreams import SDK_UPSTREAM
from tests.verify.recorded import record
from windtunnel.cli.main import main
from windtunnel.record import RedactionRules

pytestmark = pytest.mark.timeout(120)

RULE = "regex:sk-live-[0-9a-f]+"


async def token_session(client: object) -> None:
    await client.call_tool("issue_token", {"user": "ana"})  # type: ignore[attr-defined]
    await client.call_tool("use_token", {"api_key": SECRET})  # type: ignore[attr-defined]


def test_redacted_values_stay_redacted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue_token is re-sent (--allow) and its live secret compared and written as a
    placeholder; use_token, whose recorded argument is a placeholder, is skipped."""
    path = record(
        SDK_UPSTREAM,
        token_session,
        tmp_path / "tokens.universe.json",
        name="tokens",
        redact=RedactionRules(patterns=["sk-live-[0-9a-f]+"]),
    )
    assert SECRET not in path.read_text()
    argv = ["verify", str(path), "--format", "json", "--compare", "value", "--redact", RULE]
    code = main([*argv, "--allow", "issue_token", "--allow", "use_token", "--update"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document = json.loads(captured.out)
    (report,) = document["universes"]
    assert report["findings"] == []
    assert [(c["tool"], c["resent"], c.get("reason")) for c in report["calls"]] == [
        ("issue_token", True, None),
        ("use_token", False, "its arguments hold a redacted value"),
    ]
    written = path.read_text()
    assert SECRET not in captured.out + captured.err + written
    recordings = json.loads(written)["recordings"]
    assert recordings[0]["result"]["structuredContent"] == {
        "user": "ana",
        "api_key": "[REDACTED:1]",
    }
    assert recordings[1]["args"] == {"api_key": "[REDACTED:1]"}
