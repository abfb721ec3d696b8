"""Decoders never crash: near-valid universes and packs raise only the project's own errors."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.mutations import (
    JSON_ODDITIES,
    base_universe,
    mutate_json,
    mutate_toml_lines,
    pack_toml,
)
from windtunnel.errors import ConfigError, HookRequiredError, UniverseError, UnknownToolError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner.pack_config import load_pack_toml
from windtunnel.runner.units import plan_units
from windtunnel.universe import Universe, decode_universe, encode_universe

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def synthesize(tool: str, args: dict[str, Any], universe: Universe) -> Any:
    return {"synthesized": tool}


def exercise(universe: Universe) -> None:
    """Serve a loaded universe in process: every recording replays as a hit, misses answer."""
    server = RecordedMCPServer(universe, synthesize=synthesize)
    for recording in universe.recordings:
        try:
            # As MCP's params carry them: sent bare, flat args that look like a wire wrapper
            # would be flattened once more (the loader flattens one level).
            server.call_tool(recording.tool_name, {"arguments": recording.args})
        except UnknownToolError:
            raise AssertionError("a loaded universe's recording names an unknown tool") from None
    for tool in universe.tools:
        server.call_tool(tool.name, {"fuzz": [1, {"x": None}]})
    hits = [c for c in server.call_log()[: len(universe.recordings)] if c.divergence is None]
    assert len(hits) == len(universe.recordings)


def test_base_universe_is_valid() -> None:
    """The mutation base itself loads and replays every recording as a hit."""
    universe = decode_universe(json.dumps(base_universe()))
    exercise(universe)
    assert decode_universe(encode_universe(universe)) == universe


@FUZZ
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=4))
def test_near_valid_universes_load_or_raise_universe_error(rng: random.Random, rounds: int) -> None:
    """Mutated valid universes load and serve every recording, or raise a UniverseError naming the file."""
    doc = mutate_json(base_universe(), rng, rounds)
    data = json.dumps(doc).encode()
    try:
        universe = decode_universe(data, file="near.json")
    except UniverseError as exc:
        assert exc.file == "near.json"
        assert str(exc).startswith("near.json")
        return
    try:
        exercise(universe)
    except HookRequiredError:
        pytest.fail("a hook was given, yet the server asked for one")
    assert decode_universe(encode_universe(universe)) == universe


def test_mutations_never_change_their_building_blocks() -> None:
    """Mutating leaves the shared oddities untouched, so equal draws always make equal documents."""
    before = json.dumps(JSON_ODDITIES)
    for seed in range(3000):
        first = mutate_json(base_universe(), random.Random(seed), 4)
        again = mutate_json(base_universe(), random.Random(seed), 4)
        assert json.dumps(first) == json.dumps(again)
    assert json.dumps(JSON_ODDITIES) == before


@FUZZ
@given(st.randoms(use_true_random=False), st.binary(max_size=8))
def test_corrupted_universe_bytes_raise_only_universe_error(
    rng: random.Random, junk: bytes
) -> None:
    """Truncated, spliced or invalid-UTF-8 universe files raise only UniverseError."""
    data = json.dumps(base_universe()).encode()
    cut = rng.randrange(len(data))
    candidate = rng.choice([data[:cut], data[:cut] + junk + data[cut:], data[:cut] + b"\xff\xfe"])
    try:
        decode_universe(candidate, file="cut.json")
    except UniverseError as exc:
        assert exc.file == "cut.json"


def test_deeply_nested_universe_is_a_universe_error() -> None:
    """Nesting deeper than the decoder's limit is a clear error, not a RecursionError."""
    deep = b'{"windtunnel_universe": 1, "tools": [], "meta": {"x": ' + b"[" * 100_000
    deep += b"]" * 100_000 + b"}}"
    with pytest.raises(UniverseError) as info:
        decode_universe(deep, file="deep.json")
    assert info.value.file == "deep.json"


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("packs")
    (root / "crm.universe.json").write_text(json.dumps(base_universe()))
    return root


def load_or_config_error(path: Path) -> None:
    try:
        pack = load_pack_toml(path)
    except ConfigError as exc:
        assert exc.file == str(path)
        assert str(exc).startswith(str(path))
        return
    assert [unit.id for unit in plan_units(pack)]


def test_base_pack_is_valid(pack_dir: Path) -> None:
    """The mutation base itself loads: two scenarios, three units."""
    path = pack_dir / "base.toml"
    path.write_text(pack_toml("crm.universe.json"))
    pack = load_pack_toml(path)
    assert [unit.id for unit in plan_units(pack)] == ["one#0", "one#1", "two#0"]


@FUZZ
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=4))
def test_near_valid_packs_load_or_raise_config_error(
    pack_dir: Path, rng: random.Random, rounds: int
) -> None:
    """Line-level mutations of a valid pack load or raise one ConfigError naming the file."""
    path = pack_dir / "near.toml"
    path.write_text(mutate_toml_lines(pack_toml("crm.universe.json"), rng, rounds))
    load_or_config_error(path)


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_as_a_pack_raise_only_config_error(pack_dir: Path, data: bytes) -> None:
    """Any bytes given as a pack file load or raise ConfigError, invalid UTF-8 included."""
    path = pack_dir / "bytes.toml"
    path.write_bytes(data)
    load_or_config_error(path)


@pytest.mark.parametrize(
    "upstream",
    ['"crm\\u0000.universe.json"', '"' + "n" * 5000 + '"', '"' + "a/" * 3000 + 'x"'],
    ids=["nul-byte", "name-too-long", "path-too-long"],
)
def test_unusable_upstream_paths_are_config_errors(pack_dir: Path, upstream: str) -> None:
    """Upstream paths the OS refuses (NUL, overlong name or path) are ConfigErrors naming the key."""
    path = pack_dir / "paths.toml"
    path.write_text(
        f'[pack]\nname = "p"\n[[scenario]]\nname = "s"\ntask = "t"\n'
        f"[scenario.upstreams]\ncrm = {upstream}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_pack_toml(path)
    assert info.value.path == "scenario[0].upstreams.crm"


def test_deeply_nested_trace_is_a_trace_error() -> None:
    """`wt import` of JSON nested past the decoder's limit should be a TraceError."""
    from windtunnel.errors import TraceError
    from windtunnel.importing import import_bytes

    with pytest.raises(TraceError):
        import_bytes(b"[" * 100_000 + b"]" * 100_000, file="deep.json")
