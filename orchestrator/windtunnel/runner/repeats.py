"""pass@k and pass^k over the repeats of one scenario.

Given n runs of a scenario with c passes (an error counts as not passed):

- **pass@k** — the chance that at least one of k runs drawn without replacement passes. Unbiased
  estimator (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"):
  ``1 - C(n-c, k) / C(n, k)``.
- **pass^k** — the chance that all k runs drawn without replacement pass. Unbiased estimator of
  ``p^k`` (Yao et al. 2024, "τ-bench"; tau2-bench's ``comb(c, k) / comb(n, k)``):
  ``C(c, k) / C(n, k)``.

Both need ``1 <= k <= n``. The plug-in estimates ``1 - (1 - c/n)^k`` and ``(c/n)^k`` are biased
for k > 1 (they treat runs as drawn with replacement); ask for them with ``estimator="plugin"``.
The two agree at k = 1. Results are computed exactly with fractions, then rounded once to float.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from math import comb
from typing import Literal, TypeAlias

from .trace import Trace

__all__ = [
    "Estimator",
    "PassCurve",
    "all_passed",
    "any_passed",
    "count_passes",
    "pass_at_k",
    "pass_at_k_of",
    "pass_hat_k",
    "pass_hat_k_of",
]

Estimator: TypeAlias = Literal["unbiased", "plugin"]


def count_passes(results: Sequence[bool | Trace]) -> tuple[int, int]:
    """(n, c): runs and passes; a trace passes when its status is `"passed"`."""
    passes = sum(
        1 for r in results if (r.status == "passed" if isinstance(r, Trace) else r is True)
    )
    return len(results), passes


def _check(n: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k must be within [1, n={n}], got k={k}")


def pass_at_k(
    results: Sequence[bool | Trace], k: int, *, estimator: Estimator = "unbiased"
) -> float:
    """Probability that at least one of k runs passes (see the module docstring)."""
    n, c = count_passes(results)
    return pass_at_k_of(n, c, k, estimator=estimator)


def pass_at_k_of(n: int, c: int, k: int, *, estimator: Estimator = "unbiased") -> float:
    """`pass_at_k` from the counts alone: n runs, c of them passed."""
    _check(n, k)
    if estimator == "plugin":
        return float(1 - (1 - Fraction(c, n)) ** k)
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def pass_hat_k(
    results: Sequence[bool | Trace], k: int, *, estimator: Estimator = "unbiased"
) -> float:
    """pass^k: probability that all of k runs pass (see the module docstring)."""
    n, c = count_passes(results)
    return pass_hat_k_of(n, c, k, estimator=estimator)


def pass_hat_k_of(n: int, c: int, k: int, *, estimator: Estimator = "unbiased") -> float:
    """`pass_hat_k` from the counts alone: n runs, c of them passed."""
    _check(n, k)
    if estimator == "plugin":
        return float(Fraction(c, n) ** k)
    return float(Fraction(comb(c, k), comb(n, k)))


def all_passed(results: Sequence[bool | Trace]) -> bool:
    """Empirical: every run passed (and there was at least one)."""
    n, c = count_passes(results)
    return n > 0 and c == n


def any_passed(results: Sequence[bool | Trace]) -> bool:
    """Empirical: at least one run passed."""
    return count_passes(results)[1] > 0


class PassCurve(Mapping[str, float]):
    """pass@k (`kind="at"`) or pass^k (`kind="hat"`) for every k from 1 to n, keyed by k as
    text, as `summary.json` lists them: computed from (n, c) when read, never held, so a
    scenario of any number of repeats costs the same memory. Equal to the dict it stands for.
    """

    def __init__(self, n: int, c: int, kind: Literal["at", "hat"]) -> None:
        self.n = n
        self.c = c
        self.kind = kind

    def __getitem__(self, key: str) -> float:
        k = int(key) if key.isascii() and key.isdigit() else 0
        if not 1 <= k <= self.n or str(k) != key:
            raise KeyError(key)
        of = pass_at_k_of if self.kind == "at" else pass_hat_k_of
        return of(self.n, self.c, k)

    def __iter__(self) -> Iterator[str]:
        return (str(k) for k in range(1, self.n + 1))

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"PassCurve(n={self.n}, c={self.c}, kind={self.kind!r})"
