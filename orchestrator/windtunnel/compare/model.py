"""`RunDiff`: what changed per scenario between a base run and a new run.

Per scenario: the runs and passes on each side, the change (`regressed` when the pass rate fell,
`improved` when it rose, `added` / `removed` when a side lacks the scenario), its invalid runs
and injected faults, Fisher's exact p-value for the pass-rate change, the divergences that are
new, gone or unchanged (matched by upstream, method, tool, canonical args and reason: a
`resources/read`, `prompts/get` or `completion/complete` that left the recording is one too, its
target in `tool`), and for each
changed scenario the difference between the call sequences of one unit on each side.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from ..calls import MCPCall
from ..canonical import canonical_json
from ..divergence import divergence_label
from ..runner.fault_checks import fault_label, injected_fault
from ..runner.policies import render_json
from ..runner.trace import Trace
from ..runner.unit_order import RANKS
from .fisher import ALPHA, fisher_exact_p
from .runs import RunData

__all__ = [
    "DIFF_FORMAT_VERSION",
    "FAIL_ON",
    "Change",
    "DivergenceDiff",
    "KeyDifference",
    "RunDiff",
    "ScenarioDiff",
    "Side",
    "call_line",
    "diff_runs",
    "regressions",
]

DIFF_FORMAT_VERSION = 1
Change: TypeAlias = Literal["regressed", "improved", "unchanged", "added", "removed"]
FAIL_ON = ("regression", "significant", "new-divergence", "removed")
"""What `--fail-on` may name: any pass-rate drop or status flip; only drops significant under
Fisher's exact test; any new divergence; a scenario the new run lacks."""

_ARGS_LIMIT = 200


class Side(msgspec.Struct, kw_only=True):
    """One scenario in one run: `status` is `passed` (every run), `failed` (none) or `mixed`."""

    runs: int
    passed: int
    errors: int
    pass_rate: float
    status: Literal["passed", "failed", "mixed"]
    divergences: int
    invalid: int = 0
    """Runs whose declared fault was never injected (not passes)."""
    faults_injected: int = 0
    """Calls answered with an injected fault, over the scenario's runs."""


class KeyDifference(msgspec.Struct, kw_only=True):
    """One argument that kept a call from its nearest recording (JSON text; null: absent)."""

    key: str
    called: str | None
    recorded: str | None


class DivergenceDiff(msgspec.Struct, kw_only=True):
    """One divergence (upstream, method, tool, args, reason) and how often each run had it.
    `method` is `tools/call`, or the request that left the recording (`tool`: its URI, prompt
    name or completion ref)."""

    upstream: str | None
    method: str = "tools/call"
    tool: str
    args: Any
    reason: str | None
    policy: str | None
    base: int
    new: int
    nearest_index: int | None = None
    differences: list[KeyDifference] = msgspec.field(default_factory=list)

    @property
    def label(self) -> str:
        what = divergence_label(
            {"upstream": self.upstream, "method": self.method, "tool": self.tool}
        )
        return f"{what}({render_json(self.args, _ARGS_LIMIT)})"

    @property
    def is_request(self) -> bool:
        """A request other than `tools/call` left the recording."""
        return self.method != "tools/call"


class ScenarioDiff(msgspec.Struct, kw_only=True):
    """One scenario across the two runs. `flipped`: its status (passed / failed / mixed)
    differs between them; `significant`: Fisher's exact p-value is below the diff's alpha."""

    scenario: str
    change: Change
    base: Side | None
    new: Side | None
    flipped: bool
    p_value: float
    significant: bool
    new_divergences: list[DivergenceDiff]
    gone_divergences: list[DivergenceDiff]
    unchanged_divergences: list[DivergenceDiff]
    compared_units: list[str] = msgspec.field(default_factory=list)
    calls_diff: list[str] = msgspec.field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.change != "unchanged" or bool(self.new_divergences or self.gone_divergences)


class DiffCounts(msgspec.Struct, kw_only=True):
    scenarios: int = 0
    regressed: int = 0
    significant_regressions: int = 0
    improved: int = 0
    unchanged: int = 0
    added: int = 0
    removed: int = 0
    new_divergences: int = 0
    gone_divergences: int = 0
    unchanged_divergences: int = 0
    new_request_divergences: int = 0
    """Of the new divergences, requests other than `tools/call` (reads, prompt gets,
    completions); `gone_request_divergences` likewise."""
    gone_request_divergences: int = 0


class RunDiff(msgspec.Struct, kw_only=True):
    """The whole comparison, as `wt diff --json` writes it."""

    base: str
    new: str
    base_pack: str
    new_pack: str
    base_units: int
    new_units: int
    base_pass_rate: float
    new_pass_rate: float
    alpha: float
    counts: DiffCounts
    scenarios: list[ScenarioDiff]
    windtunnel_diff: int = DIFF_FORMAT_VERSION
    base_invalid: int = 0
    new_invalid: int = 0
    """Units of each run whose declared fault was never injected."""


