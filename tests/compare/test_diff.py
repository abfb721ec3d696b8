"""`wt diff`: the demo's v1 and v2 runs in all four formats, repeats, shards, gates, bad input."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from windtunnel.cli.main import main
from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.rundir.results import write_traces
from windtunnel.runner.scoring import evaluate, no_divergence
from windtunnel.runner.trace import Trace, warnings_from_calls

ROOT = Path(__file__).parents[2]
CRM = ROOT / "configs" / "examples" / "crm.universe.json"
REGRESSED = ["client-contact-lookup", "double-charge-refund", "ticket-history"]
NEW_DIVERGENCES = [
    'crm.client_lookup({"query":"Bluewing","verbose":true})',
    'billing.list_charges({"account_id":"ACC-1042"})',
    'billing.refund_invoice({"invoice_id":"INV-7"})',
    'email.send_email({"body":"We are looking into it.","subject":"About your invoice",'
    '"to":"ops@bluewing.example"})',
    'tickets.next_ticket_batch({"account_id":"ACC-1042"})',
]


def wt_diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_names_the_regressions_and_new_divergences(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The terminal table lists the 3 regressed scenarios; details show 5 new divergences."""
    v1, v2 = demo_runs
    code, out, err = wt_diff(capsys, str(v1), str(v2))
    assert code == 1
    assert out.splitlines()[1] == (
        "3 regressed (0 significant), 0 improved, 0 added, 0 removed, 0 unchanged; divergences: "
        "5 new, 0 gone, 0 unchanged; pass rate 100.0% -> 0.0%"
    )
    rows = [line.split()[:5] for line in out.splitlines()[4:7]]
    assert rows == [[name, "regressed", "(flip)", "1/1", "passed"] for name in REGRESSED]
    new = re.findall(r"^  new divergence: (.*): \w+ \(x1\)$", out, flags=re.M)
    assert new == NEW_DIVERGENCES
    assert '      query: called "Bluewing", recording #0 has "Bluewing Logistics"' in out
    assert (
        '    +billing.refund_invoice {"invoice_id":"INV-7"}  -> diverged: unknown_tool'
        in out.splitlines()
    )
    assert err.splitlines() == [f"wt diff: {name}: regressed" for name in REGRESSED]


