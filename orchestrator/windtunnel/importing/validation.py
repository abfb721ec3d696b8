"""`wt validate` for Contract A envelopes: is the file valid, and what would a producer fix.

A file is `OK` or `INVALID` (the first problem, with its JSON path: the seed's rules for its fields,
then ours for the fields we add), and an `OK` file gets one `WARN` per lint finding of the seed's
rules (`interchange.lint_interchange`). Lines are returned, not printed: the CLI escapes and
prints them. `claims_contract_a` tells an envelope from a universe by content without reading a
large universe twice.
"""

from __future__ import annotations

import os
import stat

import msgspec

from ..errors import TraceError
from ..input_files import read_input
from .contract_a import envelope_from_value, is_contract_a
from .document import parse_document
from .envelope import Envelope
from .interchange import Lint, lint_interchange

__all__ = ["EnvelopeReport", "check_envelope_file", "claims_contract_a"]

_SNIFF_BYTES = 4096
_MARKERS = (b'"windtunnel_interchange"', b'"contract"', b'"session"')


class EnvelopeReport(msgspec.Struct):
    """The verdict on one file: `valid`, the `OK` / `INVALID` / `WARN` lines, the warnings."""

    valid: bool
    lines: list[str]
    warnings: int


def claims_contract_a(path: str) -> bool:
    """Whether the file's first bytes name a Contract A key: then it is read as an envelope
    (a universe holding such a string is handed back by `check_envelope_file`)."""
    # Non-blocking, and only a regular file is peeked at: a FIFO or a device is left to the
    # universe reader, which refuses it by name.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, _SNIFF_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    return any(marker in head for marker in _MARKERS)


def _lints(envelope: Envelope) -> list[Lint]:
    value = {"messages": envelope.messages}
    return lint_interchange(value)


def check_envelope_file(file: str) -> EnvelopeReport | None:
    """Validate and lint `file` as an envelope; None when its top level is not Contract A."""
    try:
        data = read_input(file, what="a trace file", error=TraceError)
        doc = parse_document(data, file=file)
    except TraceError as exc:
        return EnvelopeReport(valid=False, lines=[f"INVALID {exc}"], warnings=0)
    if doc.jsonl or not is_contract_a(doc.single):
        return None
    try:
        envelope = envelope_from_value(doc.single, file=file, sha256=doc.sha256)
    except TraceError as exc:
        return EnvelopeReport(valid=False, lines=[f"INVALID {exc}"], warnings=0)
    lines = [f"OK {file}"]
    found = _lints(envelope)
    lines += [f"WARN {file} at {lint.path}: {lint.message}" for lint in found]
    return EnvelopeReport(valid=True, lines=lines, warnings=len(found))
