"""Every sample trace imports to its golden envelope, valid against the shipped JSON Schema."""

from __future__ import annotations

import os
from pathlib import Path

import jsonschema
import msgspec
import pytest
from samples import SAMPLE_IDS, SAMPLES, Sample

from windtunnel.importing import encode_envelope, import_trace, write_import
from windtunnel.importing.contract_a import decode_envelope
from windtunnel.importing.envelope import json_schema

UPDATE = os.environ.get("WT_UPDATE_GOLDEN") == "1"


def _import(sample: Sample) -> bytes:
    return encode_envelope(import_trace(sample.path, format=sample.format, task=sample.task))


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_envelope_matches_golden(sample: Sample) -> None:
    """The envelope of each sample is byte-identical to its golden file."""
    produced = _import(sample)
    if UPDATE:
        sample.golden.write_bytes(produced)
    assert produced.decode() == sample.golden.read_text()


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_golden_validates_against_json_schema(sample: Sample) -> None:
    """Each golden envelope is valid against the JSON Schema shipped with the package."""
    validator = jsonschema.Draft202012Validator(json_schema())
    errors = [
        e.message for e in validator.iter_errors(msgspec.json.decode(sample.golden.read_bytes()))
    ]
    assert errors == []


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_golden_round_trips_through_the_reader(sample: Sample) -> None:
    """Decoding a golden envelope and encoding it again gives the same bytes."""
    data = sample.golden.read_bytes()
    assert encode_envelope(decode_envelope(data, file=str(sample.golden))) == data


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_import_output_is_byte_identical_across_runs(sample: Sample, tmp_path: Path) -> None:
    """Two imports of the same trace write exactly the same files."""
    outputs = []
    for run in ("a", "b"):
        envelope = import_trace(sample.path, format=sample.format, task=sample.task)
        result = write_import(envelope, tmp_path / run, name=sample.name, keep_suspect=True)
        outputs.append({f: (tmp_path / run / f).read_bytes() for f in result.files})
    assert outputs[0] == outputs[1]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(outputs[0])


def test_reimporting_an_envelope_gives_the_same_envelope(tmp_path: Path) -> None:
    """An emitted trace.wtin.json imports to itself: Contract A is a fixed point."""
    sample = SAMPLES[0]
    envelope = import_trace(sample.path, format=sample.format, task=sample.task)
    write_import(envelope, tmp_path, name="x")
    again = import_trace(tmp_path / "trace.wtin.json")
    assert encode_envelope(again) == encode_envelope(envelope)
