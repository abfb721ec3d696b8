"""A `wt run` whose agent leaves the recording with requests other than tool calls (issue 25):
an unrecorded `resources/read`, `prompts/get` and `completion/complete`, and a `tools/call`
during which the live client answers an elicitation otherwise than when recorded. Each is a
divergence everywhere a tool miss is: the call log, events, warnings, `no_divergence`, JUnit,
coverage, report.html and `wt diff`. The agent is an ordinary command agent on the official
Python SDK client (`request_agent.py`)."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.test_http_sessions import ELICIT_PARAMS, messaging_doc
from tests.processes import WT

pytestmark = pytest.mark.timeout(300)

AGENT = Path(__file__).with_name("request_agent.py")
UNRECORDED_URI = "test://<never>&recorded"
COMPLETION_ASKED = {
    "ref": {"type": "ref/prompt", "name": "with_args"},
    "argument": {"name": "arg1", "value": "zz"},
}


def write_pack(root: Path, style: str) -> Path:
    """A one-scenario pack: the request agent against the surface world, whose `echo`
    recording asks the client for a sampling and an elicitation."""
    (root / "world.universe.json").write_text(json.dumps(messaging_doc()))
    command = ["{python}", str(AGENT), "--mcp-config", "{mcp_config}", "--style", style]
    pack = root / "pack.toml"
    pack.write_text(
        "[pack]\nname = \"requests\"\ntimeout_s = 120\n\n"
        f"[agent]\nkind = \"command\"\ncommand = {json.dumps(command)}\n\n"
        "[[scenario]]\nname = \"surface\"\ntask = \"read, get, complete, echo\"\n"
        "upstreams = { world = \"world.universe.json\" }\n\n"
        "[[scenario.policies]]\nkind = \"no_divergence\"\n"
    )  # fmt: skip
    return pack


def wt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WT, *args], capture_output=True, text=True, timeout=240)


@dataclass
class Runs:
    stays: Path
    leaves: Path

    def trace(self, run: Path) -> dict[str, Any]:
        [row] = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
        trace: dict[str, Any] = json.loads((run / row["trace_file"]).read_text())
        return trace


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The same pack run twice: once staying inside the recording, once leaving it."""
    out: dict[str, Path] = {}
    for style, code in (("stays", 0), ("leaves", 1)):
        root = tmp_path_factory.mktemp(style)
        done = wt("run", str(write_pack(root, style)), "-o", str(root / "run"))
        assert done.returncode == code, done.stdout + done.stderr
        out[style] = root / "run"
    return Runs(**out)


def test_the_agent_sees_the_spec_errors_and_the_policy_answer(runs: Runs) -> None:
    """The agent got each request's JSON-RPC error and the tool's fail_call answer; staying
    inside, it got the recorded answers."""
    assert runs.trace(runs.leaves)["output"].splitlines() == [
        "read error -32002: Resource not found",
        "prompt error -32602: No recorded prompt 'with_args' with these arguments",
        "complete error -32602: No recorded completion for 'with_args'",
        "echo error: True",
    ]
    assert runs.trace(runs.stays)["output"].splitlines() == [
        "read: Hello, world",
        "prompt: a then b",
        "complete: ['alpha', 'also']",
        "echo error: False",
    ]


