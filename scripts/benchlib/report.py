"""Where results go: the machine description, JSON files and shared markdown sections.

Several benchmarks share one markdown file; each owns the text between its two markers
(`<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`) and rewrites nothing else.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "BenchResult",
    "finish_data",
    "header",
    "load_average",
    "machine",
    "start_data",
    "update_section",
    "write_json",
]

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


def render_section(
    data: dict[str, Any],
    options: Any,
    plot_file: str,
    plot: Callable[[dict[str, Any], Path], None],
    markdown: Callable[[dict[str, Any], str | None], str],
) -> BenchResult:
    """Draw the section's plot next to `--out` (when matplotlib is there), print the markdown,
    and hand both back."""
    plot_name = None
    if options.out is not None:
        path = options.out.parent / plot_file
        try:
            plot(data, path)
        except ImportError:
            print("matplotlib is not installed: no plot", file=sys.stderr)
        else:
            plot_name = path.name
    text = markdown(data, plot_name)
    print(text)
    return BenchResult(data, text)


def header(title: str, data: dict[str, Any]) -> list[str]:
    """A section's opening lines: title, machine, load average before and after, command."""
    m = data["machine"]
    line = (
        f"Machine: {m['cpu']}, nproc {m['nproc']}, {m['implementation']} {m['python']}, "
        f"{m['platform']}. Run {data['started_at']}, took {data['duration_s']:.0f} s."
    )
    start, end = m["load_average_1m"], data.get("load_average_1m_end")
    if start is not None and end is not None:
        line += f" Load average (1 min) {start:.2f} at the start, {end:.2f} at the end" + (
            ": other work shared the CPUs, expect noise."
            if max(start, end) > 0.5 * m["nproc"]
            else "."
        )
    out = [f"## {title}", "", line, "", f"Command: `{data['command']}`"]
    if data.get("quick"):
        out += ["", "**Quick run (smoke-test sizes): these numbers say nothing about speed.**"]
    return [*out, ""]


def start_data(name: str, options: Any) -> dict[str, Any]:
    """The fields every benchmark's JSON starts with; `finish_data` adds the rest."""
    import time

    return {
        "benchmark": name,
        "command": options.command,
        "quick": options.quick,
        "machine": machine(),
        "_t0": time.time(),
        "started_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def finish_data(data: dict[str, Any]) -> dict[str, Any]:
    import time

    data["duration_s"] = time.time() - data.pop("_t0")
    data["load_average_1m_end"] = load_average()
    return data