def _side(rows: Sequence[Trace]) -> Side:
    passed = sum(1 for row in rows if row.status == "passed")
    status: Literal["passed", "failed", "mixed"] = (
        "passed" if passed == len(rows) else "failed" if passed == 0 else "mixed"
    )
    return Side(
        runs=len(rows),
        passed=passed,
        errors=sum(1 for row in rows if row.status == "error"),
        pass_rate=passed / len(rows),
        status=status,
        divergences=sum(row.divergence_count for row in rows),
        invalid=sum(1 for row in rows if row.status == "invalid"),
        faults_injected=sum(row.faults_injected for row in rows),
    )


_Key: TypeAlias = "tuple[str | None, str, str, str, str | None]"


def _divergence_warnings(rows: Iterable[Trace]) -> Iterable[dict[str, Any]]:
    for row in rows:
        for warning in row.warnings:
            if warning.get("event") == "universe_divergence":
                yield warning


def _key(warning: dict[str, Any]) -> _Key:
    try:
        args = canonical_json(warning.get("args"))
    except (TypeError, ValueError):
        args = repr(warning.get("args"))
    upstream = warning.get("upstream")
    reason = warning.get("reason")
    return (
        upstream if isinstance(upstream, str) else None,
        str(warning.get("method", "tools/call")),
        str(warning.get("tool")),
        args,
        reason if isinstance(reason, str) else None,
    )


def _differences(warning: dict[str, Any]) -> tuple[int | None, list[KeyDifference]]:
    nearest = warning.get("nearest")
    if not isinstance(nearest, dict):
        return None, []
    index = nearest.get("index")
    called = warning.get("args")
    args: dict[str, Any] = called if isinstance(called, dict) else {}
    stored = nearest.get("args")
    recorded: dict[str, Any] | None = stored if isinstance(stored, dict) else None
    keys = nearest.get("differing_keys")
    out: list[KeyDifference] = []
    for key in keys if isinstance(keys, list) else []:
        name = str(key)
        out.append(
            KeyDifference(
                key=name,
                called=render_json(args[name], _ARGS_LIMIT) if name in args else None,
                recorded=(
                    render_json(recorded[name], _ARGS_LIMIT)
                    if recorded is not None and name in recorded
                    else None
                ),
            )
        )
    return (index if isinstance(index, int) else None), out


def _divergence_diffs(
    base_rows: Sequence[Trace], new_rows: Sequence[Trace]
) -> tuple[list[DivergenceDiff], list[DivergenceDiff], list[DivergenceDiff]]:
    base_counts: Counter[_Key] = Counter()
    new_counts: Counter[_Key] = Counter()
    examples: dict[_Key, dict[str, Any]] = {}
    for counts, rows in ((base_counts, base_rows), (new_counts, new_rows)):
        for warning in _divergence_warnings(rows):
            key = _key(warning)
            counts[key] += 1
            examples[key] = warning  # the new run's example wins: its args and nearest
    new: list[DivergenceDiff] = []
    gone: list[DivergenceDiff] = []
    same: list[DivergenceDiff] = []
    for key in dict.fromkeys([*new_counts, *base_counts]):
        warning = examples[key]
        index, differences = _differences(warning)
        item = DivergenceDiff(
            upstream=key[0],
            method=key[1],
            tool=key[2],
            args=warning.get("args"),
            reason=key[4],
            policy=warning.get("policy") if isinstance(warning.get("policy"), str) else None,
            base=base_counts[key],
            new=new_counts[key],
            nearest_index=index,
            differences=differences,
        )
        (new if not item.base else gone if not item.new else same).append(item)
    return new, gone, same


def _change(base: Side | None, new: Side | None) -> Change:
    if base is None:
        return "added"
    if new is None:
        return "removed"
    if new.pass_rate < base.pass_rate:
        return "regressed"
    if new.pass_rate > base.pass_rate:
        return "improved"
    return "unchanged"


def call_line(call: MCPCall) -> str:
    """One call of a sequence diff: `crm.client_lookup {"query":"x"}` (a request: `crm
    resources/read test://a {}`), and how it went."""
    what = divergence_label(
        {"upstream": call.upstream, "method": call.method, "tool": call.tool_name}
    )
    line = f"{what} {render_json(call.args, _ARGS_LIMIT)}"
    divergence = call.divergence
    fault = injected_fault(call)
    if divergence is not None:
        line += f"  -> diverged: {divergence.get('reason')}"
    elif fault is not None:
        line += f"  -> fault: {fault_label(fault)}"
    elif call.is_error:
        line += "  -> error"
    return line