def test_markdown_is_a_short_pr_comment_with_details_folded(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A table row per regression, one folded <details> each, call diffs fenced as diff."""
    v1, v2 = demo_runs
    code, out, _ = wt_diff(capsys, str(v1), str(v2), "--format", "markdown")
    assert code == 1
    assert out.splitlines()[0] == "### Wind Tunnel diff: `support-demo` (regressed)"
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert rows == [
        f"| `{name}` | regressed (flip) | 1/1 passed | 0/1 passed | 1 | +{n} / -0 |"
        for name, n in zip(REGRESSED, [1, 3, 1], strict=True)
    ]
    assert out.count("<details>") == out.count("</details>") == 3
    assert out.count("```diff") == 3
    new = re.findall(r"^- new: `(.*)` \w+, 1 time\(s\)$", out, flags=re.M)
    assert new == NEW_DIVERGENCES


def test_json_carries_every_field(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--json: counts, per-scenario sides, p-values, divergences with key diffs, call diffs."""
    v1, v2 = demo_runs
    code, out, _ = wt_diff(capsys, str(v1), str(v2), "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["windtunnel_diff"] == 1
    assert doc["counts"] == {
        "scenarios": 3,
        "regressed": 3,
        "significant_regressions": 0,
        "improved": 0,
        "unchanged": 0,
        "added": 0,
        "removed": 0,
        "new_divergences": 5,
        "gone_divergences": 0,
        "unchanged_divergences": 0,
        "new_request_divergences": 0,
        "gone_request_divergences": 0,
    }
    first = doc["scenarios"][0]
    assert (first["scenario"], first["change"], first["flipped"], first["p_value"]) == (
        "client-contact-lookup",
        "regressed",
        True,
        1.0,
    )
    assert first["base"] == {
        "runs": 1, "passed": 1, "errors": 0, "pass_rate": 1.0, "status": "passed", "divergences": 0,
        "invalid": 0, "faults_injected": 0,
    }  # fmt: skip
    (divergence,) = first["new_divergences"]
    assert (divergence["method"], divergence["tool"]) == ("tools/call", "client_lookup")
    assert divergence["differences"] == [
        {"key": "query", "called": '"Bluewing"', "recorded": '"Bluewing Logistics"'},
        {"key": "verbose", "called": "true", "recorded": None},
    ]
    assert first["compared_units"] == ["client-contact-lookup#0", "client-contact-lookup#0"]
    assert first["calls_diff"][2:] == [
        "@@ -1 +1 @@",
        '-crm.client_lookup {"query":"Bluewing Logistics","verbose":true}',
        '+crm.client_lookup {"query":"Bluewing","verbose":true}  -> diverged: no_recorded_result',
    ]


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.links += [v or "" for k, v in attrs if k in ("src", "href")]


def test_html_is_one_self_contained_page(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--format html -o FILE: no scripts, nothing fetched, every regression and new divergence."""
    v1, v2 = demo_runs
    page = tmp_path / "diff.html"
    code, out, _ = wt_diff(capsys, str(v1), str(v2), "--format", "html", "-o", str(page))
    assert (code, out) == (1, f"{page}\n")
    text = page.read_text()
    tags = Tags()
    tags.feed(text)
    assert "script" not in tags.tags and tags.links == []
    assert "content=\"default-src 'none'; style-src 'unsafe-inline'\"" in text
    assert text.count('<span class="pill failed">regressed</span>') == 3
    for label in NEW_DIVERGENCES:
        assert f"<code>{html.escape(label)}</code>" in text
    assert '<span class="add">+crm.client_lookup {&quot;query&quot;:&quot;Bluewing&quot;' in text


def test_reverse_diff_reports_fixes_and_gone_divergences(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """v2 -> v1: three improvements, five divergences gone, exit 0."""
    v1, v2 = demo_runs
    code, out, err = wt_diff(capsys, str(v2), str(v1), "--json")
    counts = json.loads(out)["counts"]
    assert (code, err) == (0, "")
    assert (counts["improved"], counts["gone_divergences"], counts["new_divergences"]) == (3, 5, 0)


def test_same_run_changes_nothing(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A run against itself: nothing changed, exit 0, even with every gate on."""
    _, v2 = demo_runs
    gates = "regression,significant,new-divergence,removed"
    code, out, _ = wt_diff(capsys, str(v2), str(v2), "--fail-on", gates)
    assert code == 0
    assert out.splitlines()[2] == "No scenario changed."


def test_fail_on_chooses_what_regresses(
    demo_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """1-of-1 flips are not significant: `--fail-on significant` passes, `new-divergence` fails."""
    v1, v2 = demo_runs
    assert wt_diff(capsys, str(v1), str(v2), "--fail-on", "significant")[0] == 0
    assert wt_diff(capsys, str(v1), str(v2), "--fail-on", "none")[0] == 0
    code, _, err = wt_diff(capsys, str(v1), str(v2), "--fail-on", "new-divergence")
    assert code == 1
    assert err.splitlines()[1] == "wt diff: double-charge-refund: 3 new divergence(s)"
    code, _, err = wt_diff(capsys, str(v1), str(v2), "--fail-on", "regresion")
    assert code == 2
    assert err == (
        "wt: error: --fail-on: unknown 'regresion'; expected a comma-separated list of "
        "regression, significant, new-divergence, removed, or none\n"
    )


def lookup_unit(scenario: str, repeat: int, query: str) -> Trace:
    """A unit whose one call goes to a real recorded server, scored by no_divergence."""
    server = RecordedMCPServer(CRM, name="crm")
    server.call_tool("client_lookup", {"query": query})
    calls = server.call_log()
    trace = Trace(
        unit_id=f"{scenario}#{repeat}",
        scenario=scenario,
        repeat=repeat,
        mcp_calls=calls,
        warnings=warnings_from_calls(calls, scenario, universes={"crm": server.universe}),
        output="done",
    )
    return evaluate(trace, [no_divergence()], [])


def write_run(path: Path, passes: dict[str, tuple[int, int]]) -> Path:
    """A run where scenario `name` passes `p` of `n` repeats (the rest call off the recording)."""
    traces = [
        lookup_unit(name, r, "Bluewing Logistics" if r < p else f"Nobody {r % 2}")
        for name, (p, n) in passes.items()
        for r in range(n)
    ]
    write_traces(path, traces, pack="repeats")
    return path


def test_repeats_get_fishers_exact_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """5/5 -> 0/5 is significant (p = 0.0079); 2/2 -> 1/2 is not; added and removed show up."""
    base = write_run(tmp_path / "base", {"steady": (5, 5), "wobbly": (2, 2), "old": (1, 1)})
    new = write_run(tmp_path / "new", {"steady": (0, 5), "wobbly": (1, 2), "fresh": (1, 1)})
    code, out, err = wt_diff(capsys, str(base), str(new), "--json", "--fail-on", "significant")
    assert (code, err) == (1, "wt diff: steady: regressed\n")
    doc = json.loads(out)
    got = {
        d["scenario"]: (d["change"], round(d["p_value"], 4), d["significant"])
        for d in doc["scenarios"]
    }
    assert got == {
        "steady": ("regressed", 0.0079, True),
        "wobbly": ("regressed", 1.0, False),
        "old": ("removed", 1.0, False),
        "fresh": ("added", 1.0, False),
    }
    assert [d["scenario"] for d in doc["scenarios"]] == ["steady", "wobbly", "old", "fresh"]
    steady = doc["scenarios"][0]
    assert [(d["args"], d["base"], d["new"]) for d in steady["new_divergences"]] == [
        ({"query": "Nobody 0"}, 0, 3),
        ({"query": "Nobody 1"}, 0, 2),
    ]
    assert steady["compared_units"] == ["steady#0", "steady#0"]


def test_unmerged_shards_read_as_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A parallel run's shards/*/ directories compare like the merged run: nothing changed."""
    merged = write_run(tmp_path / "merged", {"a": (1, 2), "b": (2, 2)})
    write_run(tmp_path / "parallel" / "shards" / "1-of-2", {"a": (1, 2)})
    write_run(tmp_path / "parallel" / "shards" / "2-of-2", {"b": (2, 2)})
    code, out, _ = wt_diff(capsys, str(merged), str(tmp_path / "parallel"), "--json")
    doc = json.loads(out)
    assert code == 0
    assert (
        doc["new_units"],
        doc["counts"]["unchanged"],
        doc["counts"]["unchanged_divergences"],
    ) == (
        4,
        2,
        1,
    )


def test_not_a_run_directory_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing directory, or one with no results, is one clear error naming it."""
    run = write_run(tmp_path / "run", {"a": (1, 1)})
    code, _, err = wt_diff(capsys, str(tmp_path / "nope"), str(run))
    assert (code, err) == (
        2,
        f"wt: error: {tmp_path / 'nope'}: not a run directory (no such directory)\n",
    )
    (tmp_path / "empty").mkdir()
    code, _, err = wt_diff(capsys, str(run), str(tmp_path / "empty"))
    assert code == 2
    assert err == (
        f"wt: error: {tmp_path / 'empty'}: not a run directory: no results.jsonl here nor "
        "under shards/*/\n"
    )
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "results.jsonl").write_text("")
    code, _, err = wt_diff(capsys, str(run), str(tmp_path / "blank"))
    assert (code, err) == (
        2,
        f"wt: error: {tmp_path / 'blank'}: no finished unit in results.jsonl\n",
    )


def test_hostile_names_are_escaped_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Markup, pipes and backticks in a scenario name stay text in markdown and HTML."""
    name = "<img src=x onerror=alert(1)>|`tick`"
    base = write_run(tmp_path / "base", {name: (1, 1)})
    new = write_run(tmp_path / "new", {name: (0, 1)})
    _, markdown, _ = wt_diff(capsys, str(base), str(new), "--format", "markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| ``"))
    assert row.startswith("| `` <img src=x onerror=alert(1)>\\|`tick` `` | regressed (flip) |")
    assert (
        "<details><summary><code>&lt;img src=x onerror=alert(1)&gt;|`tick`</code>: regressed"
        in markdown
    )
    _, page, _ = wt_diff(capsys, str(base), str(new), "--format", "html")
    tags = Tags()
    tags.feed(page)
    assert "img" not in tags.tags and tags.links == []
    assert "&lt;img src=x onerror=alert(1)&gt;|`tick`" in page


def test_terminal_control_bytes_in_names_are_escaped_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ESC, BEL and an RLO in a scenario name reach stdout and stderr as visible escapes."""
    name = "lookup\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\u202e"
    base = write_run(tmp_path / "base", {name: (1, 1)})
    new = write_run(tmp_path / "new", {name: (0, 1)})
    for form in ("text", "markdown", "json", "html"):
        code, out, err = wt_diff(capsys, str(base), str(new), "--format", form)
        assert code == 1
        for stream in (out, err):
            assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
        assert "lookup\\u001b]8;;http://evil.example\\u0007click" in out
    assert err == (
        "wt diff: lookup\\u001b]8;;http://evil.example\\u0007click\\u001b]8;;\\u0007\\u202e: "
        "regressed\n"
    )
