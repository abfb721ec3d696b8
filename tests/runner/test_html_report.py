"""report.html: self-contained, escaped, and showing every divergence with its diff."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.rundir.results import RunWriter
from windtunnel.runner.html_report import _FILTER_SCRIPT, render_report
from windtunnel.runner.scoring import contains, evaluate, no_divergence
from windtunnel.runner.summary import summarize
from windtunnel.runner.trace import Trace, warnings_from_calls

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"
EVIL = "<script>alert('x')</script>"
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "div", "b", "i",
    "p", "span", "a", "table", "tr", "th", "td", "details", "summary", "code", "pre",
    "svg", "rect", "text", "input", "select", "option", "script",
}  # fmt: skip


def only_our_script(page: str) -> None:
    """The one script is the report's filter, allowed by its sha256 in the CSP."""
    assert page.lower().count("<script") == 1
    assert f"<script>{_FILTER_SCRIPT}</script>" in page
    digest = base64.b64encode(hashlib.sha256(_FILTER_SCRIPT.encode()).digest()).decode()
    assert (
        f"content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'\""
    ) in page


def run_with_divergence(tmp_path: Path) -> Path:
    """A two-unit run: one clean, one with a divergence and hostile strings everywhere."""
    writer = RunWriter(tmp_path / "run", pack="demo <b>pack</b>")
    for repeat, hostile in enumerate([False, True]):
        server = RecordedMCPServer(CRM, name="crm")
        server.call_tool("client_lookup", {"query": "Bluewing Logistics"})
        if hostile:
            server.call_tool("client_lookup", {"query": EVIL, "verbose": True})
        calls = server.call_log()
        scenario = "<img src=x onerror=alert(1)>" if hostile else "clean"
        trace = Trace(
            unit_id=f"{scenario}#{repeat}",
            scenario=scenario,
            repeat=repeat,
            task=f"task {EVIL}" if hostile else "task",
            mcp_calls=calls,
            warnings=warnings_from_calls(calls, scenario, universes={"crm": server.universe}),
            output=f"</pre>{EVIL}" if hostile else "INV-7",
            error=f"crash {EVIL}" if hostile else None,
            started_at=calls[0].started_at,
            duration_s=1.0,
        )
        writer.write(evaluate(trace, [no_divergence()], [contains("INV-7")]))
    writer.finish()
    return tmp_path / "run" / "report.html"


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name == "href":
                self.hrefs.append(value or "")
            if name == "src":
                self.srcs.append(value or "")


def test_everything_from_traces_is_escaped(tmp_path: Path) -> None:
    """Markup in scenario names, args, answers and errors shows as text, never as tags."""
    page = run_with_divergence(tmp_path).read_text()
    parser = Tags()
    parser.feed(page)
    assert parser.tags <= ALLOWED_TAGS
    assert parser.srcs == []
    only_our_script(page)
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "demo &lt;b&gt;pack&lt;/b&gt;" in page


def test_page_is_self_contained(tmp_path: Path) -> None:
    """No remote resources; a CSP forbids loading anything and any other script; links stay
    local."""
    page = run_with_divergence(tmp_path).read_text()
    parser = Tags()
    parser.feed(page)
    assert "http://" not in page
    assert "https://" not in page
    only_our_script(page)
    assert all(h.startswith(("#u-", "traces/")) for h in parser.hrefs)
    assert len([h for h in parser.hrefs if h.startswith("traces/")]) == 2


def test_divergence_appears_with_a_key_diff(tmp_path: Path) -> None:
    """Each divergence names its call, reason and policy, and diffs keys against the recording."""
    page = run_with_divergence(tmp_path).read_text()
    assert (
        "<b>call 2 crm.client_lookup</b>(<code>{&quot;query&quot;:&quot;&lt;script&gt;"
        "alert(&#x27;x&#x27;)&lt;/script&gt;&quot;,&quot;verbose&quot;:true}</code>) diverged: "
        "<b>no_recorded_result</b>, answered with policy <code>fail_call</code>"
    ) in page
    assert "Nearest recording: #0, 0 shared key/value pair(s)." in page
    assert (
        '<tr><td class="mono">query</td><td class="mono call">- &quot;&lt;script&gt;'
        "alert(&#x27;x&#x27;)&lt;/script&gt;&quot;</td>"
        '<td class="mono rec">+ &quot;Bluewing Logistics&quot;</td></tr>'
    ) in page
    assert (
        '<tr><td class="mono">verbose</td><td class="mono call">- true</td>'
        '<td class="mono rec">+ <i>absent</i></td></tr>'
    ) in page
    assert "<h3>upstream crm</h3>" in page
    assert page.count('<tr class="diverged">') == 1


@pytest.mark.skipif(
    shutil.which("chromium") is None and not os.environ.get("WT_REQUIRE_BROWSER"),
    reason="Debian's chromium is not installed (scripts/test installs it and requires it)",
)
def test_chromium_renders_the_divergence(tmp_path: Path) -> None:
    """A real browser loads the page offline and its DOM holds the divergence and its diff."""
    report = run_with_divergence(tmp_path)
    chromium = shutil.which("chromium")
    assert chromium is not None
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "no_recorded_result" in dom
    assert "Bluewing Logistics" in dom
    assert "call 2 crm.client_lookup" in dom
    # The CSP let the filter script run (it shows its toolbar), and nothing else.
    assert '<div class="toolbar" id="filter">' in dom
    assert "4 of 4 rows shown" in dom  # 2 scenarios and 2 units


def test_trace_links_are_rebuilt_not_trusted(tmp_path: Path) -> None:
    """A results file edited to point a unit elsewhere cannot plant a link in the report."""
    trace = Trace(unit_id="a#0", scenario="a", status="passed", trace_file="javascript:alert(1)")
    page = render_report([trace], summarize([trace]))
    parser = Tags()
    parser.feed(page)
    assert [h for h in parser.hrefs if not h.startswith("#")] == ["traces/a_0-a090a256cb.json"]
