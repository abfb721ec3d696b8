"""A stdio session answered without the SDK (`_stdio_lite`) gets the SDK's bytes, line by line.

Every session is run twice over real pipes: as `wt serve --stdio` serves it (SDK-free until a
line needs the SDK, then handed over) and through the SDK's session alone (`--no-fast-path`);
every reply must be byte-identical, and the call logs the same. `test_sdk_range` runs this
file under the lowest SDK of the supported range too.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import threading
from pathlib import Path
from typing import Any

import mcp_types
import pydantic_core
import pytest
import trio
from mcp_types import version as sdk_version

from tests.mcp.fast_path_cases import CALLS, UNIVERSE, call, synthesize, with_surface
from tests.mcp.stdio_session import (
    INITIALIZE,
    INITIALIZED,
    MODERN_META,
    lite_stdio_session,
    stdio_session,
)
from tests.mcp.test_stdio_fast_path import ping, run_script, script
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp import _lite_answers as lite
from windtunnel.mcp._stdio_lite import _warm_when_idle, lite_session

RICH_TOOLS = [
    {
        "name": "search",
        "title": "Search",
        "description": "Find things. é ✓",
        "input_schema": {
            "additionalProperties": False,
            "type": "object",
            "required": ["q"],
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {"q": {"type": "string", "default": None}, "n": True},
        },
        "output_schema": {"properties": {"hits": {"type": "array"}}, "type": "object"},
        "annotations": {"title": "S", "readOnlyHint": True, "destructiveHint": False},
    },
    {"name": "bare", "input_schema": {"type": "object"}},
]
"""Tools with every key answered without the SDK, in orders its re-dump changes."""

CAPABILITIES = [{}, {"roots": {"listChanged": True}}, {"sampling": {}, "elicitation": {}}]
INFO = MODERN_META["io.modelcontextprotocol/clientInfo"]


def plain_session(era: str, variant: int) -> list[tuple[Any, bool]]:
    """(message, whether it is answered): a session of plain lines only."""
    lines: list[tuple[Any, bool]] = []
    if era == "legacy":
        requested = ["2025-11-25", "2024-11-05", "1999-01-01"][variant]
        init_params = {
            "protocolVersion": requested,
            "capabilities": CAPABILITIES[variant],
            "clientInfo": {"name": "test", "version": "1", "title": "T"},
        }
        meta = None
        listing = [
            (ping("p"), True),
            ({"jsonrpc": "2.0", "id": "tl", "method": "tools/list"}, True),
            ({"jsonrpc": "2.0", "id": "tl2", "method": "tools/list", "params": {}}, True),
        ]
        lines += [({**INITIALIZE, "params": init_params}, True)]
        # The SDK serves requests once `initialize` is answered, before the client's
        # `notifications/initialized` too.
        if variant == 2:
            lines += [*listing, (INITIALIZED, False)]
        else:
            lines += [(INITIALIZED, False), *listing]
    else:
        meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": CAPABILITIES[variant]}
        if variant == 1:
            meta.pop("io.modelcontextprotocol/clientInfo")
        params = {"_meta": meta}
        lines += [
            ({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": params}, True)
        ]
        lines += [({"jsonrpc": "2.0", "id": "tl", "method": "tools/list", "params": params}, True)]
        lines += [({**ping("p"), "params": params}, True)]
    lines += [(call(n, tool, args, meta), True) for n, (tool, args) in enumerate(CALLS)]
    lines += [(call("s", "search", {"q": "x"}, meta), True)]
    if era == "legacy":  # a second handshake, then a call at the version it negotiated
        again = {**INITIALIZE, "id": "again"}
        lines += [(again, True), (call("after", "motd", {}), True)]
    return lines


def world(tmp_path: Path, *, surface: bool = False) -> Path:
    universe = {**UNIVERSE, "tools": [*UNIVERSE["tools"], *RICH_TOOLS]}
    path = tmp_path / "lite.universe.json"
    path.write_text(json.dumps(with_surface(universe) if surface else universe))
    return path


def server_of(path: Path) -> RecordedMCPServer:
    server = RecordedMCPServer(path, synthesize=synthesize)
    server.log_events = False
    return server


async def both_ways(
    path: Path, lines: list[tuple[Any, bool]]
) -> tuple[list[bytes], list[bytes], bool | None]:
    """The replies to `lines` without the SDK (as `wt serve --stdio`) and with it alone; the
    call logs must be the same. Also whether the first was handed over to the SDK."""
    lite_server, sdk_server = server_of(path), server_of(path)
    async with lite_stdio_session(lite_server) as (client, outcome):
        lite_replies = await run_script(client, lines)
    async with stdio_session(sdk_server, fast=False) as sdk_client:
        sdk_replies = await run_script(sdk_client, lines)
    lite_log, sdk_log = lite_server.call_log(), sdk_server.call_log()
    assert len(lite_log) == len(sdk_log)
    assert all(a.same_call(b) for a, b in zip(lite_log, sdk_log, strict=True))
    return lite_replies, sdk_replies, outcome.handed_over


def assert_same(lines: list[tuple[Any, bool]], got: list[bytes], want: list[bytes]) -> None:
    sent = [message for message, answered in lines if answered]
    assert len(got) == len(want) == len(sent)
    for message, mine, theirs in zip(sent, got, want, strict=True):
        assert mine == theirs, message


@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_plain_session_gets_the_sdks_bytes_without_the_sdk(
    tmp_path: Path, era: str, variant: int
) -> None:
    """Every message of a plain session, both eras (versions negotiated, capabilities, client
    identities, both orders of a schema, hits, misses and every result mapping), is answered
    as the SDK answers it, and the session is never handed over."""
    lines = plain_session(era, variant)
    with trio.fail_after(60):
        got, want, handed_over = await both_ways(world(tmp_path), lines)
    assert_same(lines, got, want)
    assert handed_over is False


@pytest.mark.parametrize("opening", [False, True])
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_sdk_takes_over_exactly_where_it_is_needed(
    tmp_path: Path, era: str, opening: bool
) -> None:
    """`test_stdio_fast_path`'s script (lines only the SDK answers: bad ids, batches, lines
    that are not JSON, other methods, refused envelopes, a handshake in the wrong era), sent
    from the first line or after a plain opening answered without the SDK: every reply after
    the hand-over is the SDK's own, as if it had served the session from the start."""
    lines = script(era)
    if opening:
        lines = plain_session(era, 0)[:4] + lines
    with trio.fail_after(60):
        got, want, handed_over = await both_ways(world(tmp_path), lines)
    assert_same(lines, got, want)
    assert handed_over is True


