"""A pydantic-ai agent under `wt run`, both ways a pack can name it: a `command` agent (its own
venv's interpreter, the upstreams from `$WT_MCP_CONFIG`) and a `python` agent (an asyncio
callable, loaded by a `wt run` installed in the framework's venv, as a user's project would)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import trio

from tests.thirdparty import thirdparty_python

from .harness import BILLING, CRM

AGENTS = Path(__file__).parent / "agents"
RUN_DEADLINE_S = 240

PACK = """\
[pack]
name = "frameworks"
timeout_s = 120

[agent]
{agent}

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


@pytest.mark.parametrize("kind", ["command", "python"])
async def test_pydantic_ai_agent_under_wt_run(kind: str, tmp_path: Path) -> None:
    """The agent reaches both upstreams through the pack's `mcpServers`, stays inside the
    recording and passes; the trace holds its calls and its answer."""
    python = thirdparty_python("fw-pydantic-ai")
    if kind == "command":
        script = AGENTS / "pydantic_ai_agent.py"
        agent = f'kind = "command"\ncommand = ["{python}", "{script}"]'
    else:
        agent = 'kind = "python"\ncallable = "pydantic_ai_agent:support_agent"'
    pack = tmp_path / "pack.toml"
    pack.write_text(PACK.format(agent=agent, crm=CRM, billing=BILLING))
    out = tmp_path / "out"
    with trio.fail_after(RUN_DEADLINE_S):
        done = await trio.run_process(
            [str(python), "-m", "windtunnel", "run", str(pack), "-o", str(out)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, "PYTHONPATH": str(AGENTS)},
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    (line,) = (out / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert (result["status"], result["output"].strip()) == (
        "passed",
        "ops@bluewing.example: charge refunded",
    )
    trace = json.loads((out / result["trace_file"]).read_text())
    # The model asks for both lookups in one turn and pydantic-ai runs them concurrently.
    calls = sorted((c["upstream"], c["tool_name"], c["args"]) for c in trace["mcp_calls"])
    assert calls == [
        ("billing", "charge_lookup", {"charge_id": "ch_881"}),
        ("crm", "client_lookup", {"query": "Bluewing Logistics"}),
    ]
