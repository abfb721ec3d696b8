"""Small universes and TOML packs, written to a directory, for the input-fault tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = [
    "SPARSE_SIZE",
    "fifo",
    "nested",
    "sparse",
    "universe_doc",
    "write_pack",
    "write_universe",
]

SPARSE_SIZE = 2 * 1024**3


def universe_doc(tool: str = "lookup", result: Any = None) -> dict[str, Any]:
    """One tool with one recording: `tool(q="a")` answers `result` (default `{"name": "A"}`)."""
    return {
        "windtunnel_universe": 1,
        "tools": [{"name": tool, "input_schema": {"type": "object"}}],
        "recordings": [{"tool_name": tool, "args": {"q": "a"}, "result": result or {"name": "A"}}],
    }


def write_universe(path: Path, doc: dict[str, Any] | None = None) -> Path:
    path.write_text(json.dumps(doc or universe_doc()))
    return path


def nested(depth: int, leaf: Any = "bottom") -> Any:
    """An object nested `depth` levels deep."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def fifo(path: Path) -> Path:
    """A FIFO nobody writes to: opening it for reading blocks forever."""
    os.mkfifo(path)
    return path


def sparse(path: Path, size: int = SPARSE_SIZE) -> Path:
    """A sparse file of `size` bytes (zeros) that takes no disk."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_pack(
    root: Path,
    scenarios: dict[str, str],
    *,
    tool: str = "lookup",
    agent: list[str] | None = None,
    name: str = "inputs",
    timeout_s: float = 30,
    concurrency: int = 2,
) -> Path:
    """`root/pack.toml`: one scenario per `{name: universe file}`, each calling `tool(q="a")`
    through the scripted agent (or the command `agent`) and answering "done"."""
    lines = [f"[pack]\nname = {_toml(name)}\nconcurrency = {concurrency}\ntimeout_s = {timeout_s}"]
    if agent is None:
        lines.append('[agent]\nkind = "scripted"')
    else:
        lines.append(f'[agent]\nkind = "command"\ncommand = {json.dumps(agent)}')
    for scenario, universe in scenarios.items():
        lines.append(
            f'[[scenario]]\nname = {_toml(scenario)}\ntask = "t"\n'
            f"upstreams = {{ u = {_toml(universe)} }}\n"
            f'[[scenario.plan]]\ntool = {_toml(tool)}\nargs = {{ q = "a" }}'
        )
        if agent is None:
            lines.append('[scenario.scripted]\nfinal_answer = "done"')
    path = root / "pack.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