def test_every_request_divergence_is_in_the_call_log_events_and_warnings(runs: Runs) -> None:
    """trace.mcp_calls, the `universe_divergence` events and the trace's warnings hold each
    divergence with its method (a tool's has none) and evidence; no_divergence fails the unit
    naming each."""
    trace = runs.trace(runs.leaves)
    calls = trace["mcp_calls"]
    assert [(c.get("method", "tools/call"), c["tool_name"], c["args"]) for c in calls] == [
        ("resources/read", UNRECORDED_URI, {}),
        ("prompts/get", "with_args", {"arg1": "<z>"}),
        ("completion/complete", "with_args", COMPLETION_ASKED),
        ("tools/call", "echo", {"text": "hi"}),
    ]
    records = [c["extra"]["divergence"] for c in calls]
    requests = [
        {
            "method": method,
            "tool": target,
            "args": args,
            "reason": "no_recorded_result",
            "policy": "fail_call",
            "matched": None,
            "nearest": None,
        }
        for method, target, args in (
            ("resources/read", UNRECORDED_URI, {}),
            ("prompts/get", "with_args", {"arg1": "<z>"}),
            ("completion/complete", "with_args", COMPLETION_ASKED),
        )
    ]
    client = {
        "asked": {"method": "elicitation/create", "params": ELICIT_PARAMS},
        "answered_then": {"result": {"action": "accept", "content": {}}},
        "answered_now": {"result": {"action": "decline"}},
    }
    assert records[:3] == requests
    assert records[3] == {
        "tool": "echo",
        "args": {"text": "hi"},
        "reason": "client_answer_differs",
        "policy": "fail_call",
        "matched": None,
        "nearest": {"index": 1, "shared": 1, "differing_keys": []},
        "recording": 1,
        "client": client,
    }
    lines = [json.loads(line) for line in (runs.leaves / "events.jsonl").read_text().splitlines()]
    events = [e for e in lines if e["event"] == "universe_divergence"]
    event_fields = ("method", "tool", "args", "reason", "policy", "matched", "nearest")
    assert [{k: e[k] for k in event_fields if k in e} for e in events[:3]] == requests
    assert [(e["unit_id"], e["upstream"], e["level"]) for e in events] == [
        ("surface#0", "world", "warning")
    ] * 4
    assert "method" not in events[3] and events[3]["client"] == client
    warnings = trace["warnings"]
    assert [{k: w[k] for k in event_fields if k in w} for w in warnings[:3]] == requests
    assert "method" not in warnings[3] and warnings[3]["client"] == client
    [verdict] = trace["verdicts"]
    assert (verdict["name"], verdict["passed"]) == ("no_divergence", False)
    assert verdict["reason"] == (
        f"call 1 world resources/read {UNRECORDED_URI}({{}}) diverged: no_recorded_result; "
        'call 2 world prompts/get with_args({"arg1":"<z>"}) diverged: no_recorded_result; '
        "call 3 world completion/complete with_args("
        '{"argument":{"name":"arg1","value":"zz"},"ref":{"name":"with_args","type":"ref/prompt"}})'
        " diverged: no_recorded_result; "
        'call 4 world.echo({"text":"hi"}) diverged: client_answer_differs'
    )
    assert runs.trace(runs.stays)["warnings"] == []


