"""`evaluate`: verdicts, scores and the status they add up to."""

from __future__ import annotations

from windtunnel.runner.scoring import Score, Verdict, contains, evaluate, no_divergence
from windtunnel.runner.trace import Trace

from .factories import call, trace


def test_all_pass_is_passed() -> None:
    """Every policy passed and every scorer reached its threshold: passed."""
    t = evaluate(
        trace([call("client_lookup")], output="INV-7"), [no_divergence()], [contains("INV-7")]
    )
    assert t.status == "passed"
    assert [v.passed for v in t.verdicts] == [True]
    assert [s.passed for s in t.scores] == [True]


def test_failed_policy_is_failed() -> None:
    """A failing policy fails the trace even when scorers pass."""
    miss = call("client_lookup", {"q": 1}, reason="no_recorded_result")
    t = evaluate(trace([miss], output="INV-7"), [no_divergence()], [contains("INV-7")])
    assert t.status == "failed"


def test_low_score_is_failed() -> None:
    """A scorer below its threshold fails the trace."""
    t = evaluate(trace([], output="nothing"), [no_divergence()], [contains("INV-7")])
    assert t.status == "failed"


def test_agent_error_is_error_and_still_scored() -> None:
    """An agent crash or timeout is status error; policies still judge the call log."""
    t = evaluate(trace([], error="timeout after 30s"), [no_divergence()], [contains("x")])
    assert t.status == "error"
    assert t.verdicts == [
        Verdict(name="no_divergence", passed=True, reason="no divergence in 0 calls")
    ]
    assert t.scores[0].detail == "no final answer"


class Exploding:
    name = "exploding"

    def check(self, trace: Trace) -> Verdict:
        raise RuntimeError("boom")

    def score(self, trace: Trace) -> Score:
        raise RuntimeError("bang")


class OutOfRange:
    name = "greedy"

    def score(self, trace: Trace) -> Score:
        return Score(name=self.name, value=1.5, threshold=0.5, passed=True)


def test_user_code_that_raises_fails_instead_of_crashing() -> None:
    """A raising policy or scorer becomes a failing verdict or score naming the exception."""
    t = evaluate(trace([], output="x"), [Exploding()], [Exploding()])
    assert t.verdicts == [
        Verdict(name="exploding", passed=False, reason="raised RuntimeError: boom")
    ]
    assert t.scores == [
        Score(
            name="exploding",
            value=0.0,
            threshold=1.0,
            passed=False,
            detail="raised RuntimeError: bang",
        )
    ]
    assert t.status == "failed"


def test_score_outside_unit_interval_fails() -> None:
    """A scorer value outside [0, 1] never passes."""
    t = evaluate(trace([], output="x"), [], [OutOfRange()])
    assert t.scores == [
        Score(
            name="greedy",
            value=1.5,
            threshold=0.5,
            passed=False,
            detail="value 1.5 is outside [0, 1]",
        )
    ]


def test_unevaluated_trace_is_not_a_pass() -> None:
    """A trace nobody scored reads as an error, never as passed."""
    assert Trace(unit_id="a#0", scenario="a").status == "error"
