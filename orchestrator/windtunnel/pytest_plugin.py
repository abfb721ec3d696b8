"""Pytest plugin: hermetic recorded upstreams for agent test suites, in one line.

    @pytest.mark.windtunnel("tests/fixtures/crm.universe.json")
    def test_agent_finds_the_overdue_invoice(windtunnel_server):
        answer = my_agent.run("Which invoice is overdue?", mcp_url=windtunnel_server.url)
        assert "INV-7" in answer

The server runs on loopback for the length of the test, in a background thread (so sync, asyncio
and Trio tests all work). A test whose agent left the recording fails with the divergences listed,
unless it says `@pytest.mark.windtunnel(..., expect_divergence=True)`. `windtunnel_serve(path)`
serves more universes (several upstreams) from inside a test under the same rule.

Registered under the entry point name `windtunnel`; every fixture and marker is `windtunnel*`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from .canonical import canonical_json
from .mcp.recorded import RecordedMCPServer
from .mcp.spi import MCPServer
from .mcp.threaded import serve_in_thread
from .miss_answers import SynthesizeHook
from .record.modes import choose_record_mode

__all__ = ["Served"]

_SERVED_KEY = pytest.StashKey[list["Served"]]()


class Served:
    """A universe served for one test: `url`, `call_log()`, `divergences()`, `server`."""

    def __init__(self, server: MCPServer, expect_divergence: bool) -> None:
        self.server = server
        self.expect_divergence = expect_divergence

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def name(self) -> str:
        return self.server.name

    def call_log(self) -> list[Any]:
        return self.server.call_log()

    def divergences(self) -> list[dict[str, Any]]:
        return [c.divergence for c in self.server.call_log() if c.divergence is not None]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "windtunnel(universe, *, expect_divergence=False, name=None, synthesize=None, "
        "record_mode=None, upstream=None): serve a recorded universe to this test as "
        "`windtunnel_server` (record_mode, else $WT_RECORD_MODE: none, once, new_episodes, all)",
    )


@pytest.fixture
def windtunnel_serve(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., Served]]:
    """Factory: `windtunnel_serve(path, *, name=None, expect_divergence=False, synthesize=None,
    record_mode=None, upstream=None)`; the record mode is `record_mode`, else `WT_RECORD_MODE`,
    else `none`; `upstream` (a URL or a command) is the live server, else the universe's own."""
    served: list[Served] = []
    request.node.stash[_SERVED_KEY] = served
    with ExitStack() as stack:

        def serve(
            universe: str | os.PathLike[str],
            *,
            name: str | None = None,
            expect_divergence: bool = False,
            synthesize: SynthesizeHook | None = None,
            record_mode: str | None = None,
            upstream: str | list[str] | None = None,
        ) -> Served:
            mode = choose_record_mode(record_mode, where="windtunnel_serve(record_mode=...)")
            server: MCPServer
            if mode == "none":
                server = RecordedMCPServer(universe, name=name, synthesize=synthesize)
            else:
                from .record.mode_servers import server_for_mode

                server = server_for_mode(
                    universe, mode=mode, upstream=upstream, name=name, synthesize=synthesize
                )
            stack.enter_context(serve_in_thread(server))
            handle = Served(server, expect_divergence)
            served.append(handle)
            return handle

        yield serve


@pytest.fixture
def windtunnel_server(
    request: pytest.FixtureRequest, windtunnel_serve: Callable[..., Served]
) -> Served:
    """The universe named by this test's `@pytest.mark.windtunnel(...)`, served on loopback."""
    marker = request.node.get_closest_marker("windtunnel")
    if marker is None or not marker.args:
        pytest.fail("windtunnel_server needs @pytest.mark.windtunnel('path/to/x.universe.json')")
    return windtunnel_serve(marker.args[0], **marker.kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    result = yield
    unexpected = [
        (handle.name, divergence)
        for handle in item.stash.get(_SERVED_KEY, [])
        if not handle.expect_divergence
        for divergence in handle.divergences()
    ]
    if unexpected:
        lines = [
            f"  {name}: {d['tool']}({canonical_json(d['args'])}) -> {d['reason']}"
            f" (policy {d['policy']}, nearest {d['nearest']})"
            for name, d in unexpected
        ]
        pytest.fail(
            f"the agent left the recording ({len(unexpected)} divergence(s)):\n"
            + "\n".join(lines)
            + "\nmark the test windtunnel(..., expect_divergence=True) if this is intended",
            pytrace=False,
        )
    return result
