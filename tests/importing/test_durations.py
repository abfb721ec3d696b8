"""How long each call took, where the trace timed it, reaches its recording's `meta.duration_ms`
(what `delay:recorded` replays), to the microsecond the trace gave."""

from __future__ import annotations

import json
from pathlib import Path

from windtunnel.importing import import_trace, write_import
from windtunnel.importing.normalize import elapsed_ms, seconds_of

TRACES = Path(__file__).parent / "data" / "traces"


def _recorded(trace: str, tmp_path: Path) -> list[tuple[str, object]]:
    written = write_import(import_trace(TRACES / trace), tmp_path, name="x")
    assert "fixture.universe.json" in written.files
    universe = json.loads((tmp_path / "fixture.universe.json").read_text())
    return [(r["tool_name"], r.get("meta")) for r in universe["recordings"]]


def test_a_timestamped_json_rpc_capture_gives_each_recording_its_duration(tmp_path: Path) -> None:
    """Request `ts` to answer `ts`, per call (the calendar capture: 140, 300 and 250 ms)."""
    assert _recorded("calendar.jsonl", tmp_path) == [
        ("find_slots", {"duration_ms": 140.0}),
        ("book_room", {"duration_ms": 300.0}),
        ("book_room", {"duration_ms": 250.0}),
    ]


def test_otlp_spans_give_each_recording_its_duration(tmp_path: Path) -> None:
    """A tool span's start to its end."""
    assert _recorded("otlp_orders.json", tmp_path) == [
        ("get_order", {"duration_ms": 300.0}),
        ("return_policy", {"duration_ms": 200.0}),
    ]


def test_a_capture_without_timestamps_gives_no_duration(tmp_path: Path) -> None:
    """No `ts`: no `meta` at all, never a made-up 0."""
    lines = (TRACES / "calendar.jsonl").read_text().splitlines()
    bare = [json.dumps(json.loads(line)["msg"]) for line in lines]
    (tmp_path / "bare.jsonl").write_text("\n".join(bare) + "\n")
    written = write_import(import_trace(tmp_path / "bare.jsonl"), tmp_path / "out", name="x")
    assert "fixture.universe.json" in written.files
    universe = json.loads((tmp_path / "out" / "fixture.universe.json").read_text())
    assert [r.get("meta") for r in universe["recordings"]] == [None, None, None]


def test_durations_keep_the_traces_microseconds() -> None:
    """ISO texts and Unix seconds alike, to the microsecond (the envelope's own timestamps stop
    at the millisecond); an end before the start is no duration."""
    start = seconds_of("2026-09-03T08:15:01.000100Z")
    assert elapsed_ms(start, seconds_of("2026-09-03T08:15:01.140350+00:00")) == 140.25
    assert elapsed_ms(seconds_of(1788430501.5), seconds_of(1788430501.7505)) == 250.5
    assert elapsed_ms(seconds_of("2026-09-03T08:15:01"), seconds_of("2026-09-03T08:15:00")) is None
    assert seconds_of("yesterday") is None
    assert seconds_of(True) is None
