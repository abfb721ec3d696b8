"""Contract B against the system it comes from: random universes built from design 0001's
definitions, and random calls, answered by our replay and by windtunnel-bench 0.13.0 (in its own
venv, one subprocess per batch). They agree everywhere outside the table "Differences from
windtunnel-bench" in docs/universe.md, each row of which `documented_difference` names; and
every universe we write from a generated one loads there and answers the same."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.thirdparty import thirdparty_python
from windtunnel.errors import UnknownToolError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Universe, decode_universe, encode_universe

DRIVER = Path(__file__).with_name("original_replay.py")
DOCS = Path(__file__).parents[2] / "docs" / "universe.md"

KEYS = {
    "q": ["Bluewing", "Acme", "Zenith"],
    "n": [1, 2, 3],
    "flag": [True, False],
    "tag": ["x", None],
    "ids": [[1, 2], [2, 1]],
}
"""Argument values: strings, integers (never a float: `1` and `1.0` are one number only here),
booleans, null, arrays."""
POLICIES = ["fail_call", "empty", "nearest", "synthesize"]
RESULT_SCHEMAS: list[dict[str, Any] | None] = [
    None,
    {"type": "object"},
    {"type": "array"},
    {"type": "string"},
    {"type": "number"},
    {"type": ["null", "array"]},
    {"type": ["string", "object"]},
]


def synthesize(tool_name: str, args: dict[str, Any], universe: Universe) -> Any:
    """The same hook the driver gives windtunnel-bench."""
    return {"synthesized": tool_name, "keys": sorted(args)}


def random_args(rng: random.Random) -> dict[str, Any]:
    keys = rng.sample(sorted(KEYS), rng.randint(0, 3))
    return {key: rng.choice(KEYS[key]) for key in keys}


def wrapped(rng: random.Random, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """`args` as they arrive: flat, or in a wire wrapper both sides normalize."""
    shape = rng.randrange(6)
    if shape == 0:
        return {"name": tool, "args": args}
    if shape == 1:
        return {"function": {"name": tool, "arguments": json.dumps(args)}}
    if shape == 2:
        function = {"name": tool, "arguments": json.dumps(args)}
        return {"id": "call_1", "type": "function", "function": function}
    return args


def random_result(rng: random.Random, index: int) -> Any:
    return rng.choice([{"row": index}, [index], f"text {index}", index, {"rows": [], "n": index}])


def random_tool(rng: random.Random, name: str) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": name,
        "input_schema": {"type": "object", "properties": {k: {} for k in KEYS}},
    }
    description = rng.choice(["absent", None, f"The {name} tool."])
    if description != "absent":
        tool["description"] = description
    schema = rng.choice(RESULT_SCHEMAS)
    if schema is not None:
        tool["result_schema"] = schema
    mode = rng.choice(["absent", "absent", "stateless", "sequence"])
    if mode != "absent":
        tool["mode"] = mode
    if rng.random() < 0.2:
        tool["x_future_field"] = {"weight": 1}
    return tool


def random_matching(rng: random.Random, names: list[str]) -> dict[str, Any]:
    matching: dict[str, Any] = {"on_miss": rng.choice(POLICIES)}
    others = [*names, "undeclared_tool"]
    matching["per_tool_on_miss"] = {
        name: rng.choice(POLICIES) for name in others if rng.random() < 0.3
    }
    arg_keys: dict[str, Any] = {}
    for name in others:
        if rng.random() < 0.55:
            keys = rng.sample(sorted(KEYS), rng.randint(0, 2))
            if rng.random() < 0.3:
                form: dict[str, Any] = {"keys": keys}
                if rng.random() < 0.5:
                    form["mode"] = rng.choice(["stateless", "sequence"])
                arg_keys[name] = form
            else:
                arg_keys[name] = keys
    matching["arg_keys"] = arg_keys
    if rng.random() < 0.3:
        matching["modes"] = {rng.choice(others): rng.choice(["stateless", "sequence"])}
    return matching


def random_case(rng: random.Random) -> dict[str, Any]:
    names = [f"tool_{i}" for i in range(rng.randint(1, 3))]
    recordings = []
    for index in range(rng.randint(0, 7)):
        tool = rng.choice(names)
        args = random_args(rng)
        recording: dict[str, Any] = {
            "tool_name": tool,
            "args": wrapped(rng, tool, args),
            "result": random_result(rng, index),
        }
        if rng.random() < 0.1:
            recording["x_note"] = "added by a newer producer"
        recordings.append(recording)
    universe: dict[str, Any] = {
        "windtunnel_universe": 1,
        "tools": [random_tool(rng, name) for name in names],
        "recordings": recordings,
        "matching": random_matching(rng, names),
    }
    if rng.random() < 0.3:
        universe["producer"] = "a newer producer"
    calls = []
    for _ in range(rng.randint(3, 9)):
        tool = rng.choice(names) if rng.random() < 0.93 else "undeclared_tool"
        flat = random_args(rng)
        if recordings and rng.random() < 0.5:  # near a recording: the same, or one key changed
            source = rng.choice(recordings)
            tool = source["tool_name"]
            recorded = decode_universe(json.dumps({**universe, "recordings": [source]}))
            flat = dict(recorded.recordings[0].args)
            if flat and rng.random() < 0.5:
                key = rng.choice(sorted(flat))
                flat[key] = rng.choice(KEYS[key])
            elif rng.random() < 0.5:
                key = rng.choice(sorted(KEYS))
                flat[key] = rng.choice(KEYS[key])
        calls.append({"tool": tool, "args": wrapped(rng, tool, flat)})
    return {"universe": universe, "calls": calls}


def ours(universe: Universe, calls: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Each call through our server's in-process `call_tool` (the engine every MCP path asks);
    None for a call of an undeclared tool, which raises here."""
    server = RecordedMCPServer(universe, synthesize=synthesize)
    server.log_events = False
    out: list[dict[str, Any] | None] = []
    for call in calls:
        try:
            answer = server.call_tool(call["tool"], call["args"])
        except UnknownToolError:
            out.append(None)
            continue
        logged = server.call_log()[-1]
        out.append({"result": answer, "args": logged.args, "extra": logged.extra})
    return out


