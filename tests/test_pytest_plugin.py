"""The pytest plugin: `@pytest.mark.windtunnel(...)` + `windtunnel_server` in a user's suite."""

from __future__ import annotations

import pytest

from tests.cli.test_universe_commands import EXAMPLE
from tests.compat import COMPAT_UNIVERSE

USER_TESTS = f"""
import asyncio

import mcp
import pytest


def ask(url, tool, args):
    async def go():
        async with mcp.Client(url) as client:
            return await client.call_tool(tool, args)
    return asyncio.run(go())


@pytest.mark.windtunnel({str(COMPAT_UNIVERSE)!r})
def test_stays_inside(windtunnel_server):
    result = ask(windtunnel_server.url, "client_lookup", {{"query": "Bluewing Logistics"}})
    assert result.structured_content["name"] == "Bluewing Logistics"
    assert len(windtunnel_server.call_log()) == 1


@pytest.mark.windtunnel({str(COMPAT_UNIVERSE)!r})
def test_wanders_off(windtunnel_server):
    ask(windtunnel_server.url, "client_lookup", {{"query": "Bluewing"}})


@pytest.mark.windtunnel({str(COMPAT_UNIVERSE)!r}, expect_divergence=True)
def test_wanders_on_purpose(windtunnel_server):
    ask(windtunnel_server.url, "client_lookup", {{"query": "Bluewing"}})
    assert windtunnel_server.divergences()[0]["reason"] == "no_recorded_result"


def test_two_upstreams(windtunnel_serve):
    crm = windtunnel_serve({str(EXAMPLE)!r}, name="crm")
    compat = windtunnel_serve({str(COMPAT_UNIVERSE)!r}, name="compat")
    assert crm.url != compat.url
    ask(crm.url, "client_lookup", {{"query": "ACC-1042"}})
    ask(compat.url, "motd", {{}})
    assert [c.upstream for c in crm.call_log() + compat.call_log()] == ["crm", "compat"]
"""


def test_plugin_serves_and_fails_on_divergence(pytester: pytest.Pytester) -> None:
    """Hits pass; an unexpected divergence fails the test with the diff; expected ones pass."""
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", timeout=180)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_wanders_off FAILED*",
            "*the agent left the recording (1 divergence(s)):*",
            '*compat: client_lookup({"query":"Bluewing"}) -> no_recorded_result (policy fail_call, *',
        ]
    )


def test_plugin_needs_the_marker(pytester: pytest.Pytester) -> None:
    """Using windtunnel_server without the marker is a clear failure."""
    pytester.makepyfile(test_user="def test_x(windtunnel_server):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*windtunnel_server needs @pytest.mark.windtunnel*"])
