"""`scripts/bench peers`: end to end as an agent sees it, against the peer replay tools (#8).

N sequential `tools/call` through the official Python SDK client (`mcp.Client`, both the
`initialize` handshake, `mode="legacy"`, and the default `mode="auto"`, the 2026-07-28 era), over
stdio and over HTTP, against:

- a **ceiling** per transport: canned bytes, no SDK (`target_server.py stdio-canned` / `http-raw`),
  answering each method with the bytes our server sends for it;
- our server, as users run it: `wt serve --stdio FILE` and `wt serve FILE`;
- the peers on PyPI, each in its own scratch venv under `~/.cache/windtunnel-bench/peers` (made
  on demand, never committed): mcp-rec (stdio), mcp-cassette (stdio, Streamable HTTP; Python
  ≥ 3.12), agent-vcr (stdio, legacy HTTP+SSE), mcp-recorder (Streamable HTTP; starlette 0.52.1).

Each peer serves the same one-tool recording, recorded *through the peer's own recorder* in front
of `wt serve` (agent-vcr's recorder hangs with pipe clients, so its cassette is built with its
own pydantic models from mcp-rec's wire log). Consume-once peers get enough recorded calls for a
whole measurement. Per round and per transport and era: start every server (HTTP) or let a
client spawn it (stdio), connect a client to each, `list_tools`, warm up; then the servers take
turns, 25 calls at a time, until each has made N, every result checked, each timed on its own
calls. Rounds rotate who goes first.
A configuration that cannot be installed, recorded or served is a row with the measured reason.
"""

from __future__ import annotations

from .common import HELP, NAME
from .runner import _verdicts, add_arguments, run

__all__ = ["HELP", "NAME", "_verdicts", "add_arguments", "run"]
