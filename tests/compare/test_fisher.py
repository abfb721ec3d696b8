"""Fisher's exact test: textbook values, small-sample behaviour, and SciPy's own answers."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.thirdparty import thirdparty_python
from windtunnel.compare.fisher import fisher_exact_p

TABLES = [
    (1, 0, 0, 1),
    (2, 0, 0, 2),
    (3, 0, 0, 3),
    (4, 0, 0, 4),
    (3, 1, 1, 3),
    (10, 0, 3, 7),
    (8, 2, 1, 5),
    (5, 5, 5, 5),
    (0, 5, 0, 5),
    (20, 0, 19, 1),
    (12, 3, 4, 11),
    (1, 9, 11, 3),
    (0, 1, 1, 0),
]


def test_lady_tasting_tea() -> None:
    """Fisher's own example, 3 of 4 right against 1 of 4, gives the two-sided p = 34/70."""
    assert fisher_exact_p(3, 1, 1, 3) == pytest.approx(34 / 70, rel=1e-12)


def test_one_of_one_flip_is_never_significant() -> None:
    """A single run that flips (1/1 -> 0/1) has p = 1; 2/2 -> 0/2 has p = 1/3."""
    assert fisher_exact_p(1, 0, 0, 1) == 1.0
    assert fisher_exact_p(2, 0, 0, 2) == pytest.approx(1 / 3, rel=1e-12)
    assert fisher_exact_p(3, 0, 0, 3) == pytest.approx(0.1, rel=1e-12)


def test_four_of_four_flip_is_the_smallest_significant_one() -> None:
    """4/4 -> 0/4 gives p = 2/70, under 0.05."""
    assert fisher_exact_p(4, 0, 0, 4) == pytest.approx(2 / 70, rel=1e-12)


def test_degenerate_tables_give_one() -> None:
    """No runs on a side, or every run passing (or failing) on both, carries no evidence."""
    assert fisher_exact_p(0, 0, 3, 1) == 1.0
    assert fisher_exact_p(5, 0, 5, 0) == 1.0
    assert fisher_exact_p(0, 4, 0, 2) == 1.0
    with pytest.raises(ValueError, match="negative"):
        fisher_exact_p(-1, 0, 0, 0)


def test_agrees_with_scipy() -> None:
    """Every table gives SciPy's `fisher_exact` two-sided p-value, to 1e-12."""
    python = thirdparty_python("scipy")
    script = (
        "import json, sys\n"
        "from scipy.stats import fisher_exact\n"
        "tables = json.load(sys.stdin)\n"
        "print(json.dumps([fisher_exact([[a, b], [c, d]]).pvalue for a, b, c, d in tables]))\n"
    )
    done = subprocess.run(
        [str(python), "-c", script],
        input=json.dumps(TABLES),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected = json.loads(done.stdout)
    assert [fisher_exact_p(*table) for table in TABLES] == pytest.approx(expected, rel=1e-12)
