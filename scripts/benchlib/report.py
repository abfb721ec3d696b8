"""Where results go: the machine description, JSON files and shared markdown sections.

Several benchmarks share one markdown file; each owns the text between its two markers
(`<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`) and rewrites nothing else.
"""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path
from typing import Any

__all__ = ["BenchResult", "load_average", "machine", "update_section", "write_json"]

_PREAMBLE = """# Benchmarks

Produced by `scripts/bench`; each section is rewritten by its own subcommand and nothing else.
Numbers are from one machine, one run: compare rows of the same run, not runs across machines.
"""


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else "unknown"


def load_average() -> float | None:
    """The 1-minute load average: other work on the machine makes every number noisier."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average_1m": load_average(),
    }


def update_section(path: Path, name: str, body: str) -> None:
    """Replace benchmark `name`'s section of `path` with `body`, or append it; create the file."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    section = f"{start}\n{body.strip()}\n{end}"
    text = path.read_text() if path.exists() else _PREAMBLE
    begin, finish = text.find(start), text.find(end)
    if begin != -1 and finish > begin:
        text = text[:begin] + section + text[finish + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


class BenchResult:
    """What a benchmark hands back: machine-readable data and its markdown section body."""

    def __init__(self, data: dict[str, Any], markdown: str) -> None:
        self.data = data
        self.markdown = markdown
