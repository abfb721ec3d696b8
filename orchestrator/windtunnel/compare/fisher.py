"""Fisher's exact test on a 2x2 table: is a pass-rate change over a few repeats real?

The table is passes and failures in the base run and in the new run. With the margins fixed,
the passes of the base run follow a hypergeometric distribution; the two-sided p-value sums the
probability of every table at most as likely as the one seen (the convention of R's
`fisher.test` and SciPy's `fisher_exact`). Exact for any counts, so it holds at the sizes CI
runs have: 1 of 1 against 0 of 1 gives p = 1, and 2 of 2 against 0 of 2 gives p = 1/3; neither
is significant at 0.05. The smallest all-pass to all-fail flip that is: 4 of 4 against 0 of 4
(p = 0.029).

SciPy is not a dependency for these dozen lines; the tests compare the values with SciPy's.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

__all__ = ["ALPHA", "fisher_exact_p"]

ALPHA = 0.05
"""The significance level `wt diff` reports against."""

# Tables whose probabilities tie with the observed one within this relative margin count as
# "at most as likely" (exact fractions make ties exact; the margin mirrors SciPy's, for floats).
_RELATIVE_TIE = Fraction(1, 10**7)


def fisher_exact_p(a_pass: int, a_fail: int, b_pass: int, b_fail: int) -> float:
    """Two-sided p-value of Fisher's exact test for [[a_pass, a_fail], [b_pass, b_fail]]."""
    if min(a_pass, a_fail, b_pass, b_fail) < 0:
        raise ValueError("counts must not be negative")
    a_runs, b_runs = a_pass + a_fail, b_pass + b_fail
    passes = a_pass + b_pass
    total = a_runs + b_runs
    if a_runs == 0 or b_runs == 0 or passes == 0 or passes == total:
        return 1.0
    denominator = comb(total, a_runs)

    def probability(x: int) -> Fraction:
        return Fraction(comb(passes, x) * comb(total - passes, a_runs - x), denominator)

    observed = probability(a_pass)
    limit = observed * (1 + _RELATIVE_TIE)
    low, high = max(0, a_runs - (total - passes)), min(a_runs, passes)
    p = sum((q for x in range(low, high + 1) if (q := probability(x)) <= limit), Fraction(0))
    return float(min(p, Fraction(1)))
