"""`wt record` on the command line: several upstreams at once, the config it prints, the files it
writes on Ctrl-C, the capture log `wt import` reads back, and one clear line for bad usage."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import mcp
import pytest
import trio

from tests.processes import WT, read_until
from tests.record.sdk_upstream import SECRET
from tests.record.upstreams import SDK_UPSTREAM, sdk_http_upstream
from windtunnel.cli.main import main
from windtunnel.cli.record_main import UpstreamSpec, parse_record_upstreams
from windtunnel.universe import load_universe


async def test_two_upstreams_one_universe_each_and_a_log_wt_import_reads(tmp_path: Path) -> None:
    """A stdio and an HTTP upstream: an `mcpServers` config on stdout; on SIGINT one universe
    each, a summary on stderr, exit 0; the capture log imports into the same recordings."""
    out, log = tmp_path / "out", tmp_path / "capture.jsonl"
    with trio.fail_after(60):
        async with sdk_http_upstream() as upstream:
            process = await trio.lowlevel.open_process(
                [
                    *WT,
                    "record",
                    "-o",
                    str(out),
                    "--log",
                    str(log),
                    "--log-format",
                    "json",
                    "--redact",
                    "regex:sk-live-[0-9a-f]+",
                    f"billing={upstream}",
                    "crm=--",
                    *SDK_UPSTREAM,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert process.stdout is not None and process.stderr is not None
            config = json.loads(await read_until(process.stdout, b"}\n}\n"))
            servers = config["mcpServers"]
            assert sorted(servers) == ["billing", "crm"]
            assert {entry["type"] for entry in servers.values()} == {"http"}
            async with mcp.Client(servers["crm"]["url"], mode="legacy") as client:
                await client.call_tool("lookup", {"query": "acme"})
                await client.call_tool("issue_token", {"user": "ana"})
            async with mcp.Client(servers["billing"]["url"], mode="auto") as client:
                await client.call_tool("counter", {})
                await client.call_tool("counter", {})
            process.send_signal(signal.SIGINT)
            stderr = b""
            while chunk := await process.stderr.receive_some():
                stderr += chunk
            assert await process.wait() == 0, stderr
    crm = load_universe(out / "crm.universe.json")
    billing = load_universe(out / "billing.universe.json")
    assert [r.tool_name for r in crm.recordings] == ["lookup", "issue_token"]
    assert crm.recordings[1].result["structuredContent"]["api_key"] == "[REDACTED:1]"
    assert SECRET not in (out / "crm.universe.json").read_text() + log.read_text()
    assert [r.tool_name for r in billing.recordings] == ["counter", "counter"]
    assert billing.tool("counter") is not None and billing.tool("counter").mode == "sequence"  # type: ignore[union-attr]
    assert billing.meta["upstream"] == {"name": "billing", "source": upstream}
    text = stderr.decode()
    assert f"crm: 2 call(s), 2 recording(s), 8 tool(s) -> {out / 'crm.universe.json'}" in text
    assert "crm: redacted 1 distinct value(s): regex:sk-live-[0-9a-f]+ 1" in text
    assert "billing: 2 call(s), 2 recording(s), 8 tool(s)" in text
    assert "(sequence mode: counter)" in text
    assert main(["import", str(log), "-o", str(tmp_path / "imported"), "--task", "replay"]) == 0
    imported = load_universe(tmp_path / "imported" / "crm.universe.json")
    assert [(r.tool_name, r.args) for r in imported.recordings] == [
        ("lookup", {"query": "acme"}),
        ("issue_token", {"user": "ana"}),
    ]
    # Each recording keeps how long its call took; the capture log's times give the same.
    durations = [r.meta for r in crm.recordings + billing.recordings]
    assert all(isinstance(m, dict) and m["duration_ms"] > 0 for m in durations), durations
    assert [r.meta for r in imported.recordings] == [r.meta for r in crm.recordings]


def test_upstream_words_are_split_into_urls_commands_and_options() -> None:
    """A command runs until the next NAME=URL or NAME=-- word; options stay options."""
    options, specs = parse_record_upstreams(
        [
            "crm=http://127.0.0.1:1/mcp",
            "-o",
            "out",
            "fs=--",
            "npx",
            "-y",
            "pkg",
            "--flag",
            "db=--",
            "python",
            "db.py",
        ]
    )
    assert options == ["-o", "out"]
    assert specs == [
        UpstreamSpec("crm", "http://127.0.0.1:1/mcp"),
        UpstreamSpec("fs", ["npx", "-y", "pkg", "--flag"]),
        UpstreamSpec("db", ["python", "db.py"]),
    ]
    _, (spec,) = parse_record_upstreams(
        ["--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    )
    assert spec == UpstreamSpec(
        "server-filesystem", ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    )
    _, (spec,) = parse_record_upstreams(["--", "/usr/bin/python3.11", "-u", "billing_server.py"])
    assert spec.name == "billing_server"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["record", "http://127.0.0.1:1/mcp"], "-o PATH is required"),
        (["record", "-o", "x.json"], "give an upstream"),
        (["record", "-o", "x.json", "crm=ftp://x"], "'crm=ftp://x': expected NAME=URL"),
        (
            ["record", "-o", "x.json", "http://127.0.0.1:1/mcp", "--bogus"],
            "not an upstream or option: --bogus",
        ),
        (
            ["record", "-o", "d", "--stdio", "a=http://h/mcp", "b=http://h/mcp"],
            "--stdio records exactly one",
        ),
        (["record", "-o", "d", "a=http://h/mcp", "a=--", "x"], "upstream name 'a' is used twice"),
        (["record", "-o", "x.json", "--redact", "colour:x", "http://h/mcp"], "unknown rule kind"),
        (["record", "-o", "x.json", "--"], "no command after '--'"),
        (
            ["record", "-o", "x.json", "crm=ftp://u:pw-secret@h/x?k=tok-secret"],
            "'crm=ftp://[REDACTED]@h/x?k=[REDACTED]': expected NAME=URL",
        ),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each mistake is named on one line, with exit code 2 and no traceback."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_command_that_does_not_start_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stdio upstream that cannot be spawned: one line naming the program."""
    code = main(["record", "-o", str(tmp_path / "x.universe.json"), "--", "/nonexistent/server"])
    assert code == 2
    assert (
        "wt: error: upstream 'server' cannot start '/nonexistent/server'" in capsys.readouterr().err
    )
