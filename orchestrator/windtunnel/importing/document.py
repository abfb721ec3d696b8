"""Reading a trace file into JSON values: one document, or JSON lines with their line numbers.

Every problem is a `TraceError` that names the file and the line (and column) where it is.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, NoReturn

import msgspec

from ..errors import TraceError
from ..input_files import read_input

__all__ = ["Document", "parse_document", "read_document"]


class Document(msgspec.Struct):
    """A parsed trace file.

    `records` holds `(line, value)` pairs: one pair (line 1) for a single JSON document, one per
    non-blank line for JSON lines. `jsonl` says which.
    """

    file: str
    sha256: str
    records: list[tuple[int, Any]]
    jsonl: bool

    def fail(self, message: str, where: str | None = None) -> NoReturn:
        raise TraceError(message, file=self.file, path=where)

    @property
    def single(self) -> Any:
        """The value of a single-document file (the first record of a JSON-lines file)."""
        return self.records[0][1] if self.records else None


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _byte_offset(message: str) -> int | None:
    _, sep, rest = message.rpartition("(byte ")
    if not sep:
        return None
    digits = rest.rstrip(")")
    return int(digits) if digits.isdigit() else None


def _json_failure(file: str, text: str, exc: msgspec.DecodeError, line: int = 1) -> TraceError:
    message = str(exc)
    offset = _byte_offset(message)
    reason = message.split(" (byte ", 1)[0]
    if offset is None:
        where = f"line {line}"
    else:
        # msgspec counts bytes; positions for people count characters.
        chars = len(text.encode()[:offset].decode(errors="ignore"))
        where = _position(text, chars)
        if line > 1:
            where = f"line {line}, column {where.split('column ', 1)[1]}"
    return TraceError(f"not valid JSON: {reason}", file=file, path=where)


def parse_document(data: bytes, *, file: str) -> Document:
    """Parse bytes as one JSON document, else as JSON lines."""
    try:
        return _parse_document(data, file=file)
    except RecursionError:
        raise TraceError("JSON is nested too deeply to be a trace", file=file) from None


def _parse_document(data: bytes, *, file: str) -> Document:
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError(
            f"not UTF-8 text (bad byte at offset {exc.start})", file=file, path=None
        ) from None
    if not text.strip():
        raise TraceError("the file is empty", file=file)
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as whole:
        lines = text.splitlines()
        first = next((i for i, line in enumerate(lines) if line.strip()), 0)
        try:
            msgspec.json.decode(lines[first])
        except msgspec.DecodeError:
            raise _json_failure(file, text, whole) from None
        records: list[tuple[int, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                records.append((number, msgspec.json.decode(line)))
            except msgspec.DecodeError as exc:
                raise _json_failure(file, line, exc, line=number) from None
        return Document(file=file, sha256=digest, records=records, jsonl=True)
    return Document(file=file, sha256=digest, records=[(1, value)], jsonl=False)


def read_document(path: str | os.PathLike[str]) -> Document:
    """Read and parse a trace file."""
    file = os.fspath(path)
    data = read_input(file, what="a trace file", error=TraceError)
    return parse_document(data, file=file)
