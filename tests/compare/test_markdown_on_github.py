"""`wt diff --format markdown` rendered by cmark-gfm, GitHub's own parser, with hostile names.

A PR comment is rendered by GitHub: what the runs' data holds (pack and scenario names, unit
ids, tools, arguments, reasons) must reach the page as text. The page is rendered with raw HTML
let through (`--unsafe`, as GitHub does before it sanitizes), so a tag that escaped would show.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from windtunnel.calls import MCPCall
from windtunnel.cli.main import main
from windtunnel.rundir.results import write_traces
from windtunnel.runner.scoring import evaluate, no_divergence
from windtunnel.runner.trace import Trace

IMAGE = "![i](https://evil.example/i.png)"
RAW_IMAGE = '<img src="https://evil.example/r.png">'
# Each one tries another way out of a table cell, a code span or the <summary> HTML block.
HOSTILE_NAMES = [
    f"cr\r{IMAGE} @octocat",
    f"lf\n\n{IMAGE} @octocat\n\n| x | y |",
    f"summary</code></summary></details>\n\n{RAW_IMAGE} @octocat",
    f"ticks``` `` ` {IMAGE}\r\n@octocat",
    f"pipes | {IMAGE} | @octocat |",
    f"unicode\u2028{IMAGE}\u2029@octocat",
    f" spaced {RAW_IMAGE} @octocat ",
    "entity &lt;img src=https://evil.example/e.png&gt; [link](https://evil.example) @octocat",
]
HOSTILE_PACK = f"pack\n\n{IMAGE} @octocat"
HOSTILE_TOOL = f"tool\n\n{RAW_IMAGE}\n@octocat"
HOSTILE_REASON = f"reason\n\n{IMAGE} @octocat"


def cmark_gfm() -> str:
    """Debian's cmark-gfm; skip without it, unless the suite requires third parties."""
    found = shutil.which("cmark-gfm")
    if found is None:
        if os.environ.get("WT_REQUIRE_THIRDPARTY"):
            pytest.fail("cmark-gfm is not installed (scripts/test installs Debian's cmark-gfm)")
        pytest.skip("cmark-gfm is not installed (scripts/test installs Debian's cmark-gfm)")
    return found


class Page(HTMLParser):
    """What a reader would see: images, text outside code, table rows, summaries."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.images: list[str] = []
        self.links: list[str] = []
        self.text_outside_code: list[str] = []
        self.table_rows = 0
        self.summaries = 0
        self.details = 0
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag in ("code", "pre"):
            self._in_code += 1
        self.table_rows += tag == "tr"
        self.summaries += tag == "summary"
        self.details += tag == "details"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._in_code -= 1

    def handle_data(self, data: str) -> None:
        if not self._in_code:
            self.text_outside_code.append(data)


def hostile_unit(scenario: str, repeat: int, *, diverge: bool) -> Trace:
    """A unit of `scenario` whose one call (to a hostile tool) diverged, or went as recorded."""
    args = {"q": f"{scenario} {IMAGE}"}
    divergence = {
        "tool": HOSTILE_TOOL,
        "args": args,
        "reason": HOSTILE_REASON,
        "policy": "fail_call",
        "nearest": {
            "index": 0,
            "shared": 0,
            "differing_keys": ["q", f"key\n{IMAGE} @octocat"],
            "args": {"q": f"`` {RAW_IMAGE} @octocat"},
        },
    }
    extra = {"divergence": divergence} if diverge else {"match": {"tier": "exact", "index": 0}}
    call = MCPCall(tool_name=HOSTILE_TOOL, args=args, extra=extra, upstream=f"up\r{IMAGE}")
    warnings = [{"event": "universe_divergence", **divergence}] if diverge else []
    trace = Trace(
        unit_id=f"{scenario}#{repeat}",
        scenario=scenario,
        repeat=repeat,
        mcp_calls=[call],
        warnings=warnings,
        output="done",
    )
    return evaluate(trace, [no_divergence()], [])


@pytest.mark.timeout(60)
def test_hostile_names_stay_text_when_github_renders_the_comment(tmp_path: Path) -> None:
    """8 hostile scenario names: no image, no @mention outside code, 8 rows and 8 summaries."""
    base, new = tmp_path / "base", tmp_path / "new"
    write_traces(base, [hostile_unit(n, 0, diverge=False) for n in HOSTILE_NAMES], HOSTILE_PACK)
    write_traces(new, [hostile_unit(n, 0, diverge=True) for n in HOSTILE_NAMES], HOSTILE_PACK)
    comment = tmp_path / "comment.md"
    assert main(["diff", str(base), str(new), "--format", "markdown", "-o", str(comment)]) == 1
    rendered = subprocess.run(
        [cmark_gfm(), "--unsafe", "-e", "table", "-e", "autolink", "-e", "tagfilter"],
        input=comment.read_bytes(),
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout.decode()
    page = Page()
    page.feed(rendered)
    page.close()
    outside = "".join(page.text_outside_code)
    assert page.images == []
    assert page.links == []
    assert re.findall(r"(?<![A-Za-z0-9])@[A-Za-z0-9]", outside) == []
    assert "evil.example" not in outside
    assert page.table_rows == 1 + len(HOSTILE_NAMES)
    assert page.summaries == page.details == len(HOSTILE_NAMES)
    # Each name is in its row and its summary, shown with its line breaks as visible escapes.
    assert rendered.count("<code>cr\\u000d![i](https://evil.example/i.png) @octocat</code>") == 2
    assert "<code>pipes | ![i](https://evil.example/i.png) | @octocat |</code>" in rendered
