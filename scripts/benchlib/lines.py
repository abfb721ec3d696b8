"""`scripts/bench lines`: what one stderr line costs, an event's and a log line's (`line_format`).

One `tool_call` event as `wt serve` writes one per call: rendered as the stderr sink renders it
(`line_renderer("json")`: ordered, encoded, made terminal-safe), against the baseline of encoding
the same dict as it is (`encode_json`), taking turns in the same run. And one structlog log line
through `configure_logging`'s pipeline to a stream that discards it.
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from typing import Any

from .measure import Spread, turns
from .report import BenchResult, finish_data, header, start_data

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "lines"
HELP = "cost of one stderr line: an event through the line format, a structlog log line"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=15, help="rounds, taking turns (15)")
    parser.add_argument("--number", type=int, default=20_000, help="lines per timing (20,000)")


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def run(options: argparse.Namespace) -> BenchResult:
    import structlog

    from windtunnel.actors.events import make_event
    from windtunnel.canonical import encode_json
    from windtunnel.cli.logs import configure_logging
    from windtunnel.line_format import line_renderer

    rounds, number = (3, 2_000) if options.quick else (options.rounds, options.number)
    data = start_data(NAME, options)
    event = make_event(
        "tool_call",
        pack="serve",
        scenario="serve",
        unit_id="serve",
        upstream="crm",
        tool="client_lookup",
        args={"query": "Bluewing Logistics"},
        tier="exact",
        recording=0,
        is_error=False,
        duration_ms=0.08,
    )
    event["seq"] = 4
    render = line_renderer("json")
    configure_logging(fmt="json", stream=_Discard())
    logger = structlog.get_logger("windtunnel")
    runs: dict[str, Any] = {
        "baseline: encode_json(event)": lambda: encode_json(event),
        "event line (line_format)": lambda: render(event),
        "log line (structlog, configure_logging)": lambda: logger.warning(
            "accept_failed", error="EMFILE", retries=3
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for repeat in range(rounds):
        for name in turns(list(runs), repeat):
            seconds = min(timeit.repeat(runs[name], number=number, repeat=3))
            samples[name].append(seconds / number * 1e6)
    structlog.reset_defaults()
    spreads = {name: Spread.of(values) for name, values in samples.items()}
    base = statistics.median(samples["baseline: encode_json(event)"])
    data.update(
        rounds=rounds,
        number=number,
        us_per_line={name: spread.to_json() for name, spread in spreads.items()},
        ratio_to_baseline={
            name: statistics.median(values) / base for name, values in samples.items()
        },
    )
    finish_data(data)
    lines = [
        *header("stderr lines (`scripts/bench lines`)", data),
        f"{rounds} rounds taking turns, each the best of 3 timings of {number:,} lines; "
        "medians [min-max] in µs per line, and the ratio to the baseline of the same run.",
        "",
        "| line | µs per line | x baseline |",
        "|---|---:|---:|",
        *(
            f"| {name} | {spread.median:.2f} [{spread.min:.2f}-{spread.max:.2f}] | "
            f"{data['ratio_to_baseline'][name]:.2f} |"
            for name, spread in spreads.items()
        ),
    ]
    text = "\n".join(lines)
    print(text)
    return BenchResult(data, text)
