"""`scripts/bench --quick core` runs end to end and reports every metric (not how fast)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "scripts" / "bench"

METRICS = {
    "load_s",
    "index_build_s",
    "dict_lookup_per_s",
    "exact_resolve_per_s",
    "keyed_resolve_per_s",
    "call_tool_per_s",
    "nearest_us",
    "nearest_p99_us",
    "nearest_adversarial_us",
}
RATIOS = {"exact_vs_dict", "keyed_vs_dict", "call_tool_vs_dict"}
SPREAD = {"median", "min", "max", "q1", "q3", "n"}


def _bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_quick_core_reports_every_metric_for_every_size(tmp_path: Path) -> None:
    """The JSON has a positive median and a spread for every metric and ratio at every size."""
    out = tmp_path / "core.json"
    done = _bench("--quick", "core", "--json", out)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["benchmark"] == "core"
    assert data["quick"] is True
    assert data["sizes"]
    assert set(data["results"]) == {str(n) for n in data["sizes"]}
    for size, result in data["results"].items():
        assert result["recordings"] == int(size)
        assert set(result["metrics"]) == METRICS
        assert set(result["metrics_wall"]) == METRICS
        for name, spread in result["metrics"].items():
            assert set(spread) == SPREAD, name
            assert spread["min"] <= spread["median"] <= spread["max"], name
            assert spread["median"] > 0, name
        assert set(result["ratios"]) == RATIOS
    assert set(data["growth"]) == METRICS
    assert [t["metric"] for t in data["targets"]] == [
        "exact_resolve_per_s",
        "nearest_us",
        "load_s",
    ]


def test_quick_core_rewrites_only_its_own_section(tmp_path: Path) -> None:
    """`--out` replaces the text between the core markers and keeps the rest of the file."""
    md = tmp_path / "benchmarks.md"
    md.write_text(
        "# Benchmarks\n\nintro\n\n<!-- bench:core:start -->\nstale\n<!-- bench:core:end -->\n\n"
        "<!-- bench:other:start -->\nother section\n<!-- bench:other:end -->\n"
    )
    done = _bench("--quick", "--out", md, "core")
    assert done.returncode == 0, done.stderr
    text = md.read_text()
    assert text.startswith("# Benchmarks\n\nintro\n\n<!-- bench:core:start -->\n## Universe core\n")
    assert "stale" not in text
    assert text.count("<!-- bench:core:start -->") == 1
    assert text.endswith("<!-- bench:other:start -->\nother section\n<!-- bench:other:end -->\n")
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "bench-core.png").stat().st_size > 0
        assert "![Universe core scaling](bench-core.png)" in text