async def test_a_session_handed_over_keeps_its_negotiated_version(tmp_path: Path) -> None:
    """After an `initialize` at 2024-11-05 answered without the SDK, the SDK's connection holds
    that version (a second `initialize` is refused no differently, a call still served)."""
    init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}}
    lines: list[tuple[Any, bool]] = [
        (init, True),
        (INITIALIZED, False),
        ({"jsonrpc": "2.0", "id": "r", "method": "resources/list"}, True),  # the hand-over
        (call("c", "motd", {}), True),
        (call("m", "motd", {}, MODERN_META), True),  # enveloped, on a handshake connection
        (
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            False,
        ),
        (call("p", "motd", {}, {"progressToken": 1}), True),
    ]
    with trio.fail_after(60):
        got, want, handed_over = await both_ways(world(tmp_path), lines)
    assert_same(lines, got, want)
    assert handed_over is True


def test_only_a_plain_server_starts_without_the_sdk(tmp_path: Path) -> None:
    """A recorded identity or surface, server messages, faults or `--no-fast-path`: the SDK
    serves from the start."""
    assert lite_session(server_of(world(tmp_path))) is not None
    assert lite_session(server_of(world(tmp_path, surface=True))) is None
    faulted = server_of(world(tmp_path))
    faulted.set_faults(["motd=error"])
    assert lite_session(faulted) is None
    slow = server_of(world(tmp_path))
    slow.fast_path = False
    assert lite_session(slow) is None
    messaging = dict(UNIVERSE)
    messaging["recordings"] = [
        *UNIVERSE["recordings"],
        {
            "tool_name": "motd",
            "args": {"x": 1},
            "result": "hi",
            "server_messages": [{"method": "notifications/message", "params": {}}],
        },
    ]
    path = tmp_path / "messaging.universe.json"
    path.write_text(json.dumps(messaging))
    assert lite_session(server_of(path)) is None
    odd = dict(UNIVERSE)
    odd["tools"] = [{"name": "icons", "icons": [{"src": "https://example.test/i.png"}]}]
    path.write_text(json.dumps({**odd, "recordings": []}))
    assert lite_session(server_of(path)) is None  # a listing only the SDK writes


