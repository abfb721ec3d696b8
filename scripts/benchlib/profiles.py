"""Where a server's time goes: cProfile stats summed by the package each function lives in."""

from __future__ import annotations

import pstats
from pathlib import Path
from typing import Any

__all__ = ["BUCKETS", "summarize"]

# (bucket, path fragment), first match wins: the order puts the narrow fragments first.
BUCKETS: tuple[tuple[str, str], ...] = (
    ("our HTTP worker (Trio I/O around hypercorn)", "/windtunnel/mcp/_http_worker"),
    ("Wind Tunnel (matcher, replay, call log)", "/windtunnel/"),
    ("MCP SDK request handling", "/mcp/"),
    ("MCP SDK types", "/mcp_types/"),
    ("pydantic validation / serialization", "/pydantic"),
    ("Starlette", "/starlette/"),
    ("hypercorn", "/hypercorn/"),
    ("h11 (HTTP/1.1 parsing)", "/h11/"),
    ("anyio (SDK's async layer)", "/anyio/"),
    ("trio (event loop, sockets)", "/trio/"),
    ("json (stdlib)", "/json/"),
    ("benchmark harness", "/benchlib/"),
)
OTHER = "other (stdlib, builtins)"


def _bucket(filename: str) -> str:
    for name, fragment in BUCKETS:
        if fragment in filename:
            return name
    return OTHER


def _builtin_bucket(name: str) -> str:
    """C functions have no file; their name says whose they are."""
    if "pydantic" in name:
        return "pydantic validation / serialization"
    if "socket" in name or "posix.write" in name or "posix.read" in name:
        return "pipe/socket syscalls (a write wakes the peer)"
    return OTHER


def summarize(
    path: Path, *, calls: int, top: int = 12, waits: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Self time per bucket (share of the profiled total) and the costliest functions.

    The idle wait for the next request (`epoll`, the stdin watcher thread, and the functions
    named in `waits`) is left out: it is time the server had nothing to do, not time a call costs.
    """
    stats = pstats.Stats(str(path))
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    buckets: dict[str, float] = {}
    functions: list[tuple[float, float, str]] = []
    idle = 0.0
    for (filename, line, name), (_cc, _nc, tottime, cumtime, _callers) in raw.items():
        label = f"{Path(filename).name}:{line}({name})" if filename != "~" else name
        if (
            "poll" in name
            or "select" in name
            or name in ("<method 'acquire' of '_thread.lock' objects>",)
            or any(fragment in name for fragment in waits)
        ):
            idle += tottime
            continue
        bucket = _builtin_bucket(name) if filename == "~" else _bucket(filename)
        buckets[bucket] = buckets.get(bucket, 0.0) + tottime
        functions.append((tottime, cumtime, f"{label} [{filename.split('site-packages/')[-1]}]"))
    busy = sum(buckets.values())
    functions.sort(reverse=True)
    return {
        "calls": calls,
        "busy_s": busy,
        "idle_s": idle,
        "busy_us_per_call": busy / calls * 1e6 if calls else 0.0,
        "buckets": {
            name: {"s": s, "share": s / busy if busy else 0.0, "us_per_call": s / calls * 1e6}
            for name, s in sorted(buckets.items(), key=lambda kv: -kv[1])
        },
        "top_self": [
            {
                "function": label,
                "self_us_per_call": t / calls * 1e6,
                "cum_us_per_call": c / calls * 1e6,
            }
            for t, c, label in functions[:top]
        ],
    }


def cumulative(path: Path, names: dict[str, str], *, calls: int) -> dict[str, float]:
    """Cumulative µs per call of chosen functions: label -> 'file-fragment:function'."""
    raw: dict[Any, Any] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for label, spec in names.items():
        fragment, func = spec.rsplit(":", 1)
        total = 0.0
        for (filename, _line, name), (_cc, _nc, _tt, cumtime, _callers) in raw.items():
            if name == func and fragment in filename:
                total = max(total, cumtime)
        out[label] = total / calls * 1e6 if calls else 0.0
    return out
