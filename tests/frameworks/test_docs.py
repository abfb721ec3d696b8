"""docs/frameworks.md: every snippet runs as written, in its framework's venv, and prints exactly
the output shown under it.

A snippet is a ```python block right after `<!-- test: VENV http|stdio -->`; the ```text block
after it is its expected output. `http` snippets get `$WT_MCP_URL` from a `wt serve` of the crm
universe; `stdio` snippets run in a directory holding it as `crm.universe.json`, with this venv's
`wt` first on `PATH`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from tests.processes import wt_serve
from tests.thirdparty import thirdparty_python

from .harness import CRM

DOC = Path(__file__).parents[2] / "docs" / "frameworks.md"
SNIPPET = re.compile(
    r"<!-- test: (?P<venv>\S+) (?P<transport>http|stdio) -->\n"
    r"```python\n(?P<code>.*?)```\n\n```text\n(?P<output>.*?)```",
    re.DOTALL,
)
SNIPPETS = [match.groupdict() for match in SNIPPET.finditer(DOC.read_text())]
SNIPPET_DEADLINE_S = 120


def test_every_framework_section_has_a_tested_snippet() -> None:
    """The page's snippets are the five framework sections', each marked for a test."""
    assert [(s["venv"], s["transport"]) for s in SNIPPETS] == [
        ("fw-pydantic-ai", "http"),
        ("fw-openai-agents", "http"),
        ("fw-langchain", "stdio"),
        ("fw-fastmcp", "http"),
        ("fw-inspect-ai", "http"),
    ]
    assert DOC.read_text().count("```python") == len(SNIPPETS)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s["venv"] for s in SNIPPETS])
async def test_snippet_runs_and_prints_what_the_page_shows(
    snippet: dict[str, str], tmp_path: Path
) -> None:
    """The snippet's output is the text block under it, byte for byte."""
    python = thirdparty_python(snippet["venv"])
    script = tmp_path / "snippet.py"
    script.write_text(snippet["code"])
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with trio.fail_after(SNIPPET_DEADLINE_S):
        if snippet["transport"] == "stdio":
            shutil.copy(CRM, tmp_path / "crm.universe.json")
            done = await run(python, script, env, tmp_path)
        else:
            async with wt_serve(str(CRM)) as (_, printed):
                env["WT_MCP_URL"] = printed.decode().strip()
                done = await run(python, script, env, tmp_path)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    assert done.stdout.decode() == snippet["output"]


async def run(
    python: Path, script: Path, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    return await trio.run_process(
        [str(python), str(script)],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=env,
        cwd=cwd,
    )