def test_a_handshake_era_recording_starts_with_the_sdk(tmp_path: Path) -> None:
    """Recorded from a handshake-era server and served under Wind Tunnel's own identity
    (`--own-identity`): the SDK serves from the start, in the handshake era only
    (`_protocol_era`); with `both_eras`, or recorded at 2026-07-28, the plain start stays."""
    path = tmp_path / "era.universe.json"
    for version, plain in (("2025-06-18", False), ("2026-07-28", True)):
        universe = {**UNIVERSE, "server": {"protocol_version": version}}
        path.write_text(json.dumps(universe))
        for both_eras in (False, True):
            server = RecordedMCPServer(
                path, synthesize=synthesize, own_identity=True, both_eras=both_eras
            )
            assert (lite_session(server) is not None) == (plain or both_eras), (version, both_eras)


def test_the_sdk_constants_copied_are_the_sdks() -> None:
    """What `_lite_answers` copies from the SDK, and the version it reads without importing it
    (this file passes under it: `test_sdk_range` runs it under the lowest of the range)."""
    assert lite.installed_sdk() == importlib.metadata.version("mcp")
    assert lite.installed_sdk() in lite.CHECKED_SDKS
    assert lite.HANDSHAKE_VERSIONS == sdk_version.HANDSHAKE_PROTOCOL_VERSIONS
    assert lite.LATEST_HANDSHAKE_VERSION == sdk_version.LATEST_HANDSHAKE_VERSION
    assert (lite.MODERN_VERSION,) == sdk_version.MODERN_PROTOCOL_VERSIONS
    assert lite.PROTOCOL_VERSION_KEY == mcp_types.PROTOCOL_VERSION_META_KEY
    assert lite.CLIENT_INFO_KEY == mcp_types.CLIENT_INFO_META_KEY
    assert lite.CLIENT_CAPABILITIES_KEY == mcp_types.CLIENT_CAPABILITIES_META_KEY
    assert lite.SERVER_INFO_KEY == mcp_types.SERVER_INFO_META_KEY


@pytest.mark.parametrize(
    "value",
    [
        '\x00\x01\x1f\x7f\u2028\u2029é✓😀</script>"\\\b\f\n\r\t',
        [2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, True, False, None],
        {"a": {"b": [{}, [], ""]}, "": "x"},
    ],
)
def test_json_is_written_as_pydantic_writes_it(value: Any) -> None:
    assert lite.wire_json(value) == pydantic_core.to_json(value)


@pytest.mark.parametrize("value", [1.5, {"a": [0.1]}, "\ud800", {1: "a"}, (1, 2)])
def test_json_that_might_differ_is_left_to_the_sdk(value: Any) -> None:
    assert lite.wire_json(value) is None


def test_the_sdk_loads_in_the_background_once_the_client_is_idle() -> None:
    """A line waiting: no warm-up. None within `WARM_AFTER_IDLE_S`: the SDK's modules load in a
    thread of their own (here already loaded: the thread only finds them)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, b"{}\n")
        assert _warm_when_idle(read_fd) is False
        os.read(read_fd, 16)
        assert _warm_when_idle(read_fd) is True
        warming = [t for t in threading.enumerate() if t.name == "windtunnel-sdk-warm"]
        for thread in warming:
            thread.join(timeout=30)
        assert all(not thread.is_alive() for thread in warming)
    finally:
        os.close(read_fd)
        os.close(write_fd)
