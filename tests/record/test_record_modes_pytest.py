"""Record modes in the pytest plugin, against a live SDK server: `record_mode="once"` records a
missing universe and the next test replays it; `WT_RECORD_MODE=all` records it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.verify.recorded import drifting_command
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(240)

USER_TESTS = """
import asyncio

import mcp
import pytest

UNIVERSE = {universe!r}
LIVE = {live!r}
GONE = {gone!r}


def ask(url, query):
    async def go():
        async with mcp.Client(url, mode="legacy") as client:
            return await client.call_tool("lookup", {{"query": query}})
    return asyncio.run(go()).structured_content


@pytest.mark.windtunnel(UNIVERSE, record_mode="once", upstream=LIVE)
def test_a_records(windtunnel_server):
    assert ask(windtunnel_server.url, "ana") == {{"name": "Ana", "tier": 2}}


@pytest.mark.windtunnel(UNIVERSE, record_mode="once", upstream=GONE)
def test_b_replays(windtunnel_server):
    assert ask(windtunnel_server.url, "ana") == {{"name": "Ana", "tier": 2}}
    assert windtunnel_server.divergences() == []


@pytest.mark.windtunnel(UNIVERSE, upstream=LIVE)
def test_c_mode_from_the_environment(windtunnel_server):
    assert ask(windtunnel_server.url, "bob") == {{"name": "Bob", "tier": 2}}
"""


def test_once_and_all_from_pytest(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run 1: a and b (once: recorded, then replayed without the live server); c under no mode
    replays and diverges. Run 2 with WT_RECORD_MODE=all: c records the universe again."""
    universe = tmp_path / "crm.universe.json"
    pytester.makepyfile(
        test_user=USER_TESTS.format(
            universe=str(universe),
            live=drifting_command("v1", tmp_path / "sent.log"),
            gone=[str(tmp_path / "no-such-server")],
        )
    )
    monkeypatch.delenv("WT_RECORD_MODE", raising=False)
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", timeout=200)
    first.assert_outcomes(passed=2, failed=1)
    first.stdout.fnmatch_lines(["*test_c_mode_from_the_environment FAILED*"])
    assert [r.args for r in load_universe(universe).recordings] == [{"query": "ana"}]

    monkeypatch.setenv("WT_RECORD_MODE", "all")
    second = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-v", "-k", "mode_from_the_environment", timeout=200
    )
    second.assert_outcomes(passed=1)
    assert [r.args for r in load_universe(universe).recordings] == [{"query": "bob"}]
