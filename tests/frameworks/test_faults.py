"""Injected faults as agent frameworks meet them: pydantic-ai and the OpenAI Agents SDK, each in
its own venv with its own scripted model, run by `wt run` as command agents on a pack whose
scenarios fault the first `client_lookup` (a JSON-RPC error, an `isError` result, no answer).

Pinned: exactly what each framework put before its model for the faulted call and for the retry
that follows, and Wind Tunnel's side (the evidence in the call log, the retry policy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.processes import WT
from tests.thirdparty import thirdparty_python

from .harness import CLIENT, CRM

AGENTS = Path(__file__).parent / "agents"
RUN_DEADLINE_S = 240

FAULTS = {
    "error": "client_lookup#1=error:-32000:crm down",
    "is_error": "client_lookup#1=is_error:busy, try again",
    "timeout": "client_lookup#1=timeout",
}

SCENARIO = """
[[scenario]]
name = "{name}"
task = "Who is Bluewing Logistics?"
upstreams = {{ crm = "{crm}" }}
faults = ["{fault}"]
[[scenario.policies]]
kind = "retried_after_fault"
"""


async def run_pack(framework: str, agent: str, tmp_path: Path) -> dict[str, Any]:
    """`wt run` over the three faulted scenarios with the framework's agent; by scenario, the
    full trace as written."""
    python = thirdparty_python(framework)
    pack = tmp_path / "pack.toml"
    head = (
        f'[pack]\nname = "{framework}-faults"\ntimeout_s = 120\n'
        f'[agent]\nkind = "command"\ncommand = ["{python}", "{AGENTS / agent}"]\n'
    )
    scenarios = "".join(
        SCENARIO.format(name=name, crm=CRM, fault=fault) for name, fault in FAULTS.items()
    )
    pack.write_text(head + scenarios)
    out = tmp_path / "out"
    with trio.fail_after(RUN_DEADLINE_S):
        done = await trio.run_process(
            [*WT, "run", str(pack), "-o", str(out), "--progress", "plain"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    traces = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        traces[row["scenario"]] = json.loads((out / row["trace_file"]).read_text())
    return traces


def assert_wind_tunnel_side(traces: dict[str, Any]) -> None:
    """Each unit passed: its first call got the declared fault, the second was the lookup."""
    for name, trace in traces.items():
        assert trace["status"] == "passed", (name, trace["verdicts"])
        first, second = trace["mcp_calls"]
        assert first["extra"]["injected_fault"]["id"] == FAULTS[name]
        assert "injected_fault" not in second["extra"]
        assert second["result"] == CLIENT
        assert trace["faults"] == [{"fault": FAULTS[name], "injected": 1}]


async def test_pydantic_ai_meets_each_fault(tmp_path: Path) -> None:
    """pydantic-ai hands its model each fault as a tool return marked `retried` whose content
    is the fault's text (the `isError` text, the JSON-RPC error's message, the client's own
    timeout), and the retry returns the recorded client."""
    traces = await run_pack("fw-pydantic-ai", "pydantic_ai_fault_agent.py", tmp_path)
    seen = {name: json.loads(trace["output"]) for name, trace in traces.items()}
    assert_wind_tunnel_side(traces)
    success = {"outcome": "success", "content": CLIENT}
    assert seen == {
        "is_error": [{"outcome": "retried", "content": "busy, try again"}, success],
        "error": [{"outcome": "retried", "content": "crm down"}, success],
        "timeout": [{"outcome": "retried", "content": "Request 'tools/call' timed out"}, success],
    }


async def test_openai_agents_meets_each_fault(tmp_path: Path) -> None:
    """The OpenAI Agents SDK hands its model an `isError` result's text as it is, but a
    JSON-RPC error and its own timeout both as one generic sentence (the error's message is
    not shown to the model); the retry's output is the recorded client as text."""
    traces = await run_pack("fw-openai-agents", "openai_agents_fault_agent.py", tmp_path)
    seen = {name: json.loads(trace["output"]) for name, trace in traces.items()}
    assert_wind_tunnel_side(traces)
    client_text = [{"type": "input_text", "text": json.dumps(CLIENT, sort_keys=True)}]
    generic = "An error occurred while running the tool. Please try again."
    assert seen == {
        "is_error": [[{"type": "input_text", "text": "busy, try again"}], client_text],
        "error": [generic, client_text],
        "timeout": [generic, client_text],
    }


pytestmark = pytest.mark.timeout(RUN_DEADLINE_S + 60)
