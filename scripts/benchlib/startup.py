"""`scripts/bench startup`: how long `wt` takes to start, per command, in fresh processes.

Each command runs N times in a new interpreter, taking turns with a baseline that starts the same
interpreter and does nothing (`python -c pass`), so the figure above the baseline is ours whatever
the machine's load. Two runs per command: with Python's bytecode cache (how an installed `wt`
starts) and without it (`PYTHONDONTWRITEBYTECODE` set and the cache empty: every module compiled
from source, the worst case). The import breakdown of `wt --help` comes from `python -X importtime`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .measure import Spread, turns
from .report import BenchResult, finish_data, header, start_data
from .stdio_startup import measure_stdio, stdio_markdown

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "startup"
HELP = (
    "wall time from launch to exit of `wt --help`, validate, explain, plan and the serving "
    "commands' --help (fresh processes); `wt serve --stdio` spawn to its first tools/call answer "
    "(CPU and wall, against python -c pass)"
)

ROOT = Path(__file__).resolve().parents[2]
UNIVERSE = ROOT / "configs" / "examples" / "crm.universe.json"
PACK = ROOT / "configs" / "demo" / "pack.toml"
COMMANDS: dict[str, list[str]] = {
    "wt --help": ["--help"],
    "wt validate": ["validate", str(UNIVERSE)],
    "wt explain": ["explain", str(UNIVERSE), "client_lookup", '{"query": "Bluewing"}'],
    "wt plan": ["plan", str(PACK)],
    "wt serve --help": ["serve", "--help"],
    "wt run --help": ["run", "--help"],
    "wt record --help": ["record", "--help"],
}
BASELINE = "python -c pass"
TARGET_MS = 150.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=15, help="launches per command (default 15)")
    parser.add_argument(
        "--stdio-runs",
        type=int,
        default=7,
        help="spawned `wt serve --stdio` sessions per universe (default 7)",
    )


def _argv(name: str) -> list[str]:
    if name == BASELINE:
        return [sys.executable, "-c", "pass"]
    return [sys.executable, "-m", "windtunnel", *COMMANDS[name]]


def _launch_ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def _measure(runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    names = [BASELINE, *COMMANDS]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(runs):
        for name in turns(names, repeat):
            samples[name].append(_launch_ms(_argv(name), env))
    return samples


def _clear_bytecode() -> None:
    for cache in (ROOT / "orchestrator" / "windtunnel").rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def _import_breakdown(env: dict[str, str]) -> list[tuple[str, float]]:
    """The ten largest cumulative imports of `wt --help` (`-X importtime`), in ms."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "windtunnel", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[tuple[str, float]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, module = line.removeprefix("import time:").split("|")
        rows.append((module.strip(), int(cumulative) / 1000))
    rows.sort(key=lambda row: row[1], reverse=True)
    return rows[:10]


def run(options: argparse.Namespace) -> BenchResult:
    runs = 3 if options.quick else options.runs
    data = start_data(NAME, options)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "orchestrator")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        # A bytecode cache of our own, so the checkout's __pycache__ directories stay untouched.
        env["PYTHONPYCACHEPREFIX"] = tmp
        _launch_ms(_argv("wt plan"), env)  # fills the cache
        _launch_ms(_argv("wt validate"), env)
        _launch_ms(_argv("wt explain"), env)
        for name in ("wt serve --help", "wt run --help", "wt record --help"):
            _launch_ms(_argv(name), env)
        cached = _measure(runs, env)
        breakdown = _import_breakdown(env)
        stdio = measure_stdio(3 if options.quick else options.stdio_runs, env, Path(tmp))
    cold_env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
    cold_env.pop("PYTHONPYCACHEPREFIX")
    _clear_bytecode()  # nothing is written back with PYTHONDONTWRITEBYTECODE set
    cold = _measure(runs, cold_env)
    data.update(
        runs=runs,
        cached_ms={name: Spread.of(values).to_json() for name, values in cached.items()},
        cold_ms={name: Spread.of(values).to_json() for name, values in cold.items()},
        help_imports_ms=breakdown,
        stdio=stdio,
    )
    finish_data(data)
    return BenchResult(data, _markdown(data))


def _markdown(data: dict[str, Any]) -> str:
    lines = [
        *header("Start-up (`scripts/bench startup`)", data),
        f"Each command launched {data['runs']} times in a fresh interpreter, taking turns with "
        f"`{BASELINE}`; wall time from launch to exit, median [min-max]. Target: under "
        f"{TARGET_MS:.0f} ms for each (`--help` of `serve`, `run` and `record` loads their "
        "options, not the work behind them).",
        "",
        "| command | bytecode cached (ms) | over the baseline | no bytecode cache (ms) | verdict |",
        "|---|---:|---:|---:|---|",
    ]
    base = data["cached_ms"][BASELINE]["median"]
    for name, spread in data["cached_ms"].items():
        cold = data["cold_ms"][name]
        over = "" if name == BASELINE else f"+{spread['median'] - base:.0f}"
        verdict = ""
        if name in COMMANDS:
            verdict = "**PASS**" if spread["median"] < TARGET_MS else "**MISS**"
        lines.append(
            f"| `{name}` | {spread['median']:.0f} [{spread['min']:.0f}-{spread['max']:.0f}] "
            f"| {over} | {cold['median']:.0f} [{cold['min']:.0f}-{cold['max']:.0f}] | {verdict} |"
        )
    lines += [
        "",
        "Largest cumulative imports of `wt --help` (`python -X importtime -m windtunnel --help`, "
        "bytecode cached):",
        "",
        "| module | cumulative ms |",
        "|---|---:|",
        *(f"| `{module}` | {ms:.1f} |" for module, ms in data["help_imports_ms"]),
        *stdio_markdown(data["stdio"]),
    ]
    return "\n".join(lines)
