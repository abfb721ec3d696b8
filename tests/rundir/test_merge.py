"""`merge_runs`: order-independent, equal to the unsharded run, loud about gaps and doubles."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.scale.shard_dirs import small_pack, unit_trace, write_shards
from windtunnel.cli.main import main
from windtunnel.errors import InputError
from windtunnel.rundir.layout import MANIFEST_FILE, trace_filename
from windtunnel.rundir.manifest import build_manifest, read_manifest
from windtunnel.rundir.merge import merge_runs
from windtunnel.rundir.results import read_results, write_traces
from windtunnel.runner.units import plan_units
from windtunnel.scale.shards import ShardSpec, shard_of

RUN_FILES = ["results.jsonl", "summary.json", "junit.xml", "report.html", "merge.json"]


def snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run directory that a merge writes, by relative path."""
    files = {name: (run_dir / name).read_bytes() for name in RUN_FILES if (run_dir / name).exists()}
    for path in sorted((run_dir / "traces").iterdir()):
        files[f"traces/{path.name}"] = path.read_bytes()
    return files


@pytest.fixture(scope="module")
def four_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The 12 units of a 6x2 pack cut into 4 shards."""
    return write_shards(tmp_path_factory.mktemp("shards"), small_pack(), 4)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(4)))
def test_merge_is_order_independent(four_shards: list[Path], order: list[int]) -> None:
    """Merging the shards in any order writes byte-identical run directories."""
    with tempfile.TemporaryDirectory() as tmp:
        merge_runs(four_shards, Path(tmp) / "a")
        merge_runs([four_shards[i] for i in order], Path(tmp) / "b")
        assert snapshot(Path(tmp) / "b") == snapshot(Path(tmp) / "a")


def test_merge_equals_the_unsharded_run(tmp_path: Path, four_shards: list[Path]) -> None:
    """The merged results, traces and reports are the ones a single run of the plan writes."""
    pack = small_pack()
    report = merge_runs(four_shards, tmp_path / "merged")
    write_traces(tmp_path / "whole", [unit_trace(u) for u in plan_units(pack)], pack.name)
    merged, whole = snapshot(tmp_path / "merged"), snapshot(tmp_path / "whole")
    assert merged.pop("merge.json")
    assert merged == whole
    assert (report.summary.total, report.summary.passed, report.missing) == (12, 12, [])
    assert report.merged == [ShardSpec(i, 4) for i in range(1, 5)]
    record = json.loads((tmp_path / "merged" / "merge.json").read_text())
    assert record["merged"] == ["1/4", "2/4", "3/4", "4/4"]
    assert (record["units"], record["shards"], record["missing"]) == (12, 4, [])


def test_pass_hat_k_is_recomputed_across_shards(tmp_path: Path) -> None:
    """Repeats of one scenario run in several shards; pass@k and pass^k count them together."""
    pack = small_pack(scenarios=1, repeats=4)
    ids = [u.id for u in plan_units(pack)]
    assert len({shard_of(uid, 3) for uid in ids}) > 1
    dirs = write_shards(
        tmp_path, pack, 3, status_of=lambda u: "failed" if u.repeat == 1 else "passed"
    )
    summary = merge_runs(dirs, tmp_path / "merged").summary
    s0 = summary.scenarios["s0"]
    assert (s0.runs, s0.passed, s0.failed) == (4, 3, 1)
    assert s0.pass_hat_k == {"1": 0.75, "2": 0.5, "3": 0.25, "4": 0.0}
    assert s0.pass_at_k == {"1": 0.75, "2": 1.0, "3": 1.0, "4": 1.0}
    assert summary.ok is False
    saved = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert saved["scenarios"]["s0"]["pass_hat_k"] == {"1": 0.75, "2": 0.5, "3": 0.25, "4": 0.0}


def test_a_missing_shard_is_refused_naming_its_units(tmp_path: Path) -> None:
    """Without shard 3/3 the merge fails, names its unit ids, and writes nothing."""
    dirs = write_shards(tmp_path, small_pack(scenarios=3, repeats=1), 3)
    assert read_manifest(dirs[2]).units == ["s0#0", "s1#0"]
    with pytest.raises(InputError) as caught:
        merge_runs(dirs[:2], tmp_path / "merged")
    assert str(caught.value) == (
        "2 unit(s) of the plan are missing: s0#0, s1#0; shard(s) 3/3 not given"
    )
    assert not (tmp_path / "merged").exists()


def test_an_absent_empty_shard_loses_nothing(tmp_path: Path) -> None:
    """A shard that owns no unit may be absent: every unit of the plan is still there once."""
    dirs = write_shards(tmp_path, small_pack(scenarios=3, repeats=1), 3)
    assert read_manifest(dirs[1]).units == []
    report = merge_runs([dirs[0], dirs[2]], tmp_path / "merged")
    assert (report.summary.total, report.missing) == (3, [])
    assert report.merged == [ShardSpec(1, 3), ShardSpec(3, 3)]


def test_an_unfinished_shard_is_refused_naming_its_units(tmp_path: Path) -> None:
    """A shard that stopped early leaves units missing: the merge names them and the shard."""
    dirs = write_shards(tmp_path, small_pack(), 2, skip=frozenset({"s3#1", "s0#0"}))
    with pytest.raises(InputError) as caught:
        merge_runs(dirs, tmp_path / "merged")
    shards = sorted({shard_of("s0#0", 2), shard_of("s3#1", 2)})
    unfinished = ", ".join(f"{i}/2 ({tmp_path / f's{i}'})" for i in shards)
    assert str(caught.value) == (
        f"2 unit(s) of the plan are missing: s0#0, s3#1; unfinished: {unfinished}"
    )


def test_allow_missing_merges_what_finished(tmp_path: Path) -> None:
    """With allow_missing the merge writes every finished unit and reports the missing ones."""
    dirs = write_shards(tmp_path, small_pack(), 2, skip=frozenset({"s3#1"}))
    report = merge_runs(dirs, tmp_path / "merged", allow_missing=True)
    assert report.missing == ["s3#1"]
    assert report.summary.total == 11
    assert len(read_results(tmp_path / "merged")) == 11
    assert json.loads((tmp_path / "merged" / "merge.json").read_text())["missing"] == ["s3#1"]


def test_a_shard_given_twice_is_refused_naming_its_units(tmp_path: Path) -> None:
    """The same shard twice (even from two directories) would run its units twice: refused."""
    pack = small_pack(scenarios=3, repeats=1)
    dirs = write_shards(tmp_path / "a", pack, 2)
    again = write_shards(tmp_path / "b", pack, 2)
    with pytest.raises(InputError) as caught:
        merge_runs([*dirs, again[0]], tmp_path / "merged")
    units = ", ".join(read_manifest(dirs[0]).units)
    assert str(caught.value) == (
        f"shard 1/2 given twice: {dirs[0]} and {again[0]} (units {units} ran twice)"
    )


def test_shards_of_different_plans_are_refused(tmp_path: Path) -> None:
    """Shards cut from different plans (here: other repeats) never merge."""
    one = write_shards(tmp_path / "one", small_pack(repeats=1), 2)
    two = write_shards(tmp_path / "two", small_pack(repeats=2), 2)
    with pytest.raises(InputError) as caught:
        merge_runs([one[0], two[1]], tmp_path / "merged")
    p1, p2 = read_manifest(one[0]).plan_hash[:12], read_manifest(two[1]).plan_hash[:12]
    assert str(caught.value) == (
        f"the shards come from different plans: plan {p1} in {one[0]}; plan {p2} in {two[1]}"
    )


def test_shards_of_different_counts_are_refused(tmp_path: Path) -> None:
    """Shard 1/2 and shard 2/3 of one plan do not make a run."""
    pack = small_pack()
    halves = write_shards(tmp_path / "halves", pack, 2)
    thirds = write_shards(tmp_path / "thirds", pack, 3)
    with pytest.raises(InputError) as caught:
        merge_runs([halves[0], thirds[1]], tmp_path / "merged")
    assert str(caught.value) == (
        f"the shards cut the plan into different counts: 1/2 in {halves[0]}, 2/3 in {thirds[1]}"
    )


def test_a_unit_outside_its_shard_is_refused(tmp_path: Path) -> None:
    """A shard directory holding another shard's unit is refused, naming the unit."""
    pack = small_pack(scenarios=3, repeats=1)
    dirs = write_shards(tmp_path, pack, 2)
    stray = next(u for u in plan_units(pack) if shard_of(u.id, 2) == 2)
    write_traces(dirs[0], [unit_trace(stray)], pack.name)
    with pytest.raises(InputError) as caught:
        merge_runs(dirs, tmp_path / "merged")
    assert str(caught.value) == f"{dirs[0]}: holds units that are not shard 1/2's: {stray.id}"


