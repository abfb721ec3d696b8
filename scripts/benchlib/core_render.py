"""How `scripts/bench core` shows its results: console summary, markdown section, PNG plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["console", "markdown", "plot"]

_ADOPTED = """\
The core carries three speed-ups first measured by this benchmark and since adopted:
`canonical.args_key` (an args object with scalar values canonicalized inline, one sort), an
exact-tier early exit with prebuilt hits in `UniverseIndex.resolve` for stateless tools, `nearest`
by subset intersection over posting lists (`matching.py`), and the cyclic GC paused while
`load_universe` and the index allocate (`_gc.paused_gc`)."""


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return (
            f"{value:.2f} s" if value >= 1 else f"{value * 1e3:,.{1 if value >= 0.01 else 2}f} ms"
        )
    if unit == "/s":
        return f"{value / 1e3:,.0f}k/s"
    if value >= 1000:
        return f"{value / 1e3:,.2f} ms"
    return f"{value:,.1f} µs"


def _cell(spread: dict[str, Any], unit: str) -> str:
    if spread["n"] == 1:
        return _fmt(spread["median"], unit)
    low, high = _fmt(spread["min"], unit), _fmt(spread["max"], unit)
    return f"{_fmt(spread['median'], unit)} [{low} - {high}]"


def console(data: dict[str, Any]) -> str:
    sizes, results, units = data["sizes"], data["results"], data["metrics"]
    width = max(len(name) for name in units)
    lines = [f"{'metric':<{width}}  " + "  ".join(f"{n:>14,}" for n in sizes) + "    growth"]
    for name, meta in units.items():
        cells = [_fmt(results[str(n)]["metrics"][name]["median"], meta["unit"]) for n in sizes]
        growth = data["growth"][name]
        lines.append(
            f"{name:<{width}}  " + "  ".join(f"{c:>14}" for c in cells) + f"    x{growth:.2f}"
        )
    for ratio in results[str(sizes[-1])]["ratios"]:
        values = [f"{results[str(n)]['ratios'][ratio]:>13.1f}x" for n in sizes]
        lines.append(f"{ratio:<{width}}  " + "  ".join(values))
    for target in data["targets"]:
        measured = (
            _fmt(target["value"], units[target["metric"]]["unit"])
            if target["value"] is not None
            else "not measured"
        )
        if target["value_wall"] is not None:
            wall = _fmt(target["value_wall"], units[target["metric"]]["unit"])
            measured += f" CPU time ({wall} wall clock)"
        lines.append(f"{target['verdict']:<4}  {target['text']} at {target['size']:,}: {measured}")
    return "\n".join(lines)


def markdown(data: dict[str, Any], plot_name: str | None) -> str:
    sizes, results, units = data["sizes"], data["results"], data["metrics"]
    m = data["machine"]
    first, last = sizes[0], sizes[-1]
    out = ["## Universe core", ""]
    out.append(
        f"Machine: {m['cpu']}, nproc {m['nproc']}, {m['implementation']} {m['python']}, "
        f"{m['platform']}. Run {data['started_at']}, took {data['duration_s']:.0f} s."
    )
    start_load, end_load = m["load_average_1m"], data["load_average_1m_end"]
    if start_load is not None and end_load is not None:
        out[-1] += (
            f" Load average (1 min) {start_load:.2f} at the start, {end_load:.2f} at the end"
            + (
                ": other work shared the CPUs, expect noise."
                if max(start_load, end_load) > 0.5 * m["nproc"]
                else "."
            )
        )
    out.append("")
    out.append(f"Command: `{data['command']}`")
    if data["quick"]:
        out += ["", "**Quick run (smoke-test sizes): these numbers say nothing about speed.**"]
    sample = results[str(last)]
    out += [
        "",
        "Workload: a generated universe of four tools (2-4 argument keys: a unique id next to "
        "low-cardinality flags, booleans and a list; `client_lookup` matches on "
        "`arg_keys: [query]`; small JSON results), written with `write_universe` "
        f"({sample['file_bytes'] / 1e6:.1f} MB at {last:,} recordings). Exact calls are every "
        "recording's args in a fresh dict with another key order, shuffled; keyed calls add "
        "`verbose: true` to every `client_lookup` recording; misses are recorded calls with "
        f"their id replaced by an unseen one ({sample['calls']['misses']} per repeat). The worst "
        "case for `nearest` runs on a separate universe of the same size, one tool whose three "
        "flags are each set on a third of the recordings and never together, probed with all "
        "three set. Each cell "
        f"is the median of {data['repeats']} repeats [min - max]; the nearest p99 pools every "
        "call of every repeat. Within a repeat, the resolvers and the dict baseline take "
        "turns in a rotating order, so all of a group see the same background load, and each "
        "ratio below is the median of per-repeat ratios. GC stays enabled while timing, as in "
        "production. Durations, rates and means are **CPU time** of this single-threaded "
        "process (`time.process_time`): on a shared machine wall time also bills us for the "
        "time the OS gave our core to other work (on an idle one the two agree; wall-clock "
        "medians are in the JSON as `metrics_wall` and next to each target below). The nearest "
        "p99 and the slowest miss are wall time per call.",
        "",
        "### Results",
        "",
        "| metric | " + " | ".join(f"{n:,}" for n in sizes) + f" | growth {first:,} → {last:,} |",
        "|---|" + "---:|" * len(sizes) + "---:|",
    ]
    for name, meta in units.items():
        cells = [_cell(results[str(n)]["metrics"][name], meta["unit"]) for n in sizes]
        out.append(
            f"| {meta['label']} | " + " | ".join(cells) + f" | x{data['growth'][name]:.2f} |"
        )
    out += [
        "",
        "Growth is the median at the largest size over the median at the smallest: x1 is flat, "
        f"x{last // first} is linear in the number of recordings.",
        "",
        "### Cost over a plain dict lookup",
        "",
        "How many times slower than `table[key]` with the key precomputed (the same tuple key "
        "the index uses), same calls, same repeats: the price of canonicalizing the args and "
        "dispatching.",
        "",
        "| ratio | " + " | ".join(f"{n:,}" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for ratio in sample["ratios"]:
        values = [f"{results[str(n)]['ratios'][ratio]:.1f}x" for n in sizes]
        out.append(f"| {ratio} | " + " | ".join(values) + " |")
    out += [
        "",
        "### Targets",
        "",
        "Verdicts are on the CPU-time median; the wall-clock median of the same run is shown for "
        "comparison.",
        "",
        "| target | at | measured (CPU) | wall clock | verdict |",
        "|---|---:|---:|---:|---|",
    ]
    for t in data["targets"]:
        unit = units[t["metric"]]["unit"]
        measured = "—" if t["value"] is None else _fmt(t["value"], unit)
        wall = "—" if t["value_wall"] is None else _fmt(t["value_wall"], unit)
        out.append(f"| {t['text']} | {t['size']:,} | {measured} | {wall} | **{t['verdict']}** |")
    out += [
        "",
        f"Slowest single miss: {_fmt(sample['nearest_max_us'], 'us')}.",
        "",
        _ADOPTED,
    ]
    if plot_name is not None:
        out += ["", f"![Universe core scaling]({plot_name})"]
    return "\n".join(out) + "\n"


def plot(data: dict[str, Any], path: Path) -> None:
    """Three panels: durations, throughputs and nearest latency against recordings (log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes, results, units = data["sizes"], data["results"], data["metrics"]

    def series(ax: Any, name: str, scale: float, style: str, color: str) -> None:
        spreads = [results[str(n)]["metrics"][name] for n in sizes]
        med = [s["median"] * scale for s in spreads]
        low = [(s["median"] - s["min"]) * scale for s in spreads]
        high = [(s["max"] - s["median"]) * scale for s in spreads]
        label = units[name]["label"]
        ax.errorbar(sizes, med, yerr=[low, high], fmt=style, color=color, capsize=3, label=label)

    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    ax = axes[0]
    series(ax, "load_s", 1e3, "o-", "C0")
    series(ax, "index_build_s", 1e3, "s-", "C1")
    ax.axhline(1000, color="red", linestyle=":", label="target: load < 1 s")
    ax.set(title="Startup", ylabel="CPU milliseconds")
    ax = axes[1]
    series(ax, "dict_lookup_per_s", 1, "^-", "k")
    series(ax, "exact_resolve_per_s", 1, "o-", "C0")
    series(ax, "keyed_resolve_per_s", 1, "s-", "C1")
    series(ax, "call_tool_per_s", 1, "d-", "C2")
    ax.axhline(200_000, color="red", linestyle=":", label="target: ≥ 200k exact/s")
    ax.set(title="Throughput (in-process, one thread)", ylabel="calls per CPU second")
    ax = axes[2]
    series(ax, "nearest_us", 1, "o-", "C0")
    series(ax, "nearest_p99_us", 1, "x-", "C1")
    series(ax, "nearest_adversarial_us", 1, "v-", "C3")
    ax.axhline(1000, color="red", linestyle=":", label="target: < 1 ms")
    ax.set(title="nearest on a miss (p99: wall clock)", ylabel="microseconds per call")
    for ax in axes:
        ax.set(xscale="log", yscale="log", xlabel="recordings in the universe")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7.5)
    m = data["machine"]
    fig.suptitle(
        f"Wind Tunnel universe core — {m['cpu']}, nproc {m['nproc']}, Python {m['python']}"
        + (" — QUICK RUN" if data["quick"] else ""),
        fontsize=11,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
