"""The constraint layer: each builtin policy's verdict and exact reason."""

from __future__ import annotations

import pytest

from windtunnel.calls import MCPCall
from windtunnel.errors import ConfigError
from windtunnel.runner.policies import Policy
from windtunnel.runner.scoring import (
    call_budget,
    call_order,
    forbidden_call,
    no_divergence,
    required_call,
)
from windtunnel.runner.trace import Verdict

from .factories import call, trace

LOOKUP = call("client_lookup", {"query": "Bluewing"})
LOOKUP_OTHER = call("client_lookup", {"query": "ACC-1", "verbose": True})
INVOICES = call("list_invoices", {"account_id": "ACC-1"}, upstream="billing")
MISS = call("client_lookup", {"query": "Blue"}, reason="no_recorded_result")
UNKNOWN = call("delete_all", {}, upstream="billing", reason="unknown_tool")
EMAIL = call("send_email", {"to": "ops@bluewing.example"}, upstream="mail")

CASES = [
    (no_divergence(), [LOOKUP, INVOICES], True, "no divergence in 2 calls"),
    (no_divergence(), [], True, "no divergence in 0 calls"),
    (
        no_divergence(),
        [LOOKUP, INVOICES, MISS],
        False,
        'call 3 crm.client_lookup({"query":"Blue"}) diverged: no_recorded_result',
    ),
    (
        no_divergence(),
        [MISS, LOOKUP, UNKNOWN],
        False,
        'call 1 crm.client_lookup({"query":"Blue"}) diverged: no_recorded_result; '
        "call 3 billing.delete_all({}) diverged: unknown_tool",
    ),
    (
        required_call("client_lookup"),
        [INVOICES, LOOKUP],
        True,
        'call 2 crm.client_lookup({"query":"Bluewing"}) made',
    ),
    (required_call("client_lookup"), [INVOICES], False, "no call to client_lookup"),
    (
        required_call("client_lookup", {"query": "ACC-1"}),
        [LOOKUP, LOOKUP_OTHER],
        True,
        'call 2 crm.client_lookup({"query":"ACC-1","verbose":true}) made',
    ),
    (
        required_call("client_lookup", {"query": "Nope"}),
        [LOOKUP, LOOKUP_OTHER],
        False,
        'no call to client_lookup with args matching {"query":"Nope"} '
        "(2 calls to client_lookup had other args)",
    ),
    (
        required_call("client_lookup", upstream="billing"),
        [LOOKUP],
        False,
        "no call to billing.client_lookup",
    ),
    (
        required_call("list_invoices", {"account_id": "ACC-1"}, upstream="billing"),
        [LOOKUP, INVOICES],
        True,
        'call 2 billing.list_invoices({"account_id":"ACC-1"}) made',
    ),
    (forbidden_call("send_email"), [LOOKUP], True, "no call to send_email"),
    (
        forbidden_call("send_email"),
        [LOOKUP, EMAIL, EMAIL],
        False,
        'call 2 mail.send_email({"to":"ops@bluewing.example"}) is forbidden; '
        'call 3 mail.send_email({"to":"ops@bluewing.example"}) is forbidden',
    ),
    (
        forbidden_call("send_email", {"to": "ceo@bluewing.example"}),
        [EMAIL],
        True,
        'no call to send_email with args matching {"to":"ceo@bluewing.example"}',
    ),
    (forbidden_call("send_email", upstream="crm"), [EMAIL], True, "no call to crm.send_email"),
    (call_budget(5), [LOOKUP] * 7, False, "budget 5 exceeded: 7 calls"),
    (call_budget(5), [LOOKUP] * 5, True, "5 calls within budget 5"),
    (call_budget(0), [LOOKUP], False, "budget 0 exceeded: 1 call"),
    (
        call_budget(1, tool="client_lookup"),
        [LOOKUP, INVOICES, LOOKUP_OTHER],
        False,
        "budget 1 for client_lookup exceeded: 2 calls",
    ),
    (
        call_budget(1, tool="list_invoices"),
        [LOOKUP, INVOICES, LOOKUP_OTHER],
        True,
        "1 call within budget 1 for list_invoices",
    ),
    (
        call_order(["client_lookup", "list_invoices"]),
        [LOOKUP, EMAIL, INVOICES],
        True,
        "in order: client_lookup (call 1), list_invoices (call 3)",
    ),
    (
        call_order(["client_lookup", "list_invoices"]),
        [INVOICES, LOOKUP],
        False,
        "list_invoices not called after client_lookup (call 2)",
    ),
    (
        call_order(["client_lookup", "list_invoices"]),
        [INVOICES, LOOKUP, INVOICES],
        True,
        "in order: client_lookup (call 2), list_invoices (call 3)",
    ),
    (
        call_order(["client_lookup", "list_invoices"]),
        [INVOICES],
        False,
        "client_lookup never called",
    ),
    (
        call_order(["client_lookup", "send_email"]),
        [LOOKUP],
        False,
        "send_email never called",
    ),
]


@pytest.mark.parametrize(("policy", "calls", "passed", "reason"), CASES)
def test_policy_verdict(policy: Policy, calls: list[MCPCall], passed: bool, reason: str) -> None:
    """Each builtin policy passes or fails with this exact reason."""
    verdict = policy.check(trace(calls))
    assert verdict == Verdict(name=policy.name, passed=passed, reason=reason)


def test_policy_names() -> None:
    """Verdict names say which policy and what it was about."""
    names = [
        no_divergence().name,
        required_call("a").name,
        forbidden_call("b").name,
        call_budget(3).name,
        call_budget(2, tool="c").name,
        call_order(["a", "b"]).name,
    ]
    assert names == [
        "no_divergence",
        "required_call(a)",
        "forbidden_call(b)",
        "call_budget(3)",
        "call_budget(c, 2)",
        "call_order(a, b)",
    ]


def test_required_call_args_use_canonical_equality() -> None:
    """Args subsets compare as JSON: 1 equals 1.0, true is not 1, key order is irrelevant."""
    calls = [call("page", {"n": 1.0, "filter": {"b": 2, "a": 1}})]
    assert required_call("page", {"n": 1}).check(trace(calls)).passed
    assert required_call("page", {"filter": {"a": 1, "b": 2}}).check(trace(calls)).passed
    assert not required_call("page", {"n": True}).check(trace(calls)).passed


def test_builtins_satisfy_the_policy_protocol() -> None:
    """Every builtin is a runtime-checkable `Policy`."""
    for policy in (no_divergence(), required_call("a"), call_budget(1), call_order(["a"])):
        assert isinstance(policy, Policy)


def test_bad_policy_arguments_are_config_errors() -> None:
    """A negative budget or an empty order cannot be built."""
    with pytest.raises(ConfigError, match="max_calls >= 0"):
        call_budget(-1)
    with pytest.raises(ConfigError, match="at least one tool"):
        call_order([])


def test_no_divergence_reads_warnings_of_a_results_row() -> None:
    """A results row keeps warnings but no call log; the policy still fails it."""
    row = trace([MISS])
    row.mcp_calls = []
    verdict = no_divergence().check(row)
    assert verdict.reason == 'crm.client_lookup({"query":"Blue"}) diverged: no_recorded_result'
    assert not verdict.passed
