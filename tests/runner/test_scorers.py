"""Quality scorers: value, pass/fail and exact detail for each builtin."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.errors import ConfigError
from windtunnel.runner.scoring import Score, Scorer, contains, json_field, regex

from .factories import trace

ANSWER = "Invoice INV-7 of Bluewing Logistics is overdue."
JSON_ANSWER = '{"invoice": {"id": "INV-7", "amount": 1200, "lines": [{"sku": "A"}]}}'

CASES: list[tuple[Scorer, str | None, float, bool, str]] = [
    (contains("inv-7"), ANSWER, 1.0, True, "answer contains 'inv-7'"),
    (
        contains("inv-7", case_sensitive=True),
        ANSWER,
        0.0,
        False,
        "answer does not contain 'inv-7'",
    ),
    (contains("INV-3"), ANSWER, 0.0, False, "answer does not contain 'INV-3'"),
    (contains("INV-3", threshold=0.0), ANSWER, 0.0, True, "answer does not contain 'INV-3'"),
    (contains("INV-7"), None, 0.0, False, "no final answer"),
    (regex(r"INV-\d+"), ANSWER, 1.0, True, "matched 'INV-7' at 8"),
    (regex(r"^INV"), ANSWER, 0.0, False, "no match for '^INV'"),
    (regex(r"INV"), None, 0.0, False, "no final answer"),
    (json_field("invoice.id", "INV-7"), JSON_ANSWER, 1.0, True, 'invoice.id = "INV-7"'),
    (json_field("invoice.amount", 1200.0), JSON_ANSWER, 1.0, True, "invoice.amount = 1200"),
    (json_field("invoice.lines.0.sku", "A"), JSON_ANSWER, 1.0, True, 'invoice.lines.0.sku = "A"'),
    (
        json_field("invoice.id", "INV-3"),
        JSON_ANSWER,
        0.0,
        False,
        'invoice.id is "INV-7", expected "INV-3"',
    ),
    (json_field("invoice.due", "x"), JSON_ANSWER, 0.0, False, "no field invoice.due"),
    (json_field("invoice.lines.3", "x"), JSON_ANSWER, 0.0, False, "no field invoice.lines.3"),
    (
        json_field("invoice.id", "INV-7"),
        ANSWER,
        0.0,
        False,
        "answer is not JSON: Expecting value: line 1 column 1 (char 0)",
    ),
    (json_field("a", True), '{"a": 1}', 0.0, False, "a is 1, expected true"),
]


@pytest.mark.parametrize(("scorer", "output", "value", "passed", "detail"), CASES)
def test_scorer(
    scorer: Scorer, output: str | None, value: float, passed: bool, detail: str
) -> None:
    """Each builtin scorer grades the final answer with this exact detail."""
    score = scorer.score(trace(output=output))
    assert score == Score(
        name=scorer.name, value=value, threshold=score.threshold, passed=passed, detail=detail
    )


def test_scorer_names() -> None:
    """Score names say which scorer and what it looked for."""
    assert [contains("INV-7").name, regex(r"INV-\d+").name, json_field("a.b", 1).name] == [
        "contains(INV-7)",
        r"regex(INV-\d+)",
        "json_field(a.b)",
    ]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: contains("x", threshold=1.5), "threshold must be within [0, 1], got 1.5"),
        (
            lambda: regex("(", threshold=1.0),
            "invalid regex '(': missing ), unterminated subpattern",
        ),
        (lambda: json_field("a..b", 1), "json_field needs a dotted path like 'a.b.0', got 'a..b'"),
    ],
)
def test_bad_scorer_arguments(build: Any, message: str) -> None:
    """Bad scorer arguments are `ConfigError`s with a precise message."""
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.message.startswith(message)
