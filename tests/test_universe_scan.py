"""A large universe's recordings located by a child process: the same universe, the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from windtunnel import universe_scan
from windtunnel.errors import UniverseError
from windtunnel.universe import decode_universe, encode_universe

CRM = Path(__file__).parents[1] / "configs" / "examples" / "crm.universe.json"


def universe_doc(count: int) -> dict[str, Any]:
    return {
        "windtunnel_universe": 1,
        "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
        "recordings": [
            {"tool_name": "lookup", "args": {"id": i, "tag": f"t{i % 7}"}, "result": {"n": i}}
            for i in range(count)
        ],
        "meta": {"note": "recordings: [ ] , {"},
    }


def irregular(doc: dict[str, Any]) -> bytes:
    """Hand-written spacing: CRLF, tabs, and a different gap after every recording."""
    recordings = [json.dumps(r) for r in doc["recordings"]]
    gaps = [" ,\r\n\t", ",", "\n,  "]
    body = "".join(r + gaps[i % 3] for i, r in enumerate(recordings[:-1])) + recordings[-1]
    head = {k: v for k, v in doc.items() if k != "recordings"}
    return (json.dumps(head)[:-1] + ', "recordings" :\t[ \r\n' + body + "\n ]\r\n}").encode()


def layouts() -> dict[str, bytes]:
    doc = universe_doc(50)
    copy_in_meta = {"meta": {"copy": doc["recordings"]}, **{k: doc[k] for k in doc if k != "meta"}}
    return {
        "written by encode_universe": encode_universe(decode_universe(json.dumps(doc))),
        "compact": json.dumps(doc, separators=(",", ":")).encode(),
        "irregular spacing": irregular(doc),
        "one recording": json.dumps(universe_doc(1)).encode(),
        "a copy of the recordings in meta, before them": json.dumps(copy_in_meta).encode(),
        "the crm example": CRM.read_bytes(),
    }


@pytest.fixture
def through_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(universe_scan, "SCAN_AT", 0)


def decoded_in_process(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(universe_scan, "SCAN_AT", 1 << 62)
        try:
            return decode_universe(data, file="u.json")
        except UniverseError as exc:
            return str(exc)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(layouts()))
def test_the_child_finds_every_recording(
    name: str, through_the_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the layout, decoding through the child gives exactly the in-process universe
    (a copy of the recordings before them: the child declines, the parent decodes it whole)."""
    data = layouts()[name]
    spans = universe_scan.recording_spans(data)
    if name.startswith("a copy"):
        assert spans is None
    else:
        assert spans is not None
        recordings = msgspec.json.decode(data)["recordings"]
        assert [msgspec.json.decode(bytes(raw)) for raw in spans] == recordings
    assert decode_universe(data, file="u.json") == decoded_in_process(data, monkeypatch)


def broken(kind: str) -> bytes:
    doc = universe_doc(5)
    if kind == "a recording of the wrong shape":
        doc["recordings"][3]["args"] = ["not", "an", "object"]
    elif kind == "an undeclared tool":
        doc["recordings"][2]["tool_name"] = "nope"
    elif kind == "nested too deep":
        doc["recordings"][4]["result"] = json.loads("[" * 130 + "]" * 130)
    elif kind == "a bad tool":
        doc["tools"][0]["name"] = 7
    data = json.dumps(doc).encode()
    if kind == "cut short":
        data = data[: len(data) // 2]
    return data


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "kind",
    [
        "a recording of the wrong shape",
        "an undeclared tool",
        "nested too deep",
        "a bad tool",
        "cut short",
    ],
)
def test_errors_are_the_same_through_the_child(
    kind: str, through_the_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken file gives the same one error, with the same JSON path or position."""
    data = broken(kind)
    expected = decoded_in_process(data, monkeypatch)
    assert isinstance(expected, str)
    with pytest.raises(UniverseError) as info:
        decode_universe(data, file="u.json")
    assert str(info.value) == expected


@pytest.mark.timeout(60)
def test_without_a_child_the_file_still_loads(
    through_the_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interpreter that cannot start the child: the parent decodes the file whole."""
    data = json.dumps(universe_doc(20)).encode()
    expected = decoded_in_process(data, monkeypatch)
    monkeypatch.setattr(universe_scan.sys, "executable", "/nonexistent/python")
    assert universe_scan.recording_spans(data) is None
    assert decode_universe(data, file="u.json") == expected