def test_merge_refuses_an_output_with_results(tmp_path: Path) -> None:
    """Merging into a directory that already holds results is refused."""
    dirs = write_shards(tmp_path, small_pack(), 2)
    with pytest.raises(InputError) as caught:
        merge_runs(dirs, dirs[0])
    assert str(caught.value) == f"{dirs[0]}: already holds results; merge into a new directory"


def test_manifest_problems_name_the_file(tmp_path: Path) -> None:
    """No shard.json, a bad one, or an edited plan: one InputError naming the file and path."""
    pack = small_pack(scenarios=2, repeats=1)
    (tmp_path / "plain").mkdir()
    with pytest.raises(InputError) as caught:
        read_manifest(tmp_path / "plain")
    assert str(caught.value) == (
        f"{tmp_path / 'plain'}: not a shard run directory: no shard.json "
        "(run it with wt run --shard i/N)"
    )
    manifest = build_manifest(pack.name, plan_units(pack), ShardSpec(1, 1))
    cases = {
        "shard": ({"shard": 3}, "Expected `str`, got `int`", "$.shard"),
        "edited": (
            {"plan": ["s0#0"]},
            "plan_hash does not match the plan's unit ids (edited or truncated)",
            "$.plan_hash",
        ),
        "version": (
            {"windtunnel_shard": 2},
            "unknown shard.json version 2; this Wind Tunnel reads version 1",
            "$.windtunnel_shard",
        ),
        "index": ({"shard": "2/1"}, "shard index must be in 1..1 (1-based), got 2", "$.shard"),
        "units": ({"units": []}, "units are not the units of shard 1/1 of the plan", "$.units"),
    }
    for name, (change, message, path) in cases.items():
        doc = {**msgspec.to_builtins(manifest), **change}
        (tmp_path / name).mkdir()
        (tmp_path / name / MANIFEST_FILE).write_text(json.dumps(doc))
        with pytest.raises(InputError) as caught:
            read_manifest(tmp_path / name)
        assert str(caught.value) == f"{tmp_path / name / MANIFEST_FILE} at {path}: {message}"


