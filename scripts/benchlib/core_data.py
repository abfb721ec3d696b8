"""Synthetic universes for the core benchmark: a realistic tool mix at any size.

Four tools with 2-4 argument keys. Every recording has one identifying value that no other
recording shares (a client name, a customer id, an invoice number, an account) next to a few
low-cardinality flags (a region, a status, a page size, a boolean, a list of tags), because that is
what recorded agent traffic looks like, and the flags are what make `nearest` work hard: a miss on
an unknown id still shares its flags with thousands of recordings.
"""

from __future__ import annotations

import random
from typing import Any

from windtunnel.universe import FORMAT_VERSION, Matching, Recording, Universe, UniverseTool

__all__ = [
    "KEYED_TOOL",
    "Call",
    "adversarial_universe",
    "exact_calls",
    "keyed_calls",
    "make_universe",
    "miss_calls",
]

Call = tuple[str, dict[str, Any]]

KEYED_TOOL = "client_lookup"
_REGIONS = ("eu-west", "eu-central", "us-east", "us-west", "ap-south")
_STATUSES = ("open", "shipped", "cancelled")
_LIMITS = (10, 25, 50)
_PRIORITIES = ("low", "normal", "high", "urgent")
_TAGS = ("billing", "bug", "outage", "refund", "vip")
# Share of recordings per tool, in file order of the draw.
_MIX = (("client_lookup", 3), ("search_orders", 3), ("get_invoice", 2), ("list_tickets", 2))


def _schema(**properties: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": t} for k, t in properties.items()}}


_TOOLS = [
    UniverseTool(
        name="client_lookup",
        description="Look up a client by name.",
        input_schema=_schema(query="string", region="string", verbose="boolean"),
    ),
    UniverseTool(
        name="search_orders",
        description="Search a customer's orders.",
        input_schema=_schema(customer_id="integer", status="string", limit="integer"),
    ),
    UniverseTool(
        name="get_invoice",
        description="Fetch one invoice.",
        input_schema=_schema(invoice_id="string", include_lines="boolean"),
    ),
    UniverseTool(
        name="list_tickets",
        description="List an account's support tickets.",
        input_schema=_schema(account="string", priority="string", page="integer", tags="array"),
    ),
]


def _recording(tool: str, i: int, rng: random.Random) -> Recording:
    """Recording number `i` of `tool`; `i` makes its identifying value unique."""
    if tool == "client_lookup":
        name = f"Client {i:07d} Ltd"
        return Recording(
            tool_name=tool,
            args={"query": name, "region": rng.choice(_REGIONS)},
            result={"id": i, "name": name, "email": f"ops{i}@client.example", "tier": "gold"},
        )
    if tool == "search_orders":
        return Recording(
            tool_name=tool,
            args={
                "customer_id": i,
                "status": rng.choice(_STATUSES),
                "limit": rng.choice(_LIMITS),
            },
            result={"orders": [{"id": f"ORD-{i}-1", "total": 129.5}], "next": None},
        )
    if tool == "get_invoice":
        return Recording(
            tool_name=tool,
            args={"invoice_id": f"INV-{i:08d}", "include_lines": rng.random() < 0.5},
            result={"invoice_id": f"INV-{i:08d}", "amount": 420.0, "currency": "EUR"},
        )
    return Recording(
        tool_name=tool,
        args={
            "account": f"acct-{i}",
            "priority": rng.choice(_PRIORITIES),
            "page": rng.randint(1, 3),
            "tags": sorted(rng.sample(_TAGS, 2)),
        },
        result=[{"ticket": f"T-{i}", "title": "Cannot log in", "state": "open"}],
    )


def make_universe(n: int, *, seed: int = 0) -> Universe:
    """A universe of `n` recordings over four tools; `client_lookup` matches on `query`."""
    rng = random.Random(seed)
    tools = [name for name, _ in _MIX]
    weights = [weight for _, weight in _MIX]
    recordings = [_recording(rng.choices(tools, weights)[0], i, rng) for i in range(n)]
    return Universe(
        windtunnel_universe=FORMAT_VERSION,
        tools=list(_TOOLS),
        recordings=recordings,
        matching=Matching(arg_keys={KEYED_TOOL: ["query"]}),
    )


def _as_sent(args: dict[str, Any]) -> dict[str, Any]:
    """A fresh dict in another key order: agents do not send keys sorted, nor the same objects."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in reversed(args.items())}


def exact_calls(universe: Universe, rng: random.Random) -> list[Call]:
    """Every recording called with its recorded args, shuffled."""
    calls = [(r.tool_name, _as_sent(r.args)) for r in universe.recordings]
    rng.shuffle(calls)
    return calls


def keyed_calls(universe: Universe, rng: random.Random) -> list[Call]:
    """Every keyed-tool recording called with an extra non-key arg: an exact miss, a keyed hit."""
    calls = [
        (r.tool_name, {**_as_sent(r.args), "verbose": True})
        for r in universe.recordings
        if r.tool_name == KEYED_TOOL
    ]
    rng.shuffle(calls)
    return calls


def miss_calls(universe: Universe, rng: random.Random, count: int) -> list[Call]:
    """Near misses: a recorded call whose identifying value is one no recording has."""
    ids = {"client_lookup": "query", "search_orders": "customer_id"}
    ids |= {"get_invoice": "invoice_id", "list_tickets": "account"}
    unseen = len(universe.recordings) + 1
    calls = []
    for j in range(count):
        recording = rng.choice(universe.recordings)
        args = _as_sent(recording.args)
        key = ids[recording.tool_name]
        args[key] = unseen + j if isinstance(args[key], int) else f"unseen-{j}"
        calls.append((recording.tool_name, args))
    return calls


def adversarial_universe(n: int, *, flags: int = 3) -> tuple[Universe, Call]:
    """The worst case for `nearest`: a miss sharing `flags` values that never occur together.

    Recording `i` has flag `f{i % flags}` set and the others clear, so each set flag's posting
    list holds `n / flags` recordings and no two of them intersect; the miss sets every flag.
    """
    recordings = [
        Recording(
            tool_name="probe",
            args={"id": i, **{f"f{j}": int(i % flags == j) for j in range(flags)}},
            result={"id": i},
        )
        for i in range(n)
    ]
    universe = Universe(
        windtunnel_universe=FORMAT_VERSION,
        tools=[UniverseTool(name="probe")],
        recordings=recordings,
    )
    return universe, ("probe", {"id": -1, **{f"f{j}": 1 for j in range(flags)}})