def test_junit_lists_each_divergence_with_its_method(runs: Runs) -> None:
    """The failure's text names a request by method and target, and says which request the
    client answered otherwise."""
    suite = ET.parse(runs.leaves / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.text is not None
    assert [line for line in failure.text.splitlines() if line.startswith("divergence")] == [
        f"divergence world resources/read {UNRECORDED_URI}({{}}): no_recorded_result "
        "(policy fail_call)",
        'divergence world prompts/get with_args({"arg1":"<z>"}): no_recorded_result '
        "(policy fail_call)",
        "divergence world completion/complete with_args("
        '{"argument":{"name":"arg1","value":"zz"},"ref":{"name":"with_args","type":"ref/prompt"}})'
        ": no_recorded_result (policy fail_call)",
        'divergence world.echo({"text":"hi"}): client_answer_differs (policy fail_call); '
        "the client answered elicitation/create otherwise",
    ]
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["divergences"] == "4"


def test_coverage_has_the_recorded_answers_per_section(runs: Runs) -> None:
    """Each section's entries served and never used; a request that missed is unmatched, a
    read's index never counts as a tool recording's."""
    stays = runs.trace(runs.stays)["coverage"]["world"]
    assert (stays["served"], stays["unused"], stays["calls"], stays["unmatched"]) == (
        1,
        [0, 2, 3],
        4,
        0,
    )
    assert stays["requests"] == {
        "resource_reads": {
            "recorded": 3,
            "served": 1,
            "unused": [1, 2],
            "calls": 1,
            "unmatched": 0,
        },
        "prompt_gets": {"recorded": 2, "served": 1, "unused": [0], "calls": 1, "unmatched": 0},
        "completions": {"recorded": 2, "served": 1, "unused": [1], "calls": 1, "unmatched": 0},
    }
    leaves = runs.trace(runs.leaves)["coverage"]["world"]
    assert (leaves["served"], leaves["calls"], leaves["unmatched"]) == (0, 4, 4)
    assert leaves["requests"] == {
        "resource_reads": {
            "recorded": 3,
            "served": 0,
            "unused": [0, 1, 2],
            "calls": 1,
            "unmatched": 1,
        },
        "prompt_gets": {"recorded": 2, "served": 0, "unused": [0, 1], "calls": 1, "unmatched": 1},
        "completions": {"recorded": 2, "served": 0, "unused": [0, 1], "calls": 1, "unmatched": 1},
    }


def test_the_report_shows_request_divergences_apart_from_tool_calls(runs: Runs) -> None:
    """report.html names a request's method (set apart) and its target, escaped, shows what
    the client answered then and now, the per-section coverage and the requests in the
    timeline."""
    page = (runs.leaves / "report.html").read_text()
    assert UNRECORDED_URI not in page  # escaped everywhere
    uri = "test://&lt;never&gt;&amp;recorded"
    assert (
        f'<b>call 1 world </b><code class="method">resources/read</code> <b>{uri}</b>'
        "(<code>{}</code>) diverged: <b>no_recorded_result</b>" in page
    )
    assert (
        '<b>call 2 world </b><code class="method">prompts/get</code> <b>with_args</b>'
        "(<code>{&quot;arg1&quot;:&quot;&lt;z&gt;&quot;}</code>)" in page
    )
    assert '<code class="method">completion/complete</code> <b>with_args</b>' in page
    assert "No recorded read of this URI (resource_reads)." in page
    assert "<b>call 4 world.echo</b>" in page
    assert (
        "The server asked the client <code>elicitation/create</code> (<code>"
        "{&quot;message&quot;:&quot;Sure?&quot;" in page
    )
    assert (
        '<td class="mono rec">{&quot;result&quot;:{&quot;action&quot;:&quot;accept&quot;,'
        '&quot;content&quot;:{}}}</td><td class="mono call">{&quot;result&quot;:'
        "{&quot;action&quot;:&quot;decline&quot;}}</td>" in page
    )
    assert (
        "<tr><td>world</td><td>resource_reads</td><td>0/3</td><td>1</td><td>1</td>"
        "<td>#0, #1, #2</td></tr>" in page
    )
    assert f'<td><code class="method">resources/read</code> {uri}</td>' in page
    assert ">world resources/read " + uri in page  # the chart's bar


def test_wt_diff_lists_request_divergences_with_their_method(runs: Runs, tmp_path: Path) -> None:
    """Text, markdown, HTML and JSON: each new divergence with its method, and how many of the
    new ones are requests."""
    base, new = str(runs.stays), str(runs.leaves)
    text = wt("diff", base, new)
    assert text.returncode == 1, text.stderr
    assert "divergences: 4 new (3 requests), 0 gone, 0 unchanged" in text.stdout
    assert "== surface: regressed; divergences 4 new (3 requests), 0 gone" in text.stdout
    assert (
        f"  new divergence: world resources/read {UNRECORDED_URI}({{}}): no_recorded_result (x1)"
        in text.stdout.splitlines()
    )
    assert (
        '  new divergence: world prompts/get with_args({"arg1":"<z>"}): no_recorded_result (x1)'
        in text.stdout.splitlines()
    )
    assert '  new divergence: world.echo({"text":"hi"}): client_answer_differs (x1)' in (
        text.stdout.splitlines()
    )
    assert f"+world resources/read {UNRECORDED_URI} {{}}  -> diverged: no_recorded_result" in (
        text.stdout
    )
    assert "-world resources/read test://static-text {}" in text.stdout
    done = wt("diff", base, new, "--json")
    report = json.loads(done.stdout)
    assert (report["counts"]["new_divergences"], report["counts"]["new_request_divergences"]) == (
        4,
        3,
    )
    [scenario] = report["scenarios"]
    assert [(d["method"], d["tool"], d["reason"]) for d in scenario["new_divergences"]] == [
        ("resources/read", UNRECORDED_URI, "no_recorded_result"),
        ("prompts/get", "with_args", "no_recorded_result"),
        ("completion/complete", "with_args", "no_recorded_result"),
        ("tools/call", "echo", "client_answer_differs"),
    ]
    markdown = wt("diff", base, new, "--format", "markdown").stdout
    assert f"- new: `world resources/read {UNRECORDED_URI}({{}})` no_recorded_result" in markdown
    assert "4 new divergence(s) (3 requests)" in markdown
    html_out = tmp_path / "diff.html"
    assert wt("diff", base, new, "--format", "html", "-o", str(html_out)).returncode == 1
    page = html_out.read_text()
    assert UNRECORDED_URI not in page
    assert "New divergences (4) (3 requests)" in page
    assert "<code>world resources/read test://&lt;never&gt;&amp;recorded({})</code>" in page
