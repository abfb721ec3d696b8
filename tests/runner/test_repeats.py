"""pass@k and pass^k: the unbiased estimators, the plug-in ones, and the empirical flags."""

from __future__ import annotations

from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.runner.repeats import all_passed, any_passed, pass_at_k, pass_hat_k

from .factories import trace


def test_unbiased_values() -> None:
    """n=5, c=2: pass@2 = 1 - C(3,2)/C(5,2) = 0.7 and pass^2 = C(2,2)/C(5,2) = 0.1."""
    runs = [True, False, True, False, False]
    assert pass_at_k(runs, 2) == 0.7
    assert pass_hat_k(runs, 2) == 0.1
    assert pass_at_k(runs, 4) == 1.0
    assert pass_hat_k(runs, 3) == 0.0


def test_plugin_values() -> None:
    """The plug-in estimates are 1 - (1 - c/n)^k and (c/n)^k."""
    runs = [True, False, True, False, False]
    assert pass_at_k(runs, 2, estimator="plugin") == pytest.approx(0.64, abs=1e-15)
    assert pass_hat_k(runs, 2, estimator="plugin") == pytest.approx(0.16, abs=1e-15)


def test_traces_count_by_status() -> None:
    """A trace passes only with status "passed"; errors count as not passed."""
    runs = [trace(status="passed"), trace(status="error"), trace(status="failed")]
    assert pass_at_k(runs, 1) == pytest.approx(1 / 3)
    assert pass_hat_k(runs, 1) == pytest.approx(1 / 3)
    assert any_passed(runs)
    assert not all_passed(runs)


def test_empirical_flags() -> None:
    """all_passed needs every run (and at least one); any_passed needs one."""
    assert all_passed([True, True])
    assert not all_passed([])
    assert not any_passed([False, False])


@pytest.mark.parametrize("k", [0, 4])
def test_k_outside_one_to_n_is_refused(k: int) -> None:
    """k must be within [1, n]."""
    with pytest.raises(ValueError, match=rf"k must be within \[1, n=3\], got k={k}"):
        pass_at_k([True, False, True], k)
    with pytest.raises(ValueError, match="k must be within"):
        pass_hat_k([True, False, True], k)


@given(st.lists(st.booleans(), min_size=1, max_size=12), st.data())
def test_estimators_agree_with_their_definitions(runs: list[bool], data: st.DataObject) -> None:
    """Both estimators equal their closed forms; at k=1 they are the pass rate."""
    n, c = len(runs), sum(runs)
    k = data.draw(st.integers(1, n))
    assert pass_at_k(runs, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))
    assert pass_hat_k(runs, k) == pytest.approx(comb(c, k) / comb(n, k))
    assert pass_hat_k(runs, k) <= pass_at_k(runs, k) or c == 0
    assert pass_at_k(runs, 1) == pass_hat_k(runs, 1) == pytest.approx(c / n)