def _tamper_deleted(shard: Path, trace: Path) -> None:
    trace.unlink()


def _tamper_swapped(shard: Path, trace: Path) -> None:
    other = next(p for p in sorted((shard / "traces").iterdir()) if p != trace)
    trace.write_bytes(other.read_bytes())


def _tamper_edited(shard: Path, trace: Path) -> None:
    edited = trace.read_bytes().replace(b'"status": "failed"', b'"status": "passed"')
    assert edited != trace.read_bytes()
    trace.write_bytes(edited)


def _tamper_status(shard: Path, trace: Path) -> None:
    results = shard / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b'"status":"failed"', b'"status":"passed"')
    results.write_bytes(b"".join(lines))


def _tamper_calls(shard: Path, trace: Path) -> None:
    results = shard / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b'"call_count":0', b'"call_count":3')
    results.write_bytes(b"".join(lines))


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        (_tamper_deleted, "its trace file {rel} is missing"),
        (_tamper_swapped, "its trace file {rel} is not the one written with its results line"),
        (_tamper_edited, "its trace file {rel} is not the one written with its results line"),
        (_tamper_status, "its line in results.jsonl differs from its trace file (edited?)"),
        (
            _tamper_calls,
            "its trace file {rel} holds unit {unit!r} with 0 call(s), its results line 3",
        ),
    ],
    ids=["deleted", "swapped", "edited", "status-edited", "call-count-edited"],
)
def test_a_shard_whose_trace_does_not_match_its_results_line_is_refused(
    tmp_path: Path, tamper: Any, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A deleted, swapped or edited trace file, or an edited results line, is exit 2 naming the unit."""
    dirs = write_shards(tmp_path, small_pack(), 2, status_of=lambda unit: "failed")
    first = read_results(dirs[0], with_calls=False)[0]
    trace = dirs[0] / "traces" / trace_filename(first.unit_id)
    tamper(dirs[0], trace)
    out = tmp_path / "merged"
    assert main(["merge", *map(str, dirs), "-o", str(out)]) == 2
    rel = f"traces/{trace.name}"
    assert capsys.readouterr().err == (
        f"wt: error: {dirs[0]}: unit {first.unit_id!r}: "
        f"{problem.format(rel=rel, unit=first.unit_id)}; not merged\n"
    )
    assert not (out / "results.jsonl").exists()


def test_every_results_line_records_its_trace_digest_and_call_count(tmp_path: Path) -> None:
    """Each results line carries the sha256 of its trace file as written and the call count."""
    [shard] = write_shards(tmp_path, small_pack(scenarios=2, repeats=1), 1)
    for line in (shard / "results.jsonl").read_bytes().splitlines():
        row = json.loads(line)
        data = (shard / row["trace_file"]).read_bytes()
        assert row["trace_sha256"] == hashlib.sha256(data).hexdigest()
        assert row["call_count"] == len(json.loads(data)["mcp_calls"])
        assert json.loads(data)["trace_sha256"] is None
