"""Structured mutation of near-valid inputs, shared by the hypothesis tests and `scripts/fuzz`.

Each mutation takes a valid document and changes one thing in it (a deleted key, a value of the
wrong type, an unknown key, a dangling reference, a duplicated entry), so a fuzzer spends its time
just past the decoder's type checks, where the cross-reference rules live.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

__all__ = [
    "JSON_ODDITIES",
    "TOML_VALUES",
    "base_universe",
    "mutate_json",
    "mutate_toml_lines",
    "pack_toml",
]

JSON_ODDITIES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    2**70,
    "",
    "x",
    "fail_call",
    "sequence",
    "synthesize",
    "__import__('os').system('touch /tmp/wt-pwned')",
    "os:system",
    [],
    [1, "a"],
    {},
    {"type": "object"},
    {"name": "lookup", "arguments": {"q": 1}},
    {"arguments": []},
]

TOML_VALUES: list[str] = [
    '""',
    '"x"',
    '"../../etc/passwd"',
    '"os:system"',
    "\"__import__('os').system('touch /tmp/wt-pwned')\"",
    '"a\\u0000b"',
    '"' + "n" * 5000 + '"',
    "0",
    "-1",
    "1e309",
    "inf",
    "nan",
    "true",
    "[]",
    '["{python}", "-c", "print(1)"]',
    "[1, 2]",
    "{}",
    '{ crm = "crm.universe.json" }',
    '{ "" = "x" }',
    "1979-05-27T07:32:00Z",
    "07:32:00",
]


def base_universe() -> dict[str, Any]:
    """A valid universe touching every feature: modes, policies, keys, wrappers."""
    return {
        "windtunnel_universe": 1,
        "tools": [
            {"name": "lookup", "input_schema": {"type": "object"}, "description": "d"},
            {"name": "pages", "mode": "sequence", "result_schema": {"type": "array"}},
            {"name": "make", "description": "synthesized"},
        ],
        "recordings": [
            {"tool_name": "lookup", "args": {"q": "a", "n": 1}, "result": {"ok": True}},
            {"tool_name": "lookup", "args": {"name": "lookup", "arguments": {"q": "b"}}},
            {"tool_name": "pages", "args": {"cursor": None}, "result": [1, 2]},
            {"tool_name": "pages", "args": {"cursor": None}, "result": [3]},
            {
                "tool_name": "lookup",
                "args": {"q": "c"},
                "result": {"content": [{"type": "text", "text": "hi"}], "isError": True},
            },
        ],
        "matching": {
            "on_miss": "nearest",
            "per_tool_on_miss": {"pages": "empty", "make": "synthesize"},
            "arg_keys": {"lookup": ["q"]},
        },
        "meta": {"source": "fuzz"},
    }


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.extend(_paths(value, (*prefix, i)))
    return found


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


def mutate_json(doc: Any, rng: random.Random, rounds: int = 1) -> Any:
    """`doc` with `rounds` structural mutations at random places (the input is not changed)."""
    doc = copy.deepcopy(doc)
    for _ in range(rounds):
        paths = _paths(doc)
        path = rng.choice(paths)
        if not path:
            # A copy: mutating a shared oddity in a later round would change this module's
            # constants, and hypothesis would see the same draws produce different data.
            doc = copy.deepcopy(rng.choice([*JSON_ODDITIES, doc]))
            continue
        parent = _at(doc, path[:-1])
        key = path[-1]
        op = rng.randrange(6)
        if op == 0:  # delete
            del parent[key]
        elif op == 1:  # replace with an odd value
            parent[key] = copy.deepcopy(rng.choice(JSON_ODDITIES))
        elif op == 2:  # duplicate a list entry / add an unknown key
            if isinstance(parent, list):
                parent.insert(key, copy.deepcopy(parent[key]))
            else:
                parent[f"unknown_{rng.randrange(3)}"] = parent[key]
        elif op == 3:  # rename a string to another name seen in the document
            names = [p[-1] for p in paths if p and isinstance(p[-1], str)]
            parent[key] = rng.choice(names or ["ghost"])
        elif op == 4:  # wrap the value in a list or an object
            parent[key] = rng.choice([[parent[key]], {"value": parent[key]}])
        else:  # swap with another value of the document
            other = rng.choice(paths)
            if other and other[: len(path)] != path and path[: len(other)] != other:
                parent[key] = copy.deepcopy(_at(doc, other))
    return doc


def pack_toml(universe: str) -> str:
    """A valid pack touching every table and kind, its upstream at `universe` (a path)."""
    path = json.dumps(universe)
    return f"""[pack]
name = "fuzz"
concurrency = 2
repeats = 1
timeout_s = 5

[agent]
kind = "command"
command = ["{{python}}", "agent.py", "--mcp-config", "{{mcp_config}}"]
task_via = "stdin"
env = {{ TOKEN = "s3cret" }}

[[scenario]]
name = "one"
task = "look up a"
repeats = 2
timeout_s = 1.5
tags = ["t"]
metadata = {{ owner = "x" }}

[scenario.upstreams]
crm = {path}

[[scenario.policies]]
kind = "no_divergence"
[[scenario.policies]]
kind = "required_call"
tool = "lookup"
upstream = "crm"
args = {{ q = "a" }}
[[scenario.policies]]
kind = "forbidden_call"
tool = "pages"
[[scenario.policies]]
kind = "call_budget"
max_calls = 3
tool = "lookup"
[[scenario.policies]]
kind = "call_order"
tools = ["lookup", "pages"]

[[scenario.scorers]]
kind = "contains"
text = "a"
case_sensitive = true
threshold = 0.5
[[scenario.scorers]]
kind = "regex"
pattern = "a+"
[[scenario.scorers]]
kind = "json_field"
field = "a.b"
equals = 1

[[scenario.plan]]
tool = "lookup"
args = {{ q = "a" }}

[scenario.scripted]
final_answer = "done"

[[scenario]]
name = "two"
task = "t"
[scenario.upstreams]
crm = {path}
[scenario.agent]
kind = "python"
callable = "agents.mine:run"
"""


def mutate_toml_lines(text: str, rng: random.Random, rounds: int = 1) -> str:
    """`text` with `rounds` line-level mutations: drop, duplicate, retype a value, rename a key."""
    lines = text.splitlines()
    for _ in range(rounds):
        if not lines:
            break
        i = rng.randrange(len(lines))
        line = lines[i]
        op = rng.randrange(6)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, line)
        elif op == 2 and " = " in line:
            key = line.split(" = ", 1)[0]
            lines[i] = f"{key} = {rng.choice(TOML_VALUES)}"
        elif op == 3 and " = " in line:
            value = line.split(" = ", 1)[1]
            lines[i] = f"{rng.choice(['kind', 'name', 'unknown', 'callable', 'env'])} = {value}"
        elif op == 4:
            lines.insert(i, rng.choice(["[[scenario]]", "[agent]", "[pack]", "[scenario.agent]"]))
        else:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines) + "\n"
