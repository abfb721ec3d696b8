"""Scoring a trace: the constraint layer (policies) and quality scorers, kept apart.

`evaluate` runs both over a finished trace and fills `verdicts`, `scores` and `status`:
`"error"` when the agent crashed or timed out, `"invalid"` when a fault the unit declared was
never injected (the run did not test what it was meant to), `"passed"` when every policy passed
and every scorer reached its threshold, `"failed"` otherwise. A policy or scorer that raises
fails with the exception as its reason; it never takes the run down.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from .policies import (
    CallBudget,
    CallOrder,
    Coverage,
    ForbiddenCall,
    NoDivergence,
    Policy,
    RequiredCall,
    call_budget,
    call_order,
    coverage,
    forbidden_call,
    no_divergence,
    required_call,
)
from .repeats import all_passed, any_passed, pass_at_k, pass_hat_k
from .scorers import Contains, JsonField, Regex, Scorer, contains, json_field, regex
from .trace import Score, Status, Trace, Verdict, undelivered_faults

__all__ = [
    "CallBudget",
    "CallOrder",
    "Contains",
    "Coverage",
    "ForbiddenCall",
    "JsonField",
    "NoDivergence",
    "Policy",
    "Regex",
    "RequiredCall",
    "Score",
    "Scorer",
    "Verdict",
    "all_passed",
    "any_passed",
    "call_budget",
    "call_order",
    "contains",
    "coverage",
    "evaluate",
    "forbidden_call",
    "json_field",
    "no_divergence",
    "pass_at_k",
    "pass_hat_k",
    "regex",
    "required_call",
    "status_of",
]


def _policy_name(policy: object) -> str:
    return str(getattr(policy, "name", type(policy).__name__))


def _verdict(policy: Policy, trace: Trace) -> Verdict:
    try:
        verdict: object = policy.check(trace)
    except Exception as exc:  # user policies may fail in any way; the run must not
        return Verdict(
            name=_policy_name(policy), passed=False, reason=f"raised {type(exc).__name__}: {exc}"
        )
    if not isinstance(verdict, Verdict):
        return Verdict(
            name=_policy_name(policy),
            passed=False,
            reason=f"check() returned {type(verdict).__name__}, expected Verdict",
        )
    return verdict


def _score(scorer: Scorer, trace: Trace) -> Score:
    name = _policy_name(scorer)
    try:
        score: object = scorer.score(trace)
    except Exception as exc:  # user scorers may fail in any way; the run must not
        return Score(
            name=name,
            value=0.0,
            threshold=1.0,
            passed=False,
            detail=f"raised {type(exc).__name__}: {exc}",
        )
    if not isinstance(score, Score):
        return Score(
            name=name,
            value=0.0,
            threshold=1.0,
            passed=False,
            detail=f"score() returned {type(score).__name__}, expected Score",
        )
    if not (math.isfinite(score.value) and 0.0 <= score.value <= 1.0):
        return msgspec.structs.replace(
            score, passed=False, detail=f"value {score.value} is outside [0, 1]"
        )
    return score


def status_of(trace: Trace) -> Status:
    """The status the verdicts, scores and agent error of a trace add up to."""
    if trace.error is not None:
        return "error"
    if undelivered_faults(trace):
        return "invalid"
    if all(v.passed for v in trace.verdicts) and all(s.passed for s in trace.scores):
        return "passed"
    return "failed"


def evaluate(trace: Trace, policies: Iterable[Policy], scorers: Iterable[Scorer]) -> Trace:
    """Check every policy and scorer; fill `verdicts`, `scores` and `status` (in place)."""
    trace.verdicts = [_verdict(policy, trace) for policy in policies]
    trace.scores = [_score(scorer, trace) for scorer in scorers]
    trace.status = status_of(trace)
    return trace
