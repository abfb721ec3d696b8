"""Arize Phoenix (`phoenix serve`, in its own venv: tests/requirements/phoenix.txt) receives a
`wt run`'s export: the replay's spans and the unit's evaluations sit inside the trace of a
pydantic-ai agent whose own OpenTelemetry instrumentation is on, as a team would see it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.processes import WT
from tests.thirdparty import thirdparty_python

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "frameworks" / "data"
AGENT = Path(__file__).parent / "agents" / "traced_pydantic_ai_agent.py"
PHOENIX_START_S = 600
"""Phoenix migrates its database on first start: minutes on a loaded two-core machine."""

PACK = """\
[pack]
name = "phoenix"
timeout_s = 180

[agent]
kind = "command"
command = ["{python}", "{agent}"]

[[scenario]]
name = "refund"
task = "Was charge ch_881 of Bluewing Logistics refunded?"
upstreams = {{ crm = "{crm}", billing = "{billing}" }}

[[scenario.policies]]
kind = "no_divergence"
[[scenario.policies]]
kind = "required_call"
tool = "charge_lookup"
upstream = "billing"
args = {{ charge_id = "ch_881" }}

[[scenario.scorers]]
kind = "contains"
text = "ops@bluewing.example: charge refunded"
"""


def _free_port() -> int:
    # `phoenix serve` takes port numbers and reports no port it picked: the OS picks them here.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def phoenix_serve(python: Path, workdir: Path) -> Iterator[str]:
    """`phoenix serve` on loopback ports, until it says it is running; its base URL."""
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = workdir / "phoenix.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(python.parent / "phoenix"), "serve"], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        deadline = time.monotonic() + PHOENIX_START_S
        while b"Uvicorn running" not in log.read_bytes():
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "phoenix did not start"
            time.sleep(0.5)  # polling its log for the line that says it listens
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def spans(base: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{base}/v1/projects/default/spans?limit=1000") as answer:
        data: list[dict[str, Any]] = json.load(answer)["data"]
        return data


@pytest.mark.timeout(1200)
def test_phoenix_shows_the_replay_inside_the_agents_own_trace(tmp_path: Path) -> None:
    """One trace in Phoenix: Wind Tunnel's unit span, the agent's `invoke_agent` under it (the
    agent took `TRACEPARENT`), and under each of the agent's tool calls the replay's
    `tools/call` server span (the agent's MCP client sent `_meta.traceparent`); the unit's span
    carries a `gen_ai.evaluation.result` event per policy and scorer."""
    python = thirdparty_python("phoenix")
    pack = tmp_path / "pack.toml"
    pack.write_text(
        PACK.format(
            python=python, agent=AGENT, crm=DATA / "crm.universe.json",
            billing=DATA / "billing.universe.json",
        )
    )  # fmt: skip
    workdir = tmp_path / "phoenix"
    workdir.mkdir()
    with phoenix_serve(python, workdir) as base:
        env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
        # Phoenix reads traces only: the traces endpoint alone is configured, for both.
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{base}/v1/traces"
        out = tmp_path / "run"
        done = subprocess.run(
            [*WT, "run", str(pack), "-o", str(out)],
            capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        result = json.loads((out / "results.jsonl").read_text())
        deadline = time.monotonic() + 120
        while True:
            found = spans(base)
            names = [s["name"] for s in found]
            if (
                names.count("tools/call client_lookup") + names.count("tools/call charge_lookup")
                >= 4
                and "scenario refund" in names
                and "invoke_agent agent" in names
            ):
                break
            assert time.monotonic() < deadline, names
            time.sleep(0.5)  # Phoenix stores what it received in the background
    by_id = {s["context"]["span_id"]: s for s in found}
    (unit,) = [s for s in found if s["name"] == "scenario refund"]
    assert unit["parent_id"] is None
    trace_id = unit["context"]["trace_id"]
    assert {s["context"]["trace_id"] for s in found} == {trace_id}
    assert unit["attributes"]["windtunnel.status"] == result["status"] == "passed"
    (agent,) = [s for s in found if s["name"] == "invoke_agent agent"]
    assert agent["parent_id"] == unit["context"]["span_id"]
    replayed = [
        s for s in found
        if s["name"].startswith("tools/call ") and "windtunnel.upstream" in s["attributes"]
    ]  # fmt: skip
    assert len(replayed) == 2
    for span in replayed:
        tool = span["attributes"]["gen_ai.tool.name"]
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        # Up the chain: the agent's MCP client span, then the agent's own execute_tool span.
        chain = []
        parent = span["parent_id"]
        while parent is not None:
            chain.append(by_id[parent]["name"])
            parent = by_id[parent]["parent_id"]
        assert chain[0] == f"MCP send tools/call {tool}"
        assert "invoke_agent agent" in chain and chain[-1] == "scenario refund"
        assert any(name.startswith("execute_tool ") and name.endswith(tool) for name in chain)
    evaluations = [e for e in unit["events"] if e["name"] == "gen_ai.evaluation.result"]
    assert [
        (e["attributes"]["gen_ai.evaluation.name"],
         e["attributes"]["gen_ai.evaluation.score.label"])
        for e in evaluations
    ] == [(v["name"], "pass") for v in result["verdicts"]] + [
        (s["name"], "pass") for s in result["scores"]
    ]  # fmt: skip
