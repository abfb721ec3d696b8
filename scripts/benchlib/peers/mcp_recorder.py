"""mcp-recorder: its HTTP proxy wrapping `wt serve --stdio`, bind forced to loopback."""

from __future__ import annotations

from pathlib import Path

from .common import (
    ERAS,
    Config,
    Peer,
    Preparing,
    _describe,
    _free_port,
    _http_on_port,
    _record_http,
    _wt_stdio,
)

LOOPBACK_RECORDER = """\
import sys, uvicorn
_run = uvicorn.run
uvicorn.run = lambda app, *a, **k: _run(app, *a, **{**k, "host": "127.0.0.1"})
from mcp_recorder.cli import main
sys.argv[0] = "mcp-recorder"
sys.exit(main())
"""

PEER = Peer("mcp-recorder", ("mcp-recorder", "starlette==0.52.1"))


async def prepare(ctx: Preparing, bin_dir: Path | None, reason: str) -> None:
    work = ctx.work
    universe = ctx.universe
    python = ctx.python
    our_env = ctx.our_env
    record_calls = ctx.record_calls
    configs = ctx.configs
    failed = ctx.failed
    recd_bin = bin_dir
    if recd_bin is None:
        failed("mcp-recorder", "http", "mcp-recorder replay", reason)
    else:
        wrapper = work / "mcprecorder_loopback.py"
        wrapper.write_text(LOOPBACK_RECORDER)
        rpython = str(recd_bin / "python")
        for era in ERAS:
            path = work / f"mcprecorder-{era}.json"
            label = "mcp-recorder replay (Streamable HTTP, method_params)"
            port = _free_port()
            target = " ".join([python, *_wt_stdio(universe)])
            try:
                await _record_http(
                    [
                        rpython,
                        str(wrapper),
                        "record",
                        "--target-stdio",
                        target,
                        "--target-env",
                        f"PYTHONPATH={our_env['PYTHONPATH']}",
                        "--port",
                        str(port),
                        "--output",
                        str(path),
                    ],
                    port,
                    era,
                    record_calls,
                    None,
                    work,
                )
                if not path.exists():
                    raise RuntimeError("the recorder wrote no cassette")
                configs.append(
                    Config(
                        "mcp-recorder",
                        "http",
                        era,
                        label,
                        start_http=_http_on_port(
                            [rpython, str(wrapper), "replay", "--cassette", str(path)], "/mcp"
                        ),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-recorder",
                        "http",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