def _pick_units(base_rows: Sequence[Trace], new_rows: Sequence[Trace]) -> tuple[Trace, Trace]:
    """The new run's first unit that did worse (else its first), and the base unit of the same
    repeat (else the base run's first)."""
    new = min(new_rows, key=lambda row: (RANKS.get(row.status, 0), row.repeat))
    same_repeat = [row for row in base_rows if row.repeat == new.repeat]
    return (same_repeat or list(base_rows))[0], new


def _calls_diff(base_run: RunData, new_run: RunData, base: Trace, new: Trace) -> list[str]:
    base_calls = base_run.full_trace(base).mcp_calls
    new_calls = new_run.full_trace(new).mcp_calls
    before = [call_line(call) for call in base_calls]
    after = [call_line(call) for call in new_calls]
    return list(
        difflib.unified_diff(
            before, after, f"base {base.unit_id}", f"new {new.unit_id}", n=3, lineterm=""
        )
    )


def _scenario_diff(name: str, base_run: RunData, new_run: RunData, alpha: float) -> ScenarioDiff:
    base_rows = base_run.scenarios.get(name, [])
    new_rows = new_run.scenarios.get(name, [])
    base = _side(base_rows) if base_rows else None
    new = _side(new_rows) if new_rows else None
    p_value = 1.0
    if base is not None and new is not None:
        p_value = fisher_exact_p(
            base.passed, base.runs - base.passed, new.passed, new.runs - new.passed
        )
    added, gone, same = _divergence_diffs(base_rows, new_rows)
    diff = ScenarioDiff(
        scenario=name,
        change=_change(base, new),
        flipped=base is not None and new is not None and base.status != new.status,
        base=base,
        new=new,
        p_value=p_value,
        significant=p_value < alpha,
        new_divergences=added,
        gone_divergences=gone,
        unchanged_divergences=same,
    )
    if diff.changed and base_rows and new_rows:
        base_unit, new_unit = _pick_units(base_rows, new_rows)
        diff.compared_units = [base_unit.unit_id, new_unit.unit_id]
        diff.calls_diff = _calls_diff(base_run, new_run, base_unit, new_unit)
    return diff


_ORDER = {"regressed": 0, "removed": 1, "added": 2, "improved": 3, "unchanged": 4}


def _invalid(run: RunData) -> int:
    return sum(1 for rows in run.scenarios.values() for row in rows if row.status == "invalid")


def _pass_rate(run: RunData) -> float:
    passed = sum(1 for rows in run.scenarios.values() for row in rows if row.status == "passed")
    return passed / run.units


def diff_runs(base_run: RunData, new_run: RunData, *, alpha: float = ALPHA) -> RunDiff:
    """Compare every scenario of either run: the changed ones first (regressions leading),
    the rest by name."""
    names = list(dict.fromkeys([*base_run.scenarios, *new_run.scenarios]))
    scenarios = [_scenario_diff(name, base_run, new_run, alpha) for name in names]
    scenarios.sort(key=lambda d: (_ORDER[d.change], not d.changed, d.scenario))
    counts = DiffCounts(scenarios=len(scenarios))
    for d in scenarios:
        setattr(counts, d.change, getattr(counts, d.change) + 1)
        counts.significant_regressions += d.change == "regressed" and d.significant
        counts.new_divergences += len(d.new_divergences)
        counts.gone_divergences += len(d.gone_divergences)
        counts.unchanged_divergences += len(d.unchanged_divergences)
        counts.new_request_divergences += sum(item.is_request for item in d.new_divergences)
        counts.gone_request_divergences += sum(item.is_request for item in d.gone_divergences)
    return RunDiff(
        base=str(base_run.path),
        new=str(new_run.path),
        base_pack=base_run.pack,
        new_pack=new_run.pack,
        base_units=base_run.units,
        new_units=new_run.units,
        base_pass_rate=_pass_rate(base_run),
        new_pass_rate=_pass_rate(new_run),
        alpha=alpha,
        counts=counts,
        scenarios=scenarios,
        base_invalid=_invalid(base_run),
        new_invalid=_invalid(new_run),
    )


def regressions(diff: RunDiff, fail_on: Iterable[str]) -> list[str]:
    """Why the diff fails the gate (`--fail-on`), one line each; empty when it passes."""
    wanted = set(fail_on)
    reasons: list[str] = []
    for d in diff.scenarios:
        if d.change == "regressed" and (
            "regression" in wanted or ("significant" in wanted and d.significant)
        ):
            reasons.append(f"{d.scenario}: regressed")
        if d.change == "removed" and "removed" in wanted:
            reasons.append(f"{d.scenario}: missing from the new run")
        if d.new_divergences and "new-divergence" in wanted:
            reasons.append(f"{d.scenario}: {len(d.new_divergences)} new divergence(s)")
    return reasons
