"""mcp-rec: its stdio recorder in front of `wt serve --stdio`, replayed consume-once."""

from __future__ import annotations

from pathlib import Path

from .common import (
    ERAS,
    Config,
    Peer,
    Preparing,
    _describe,
    _record_stdio,
    _wt_stdio,
)

PEER = Peer("mcp-rec", ("mcp-rec",))


async def prepare(ctx: Preparing, bin_dir: Path | None, reason: str) -> None:
    work = ctx.work
    universe = ctx.universe
    python = ctx.python
    record_calls = ctx.record_calls
    configs = ctx.configs
    failed = ctx.failed
    rec_bin = bin_dir
    rec_logs = ctx.recordings.setdefault("mcp-rec", {})
    if rec_bin is None:
        failed("mcp-rec", "stdio", "mcp-rec replay", reason)
    else:
        for era in ERAS:
            log = work / f"mcprec-{era}.jsonl"
            label = "mcp-rec replay (consume-once)"
            try:
                await _record_stdio(
                    str(rec_bin / "mcp-rec"),
                    ["record", "-o", str(log), "--", python, *_wt_stdio(universe)],
                    era,
                    record_calls,
                )
                rec_logs[era] = log
                configs.append(
                    Config(
                        "mcp-rec",
                        "stdio",
                        era,
                        label,
                        stdio=(
                            str(rec_bin / "mcp-rec"),
                            ["replay", str(log)],
                            {"MCP_REC_NO_NOTICE": "1"},
                        ),
                    )
                )
            except Exception as exc:  # a row with the reason
                configs.append(
                    Config(
                        "mcp-rec",
                        "stdio",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
