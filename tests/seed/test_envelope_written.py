"""What Wind Tunnel writes as Contract A is an envelope windtunnel-bench reads, and imports to the
calls we replay; files in our earlier shape stay readable and are written in the new one.

Every sample trace of tests/importing (one or more per source format, our earlier envelope shape
included) and every valid reference envelope is imported by us; the `trace.wtin.json` we write is
loaded by the original in its venv, linted by it, and imported by it: every call our fixture
replays is a call its fixture replays, served the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.importing.samples import SAMPLES
from tests.seed.envelope_differential import VALID, original, served_calls
from windtunnel.importing import encode_envelope, import_trace, read_envelope, write_import
from windtunnel.importing.interchange import check_interchange, lint_interchange

pytestmark = pytest.mark.timeout(180)

SEED_FIELDS = (
    "windtunnel_interchange",
    "otel_genai_mapping",
    "source",
    "session",
    "messages",
    "tool_definitions",
    "witnessed_calls",
)
EARLIER_SHAPE = Path(__file__).parents[1] / "importing/data/traces/contract_a_minimal.wtin.json"


def _ours(universe_files: list[Path]) -> list[tuple[str, object, str]]:
    recordings = []
    for file in universe_files:
        recordings += json.loads(file.read_text()).get("recordings", [])
    return served_calls(recordings)


def test_every_envelope_we_write_loads_in_the_original(tmp_path: Path) -> None:
    """For every sample trace: the original loads our envelope without error, its lint agrees
    with ours, and its import replays every call ours replays, with the same served result."""
    written: list[Path] = []
    replayed: list[list[tuple[str, object, str]]] = []
    for sample in SAMPLES:
        envelope = import_trace(sample.path, format=sample.format, task=sample.task)
        out = tmp_path / sample.name
        output = write_import(envelope, out, name=sample.name)
        written.append(out / "trace.wtin.json")
        replayed.append(_ours([out / name for name in output.plan.files.values()]))
    theirs = original(written, tmp_path)
    total = 0
    for path, ours, their in zip(written, replayed, theirs, strict=True):
        assert their["error"] is None, (path, their["error"])
        value = json.loads(path.read_text())
        check_interchange(value, file=str(path))
        assert len(their["warnings"]) == len(lint_interchange(value)), path
        their_calls = served_calls(their["recordings"])
        missing = [call for call in ours if call not in their_calls]
        assert missing == [], path
        total += len(ours)
    assert total >= 20


def test_a_producers_envelope_round_trips_through_ours(tmp_path: Path) -> None:
    """A reference envelope imported and written by us imports in the original to the same
    recordings as the reference itself: its seed fields are kept as the producer wrote them."""
    written = []
    for path in VALID:
        out = tmp_path / path.stem
        write_import(import_trace(path), out, name="x")
        written.append(out / "trace.wtin.json")
        producer = json.loads(path.read_text())
        ours = json.loads(written[-1].read_text())
        assert {k: ours[k] for k in SEED_FIELDS if k in ours} == {
            k: producer[k] for k in SEED_FIELDS if k in producer
        }
    (tmp_path / "direct").mkdir()
    (tmp_path / "ours").mkdir()
    direct = original(VALID, tmp_path / "direct")
    through_ours = original(written, tmp_path / "ours")
    for a, b in zip(direct, through_ours, strict=True):
        assert (a["recordings"], a["evidence"], a["stubbed"], a["tags"]) == (
            b["recordings"],
            b["evidence"],
            b["stubbed"],
            b["tags"],
        )


def test_the_earlier_shape_stays_readable_and_is_written_in_the_new_one(tmp_path: Path) -> None:
    """An envelope in our earlier shape (`contract` + `version`) is read, imports its calls, and
    is written as a `windtunnel_interchange` 1 envelope that the original loads."""
    assert json.loads(EARLIER_SHAPE.read_text())["contract"] == "wind-tunnel/contract-a"
    envelope = read_envelope(EARLIER_SHAPE)
    assert [(c.tool, c.outcome) for c in envelope.calls] == [("backup_status", "ok")]
    out = tmp_path / "out"
    output = write_import(envelope, out, name="x")
    written = json.loads((out / "trace.wtin.json").read_text())
    assert written["windtunnel_interchange"] == 1
    assert "contract" not in written
    (their,) = original([out / "trace.wtin.json"], tmp_path)
    assert their["error"] is None
    assert served_calls(their["recordings"]) == _ours([out / f for f in output.plan.files.values()])
    # And reading what we wrote gives the same envelope back.
    assert encode_envelope(read_envelope(out / "trace.wtin.json")) == encode_envelope(envelope)
