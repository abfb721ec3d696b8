"""mcp-cassette: its stdio wrapper and its HTTP reverse proxy, both in front of `wt serve`."""

from __future__ import annotations

from pathlib import Path

from .common import (
    ERAS,
    Config,
    Peer,
    Preparing,
    _describe,
    _free_port,
    _http_from_stdout,
    _http_on_port,
    _record_http,
    _record_stdio,
    _stop,
    _wt_stdio,
)

PEER = Peer("mcp-cassette", ("mcp-cassette[http]",), python="3.12")


async def prepare(ctx: Preparing, bin_dir: Path | None, reason: str) -> None:
    work = ctx.work
    universe = ctx.universe
    python = ctx.python
    our_env = ctx.our_env
    record_calls = ctx.record_calls
    configs = ctx.configs
    failed = ctx.failed
    cas_bin = bin_dir
    if cas_bin is None:
        failed("mcp-cassette", "stdio", "mcp-cassette serve", reason)
        failed("mcp-cassette", "http", "mcp-cassette serve", reason)
    else:
        cassette = str(cas_bin / "mcp-cassette")
        for era in ERAS:
            path = work / f"cassette-stdio-{era}.json"
            label = "mcp-cassette serve (stdio, per_method)"
            try:
                await _record_stdio(
                    cassette,
                    [
                        "record",
                        "--cassette",
                        str(path),
                        "--no-default-redactions",
                        "--",
                        python,
                        *_wt_stdio(universe),
                    ],
                    era,
                    record_calls,
                )
                configs.append(
                    Config(
                        "mcp-cassette",
                        "stdio",
                        era,
                        label,
                        stdio=(cassette, ["serve", str(path)], {}),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-cassette",
                        "stdio",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
        for era in ERAS:
            path = work / f"cassette-http-{era}.json"
            label = "mcp-cassette serve (Streamable HTTP, per_method)"
            upstream, url = _http_from_stdout(
                [python, "-m", "windtunnel", "serve", str(universe)], our_env
            )()
            try:
                port = _free_port()
                await _record_http(
                    [
                        cassette,
                        "record",
                        "--cassette",
                        str(path),
                        "--no-default-redactions",
                        "--url",
                        url,
                        "--port",
                        str(port),
                    ],
                    port,
                    era,
                    record_calls,
                    upstream,
                    work,
                )
                if not path.exists():
                    raise RuntimeError("the recorder wrote no cassette")
                configs.append(
                    Config(
                        "mcp-cassette",
                        "http",
                        era,
                        label,
                        start_http=_http_on_port([cassette, "serve", str(path)], "/mcp"),
                    )
                )
            except Exception as exc:
                configs.append(
                    Config(
                        "mcp-cassette",
                        "http",
                        era,
                        label,
                        failure=f"recording failed: {_describe(exc)}",
                    )
                )
            finally:
                _stop(upstream)
