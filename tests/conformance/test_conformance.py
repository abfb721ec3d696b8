"""The yardstick of issue 25: the official MCP conformance suite, live, through `wt record`, and
against `wt serve` of what `wt record` wrote.

One module-wide run (about a minute) drives the suite's 32 server scenarios five times:

- **live**: against the reference "everything" server (`reference_server.py`, the `mcp` SDK);
- **record/http**: through `wt record` in front of it (HTTP agent side, HTTP upstream);
- **replay/http**: against `wt serve` of the universe that run wrote;
- **record/stdio**: through `wt record` with the same server as a stdio upstream;
- **replay/stdio**: against `wt serve` of that universe.

Per scenario the tests assert: the recording proxy passes every scenario the live server passes,
and so does the replay. What cannot pass yet is listed below by the capability it lacks, each a
strict xfail: the day the capability lands, its scenarios pass and the xfail flips the test, so the
list must shrink with the code. The line `conformance: live N/32, record N/32, replay N/32` is
printed at the end of the run.

Measured 2026-12-04 (about 35 s for all five runs): live 31/32; record 31/32 with the server over
HTTP and over stdio (over stdio 24/32 before the HTTP front carried the agent's session through);
replay 11/32 with a universe format that holds tools only, 24/32 with issue 25's format and its
serving (the `surface` branch), 31/32 since `wt serve` hands out sessions over HTTP and replays
server messages on the call's SSE stream (about 110 s on a loaded machine); what the replay
still lacks would be named in `_REPLAY_CAPABILITIES` (nothing now).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.suite import (
    SCENARIOS,
    listed_scenarios,
    require_suite,
    run_suite,
    score,
)
from tests.processes import WT

pytestmark = [pytest.mark.node, pytest.mark.timeout(300)]

REFERENCE = [sys.executable, str(Path(__file__).with_name("reference_server.py"))]

# -- what cannot pass yet, by the capability it lacks ----------------------------------------------

LIVE_GAPS = {
    "server-sse-polling": "the mcp SDK mints no priming event for protocol 2025-03-26 (SEP-1699)",
}
"""The reference server's own known gaps (the SDK's, not ours)."""

RECORD_STDIO_GAPS: dict[str, str] = {}
"""None since the HTTP front carries the agent's session through to a stdio upstream."""

_REPLAY_CAPABILITIES: dict[str, list[str]] = {}
REPLAY_GAPS = {
    scenario: capability
    for capability, scenarios in _REPLAY_CAPABILITIES.items()
    for scenario in scenarios
}
"""What `wt serve` of a recording cannot pass yet, by the capability it lacks."""


# -- the runs ----------------------------------------------------------------------------------


@dataclass
class Runs:
    live: dict[str, str]
    record_http: dict[str, str]
    replay_http: dict[str, str]
    record_stdio: dict[str, str]
    replay_stdio: dict[str, str]


@contextmanager
def running(command: list[str], *, stderr_to: Path, sigint: bool = False) -> Iterator[str]:
    """Start `command`, wait (30 s at most) for the URL it prints first; stop it after."""
    with open(stderr_to, "wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30.0)
        line = process.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http"):
            raise AssertionError(f"{command} printed no URL: {stderr_to.read_text()[-2000:]}")
        yield line
        if sigint:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 0, stderr_to.read_text()[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]


def _record_then_replay(
    tmp: Path, name: str, upstream: list[str]
) -> tuple[dict[str, str], dict[str, str]]:
    universe = tmp / f"{name}.universe.json"
    record = [
        *WT,
        "record",
        "--timeout",
        "5",
        "-o",
        str(universe),
        "--log",
        str(tmp / f"{name}.jsonl"),
    ]
    with running([*record, *upstream], stderr_to=tmp / f"record-{name}.err", sigint=True) as url:
        recorded = run_suite(url, tmp / f"record-{name}")
    with running([*WT, "serve", str(universe)], stderr_to=tmp / f"serve-{name}.err") as url:
        replayed = run_suite(url, tmp / f"replay-{name}")
    return recorded, replayed


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    require_suite()
    tmp = tmp_path_factory.mktemp("conformance")
    started = time.monotonic()
    with running([*REFERENCE, "http"], stderr_to=tmp / "reference.err") as live_url:
        live = run_suite(live_url, tmp / "live")
        record_http, replay_http = _record_then_replay(tmp, "http", [live_url])
    record_stdio, replay_stdio = _record_then_replay(tmp, "stdio", ["--", *REFERENCE, "stdio"])
    runs = Runs(live, record_http, replay_http, record_stdio, replay_stdio)
    _report(request.config, runs, time.monotonic() - started)
    return runs


def _report(config: pytest.Config, runs: Runs, seconds: float) -> None:
    total = len(SCENARIOS)
    line = (
        f"conformance: live {score(runs.live)}/{total}, "
        f"record {score(runs.record_http)}/{total}, replay {score(runs.replay_http)}/{total} "
        f"(stdio upstream: record {score(runs.record_stdio)}/{total}, "
        f"replay {score(runs.replay_stdio)}/{total}; {seconds:.0f} s)"
    )
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("\n" + line)
    path = os.environ.get("WT_CONFORMANCE_REPORT")
    if path:
        Path(path).write_text(line + "\n")


def _cases(gaps: dict[str, str]) -> list[object]:
    return [
        pytest.param(
            scenario,
            marks=pytest.mark.xfail(strict=True, reason=gaps[scenario]) if scenario in gaps else (),
            id=scenario,
        )
        for scenario in SCENARIOS
    ]


# -- the tests ---------------------------------------------------------------------------------


def test_the_suite_has_the_scenarios_we_count() -> None:
    """A new suite version with other scenarios must be looked at, not silently counted."""
    require_suite()
    assert listed_scenarios() == SCENARIOS


@pytest.mark.parametrize("scenario", _cases(LIVE_GAPS))
def test_the_reference_server_passes(runs: Runs, scenario: str) -> None:
    assert runs.live[scenario] == "pass"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recording_an_http_upstream_is_transparent(runs: Runs, scenario: str) -> None:
    """The proxy between the suite and the server changes no verdict, passing or not."""
    assert runs.record_http[scenario] == runs.live[scenario]


@pytest.mark.parametrize("scenario", _cases(RECORD_STDIO_GAPS))
def test_recording_a_stdio_upstream_passes_what_live_passes(runs: Runs, scenario: str) -> None:
    if runs.live[scenario] != "pass":
        pytest.skip("the live server does not pass it either")
    assert runs.record_stdio[scenario] == "pass"


@pytest.mark.parametrize("scenario", _cases(REPLAY_GAPS))
def test_the_replay_passes_what_live_passes(runs: Runs, scenario: str) -> None:
    if runs.live[scenario] != "pass":
        pytest.skip("the live server does not pass it either")
    assert runs.replay_http[scenario] == "pass"


@pytest.mark.parametrize("scenario", _cases({**REPLAY_GAPS, **RECORD_STDIO_GAPS}))
def test_the_replay_of_a_stdio_recording_passes_what_live_passes(runs: Runs, scenario: str) -> None:
    if runs.live[scenario] != "pass":
        pytest.skip("the live server does not pass it either")
    assert runs.replay_stdio[scenario] == "pass"