def documented_difference(universe: Universe, tool: str, ours_call: dict[str, Any]) -> str | None:
    """The row of the table in docs/universe.md that lets this answer differ, if any."""
    divergence = ours_call["extra"].get("divergence")
    if divergence is None or divergence["policy"] != "empty":
        return None
    declared = universe.tool(tool)
    schema = declared.result_schema if declared is not None else None
    kind = schema.get("type") if schema is not None else None
    kinds = kind if isinstance(kind, list) else [kind]
    if not {"array", "object", "string"} & set(kinds):
        return "`empty` without a container or string type"
    return None


def compare(
    universe: Universe,
    calls: list[dict[str, Any]],
    mine: list[dict[str, Any] | None],
    theirs: list[dict[str, Any]],
) -> list[str]:
    """Every disagreement outside the documented differences, described."""
    problems = []
    for position, (call, our, their) in enumerate(zip(calls, mine, theirs, strict=True)):
        where = f"call {position} {call['tool']}({json.dumps(call['args'])})"
        if our is None:  # documented: an undeclared tool raises in process
            if universe.tool(call["tool"]) is not None:
                problems.append(f"{where}: raised here for a declared tool")
            continue
        if our["args"] != their["args"]:
            problems.append(f"{where}: logged args {our['args']} != {their['args']}")
        our_div, their_div = our["extra"].get("divergence"), their["extra"].get("divergence")
        if (our_div is None) != (their_div is None):
            problems.append(f"{where}: divergence {our_div} != {their_div}")
            continue
        if our_div is None:  # a hit; ours also carries `match` (documented)
            if our["result"] != their["result"]:
                problems.append(f"{where}: hit {our['result']!r} != {their['result']!r}")
            continue
        seed_fields = {"policy": our_div["policy"], "matched": our_div["matched"]}
        if seed_fields != their_div:
            problems.append(f"{where}: divergence {seed_fields} != {their_div}")
        if documented_difference(universe, call["tool"], our):
            continue
        result = our["result"]
        if isinstance(result, dict) and result.get("error") == "no_recorded_result":
            result = {key: result[key] for key in ("error", "tool", "args")}  # ours adds why
        if result != their["result"]:
            problems.append(f"{where}: answer {result!r} != {their['result']!r}")
    return problems


def run_original(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    python = thirdparty_python("windtunnel-bench")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [str(python), "-I", str(DRIVER)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


@pytest.mark.timeout(120)
def test_random_universes_and_calls_agree_with_windtunnel_bench() -> None:
    """300 random universes, about 1,800 calls: the same hits, the same seed evidence
    (`policy`, `matched`), the same answers outside the documented differences; and what we
    write from each universe loads there and answers the same as the universe it came from."""
    rng = random.Random(26)
    cases = [random_case(rng) for _ in range(300)]
    universes = [decode_universe(json.dumps(case["universe"])) for case in cases]
    for case, universe in zip(cases, universes, strict=True):
        case["written"] = encode_universe(universe).decode()
    results = run_original(cases)
    problems: list[str] = []
    calls_compared = 0
    for number, (case, universe, result) in enumerate(zip(cases, universes, results, strict=True)):
        assert result["load_error"] is None, (number, result["load_error"])
        assert result["written_error"] is None, (number, result["written_error"])
        mine = ours(universe, case["calls"])
        for label in ("calls", "written_calls"):
            found = compare(universe, case["calls"], mine, result[label])
            problems.extend(f"universe {number} ({label}): {p}" for p in found)
        calls_compared += len(case["calls"])
    assert problems == []
    assert calls_compared > 1500


def test_the_documented_differences_are_listed() -> None:
    """Each difference the comparison allows is a row of the docs' table."""
    table = DOCS.read_text().split("## Differences from windtunnel-bench", 1)[1]
    for row in (
        "`empty` without a container or string type",
        "an undeclared tool called in process",
        "hits carry their `match` evidence",
        "the `fail_call` answer says why",
    ):
        assert row in table, row
