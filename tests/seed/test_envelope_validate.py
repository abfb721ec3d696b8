"""`wt validate` on Contract A envelopes: OK / INVALID / WARN lines with the JSON path, the exit
codes, `--strict`, and universes and envelopes told apart by content in one run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.seed.envelope_differential import INVALID, LINT, VALID
from windtunnel.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"


def test_valid_envelopes_are_ok(capsys: pytest.CaptureFixture[str]) -> None:
    """Every valid reference envelope prints one `OK` line, nothing else; exit 0 (also --strict)."""
    assert main(["validate", "--strict", *map(str, VALID)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"OK {path}" for path in VALID]
    assert err == ""


def test_invalid_envelope_names_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid envelope is one `INVALID` line with the file and the JSON path; exit 2."""
    path = INVALID[[p.name for p in INVALID].index("malformed_witnessed_call.wtin.json")]
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().out == (
        f"INVALID {path} at $.witnessed_calls[0].args: must be an object\n"
    )


def test_every_invalid_reference_envelope_is_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    """All nine invalid reference envelopes: one INVALID line each, exit 2."""
    assert main(["validate", *map(str, INVALID)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["INVALID", str(p)] for p in INVALID]


def test_lint_warnings_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    """A lint envelope is OK with a WARN line naming the part's path; exit 0, and 1 under
    --strict (the producers' CI mode)."""
    truncated, unpaired = LINT
    assert main(["validate", str(truncated), str(unpaired)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK {truncated}",
        f"WARN {truncated} at $.messages[1].parts[0].arguments: the arguments of tool call "
        "'call_1' hold '[truncated]': the producer read a scrubbed or cut-off source, and a "
        "universe recorded from it will not answer the calls a rerun makes",
        f"OK {unpaired}",
        f"WARN {unpaired} at $.messages[1].parts[0]: tool response 'call_missing' answers no "
        "tool_call in the messages: valid (some producers add synthetic results), but often the "
        "wrong source; it is not imported",
    ]
    assert main(["validate", "--strict", str(truncated)]) == 1


def test_universes_and_envelopes_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A universe and an envelope validate side by side, each by its content whatever its name;
    an invalid file makes exit 2 even with --strict warnings elsewhere."""
    disguised = tmp_path / "looks-like-a-universe.json"
    shutil.copy(VALID[0], disguised)
    assert main(["validate", str(EXAMPLE), str(disguised)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK {EXAMPLE} (2 tools, 4 recordings)",
        f"OK {disguised}",
    ]
    assert main(["validate", "--strict", str(LINT[0]), str(INVALID[0])]) == 2


def test_a_universe_mentioning_the_key_is_still_a_universe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A universe whose recordings hold the string "windtunnel_interchange" near the top is
    validated as a universe, not refused as an envelope."""
    doc = json.loads(EXAMPLE.read_text())
    doc["recordings"][0]["args"]["query"] = '"windtunnel_interchange"'
    path = tmp_path / "u.json"
    path.write_text(json.dumps({"recordings": doc["recordings"], **doc}))
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == f"OK {path} (2 tools, 4 recordings)\n"


def test_an_envelope_we_wrote_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The trace.wtin.json `wt import` writes is OK for `wt validate --strict`."""
    out = tmp_path / "out"
    assert main(["import", str(VALID[0]), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["validate", "--strict", str(out / "trace.wtin.json")]) == 0
    assert capsys.readouterr().out == f"OK {out / 'trace.wtin.json'}\n"
