"""`import_trace` and `write_import`: a trace file in, an envelope, a runnable pack and a review
note out."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import msgspec

from ..atomic_write import atomic_write
from ..errors import TraceError
from ..input_files import read_input
from ..universe import encode_universe
from .builder import TraceBuilder
from .contract_a import envelope_from_value
from .diagnostics import COMPUTED_CODES, computed_warnings
from .document import parse_document
from .envelope import Envelope, SourceFormat, TraceWarning, encode_envelope
from .fixture import FixturePlan, plan_fixtures
from .interchange_view import derive_interchange
from .review_note import REVIEW_FILE, render_review_note
from .skeleton import render_pack
from .sniff import ADAPTERS, CONTRACT_A, FORMATS, sniff_format

__all__ = [
    "ENVELOPE_FILE",
    "PACK_FILE",
    "REVIEW_FILE",
    "ImportOutput",
    "OutputNotEmpty",
    "import_trace",
    "write_import",
]

ENVELOPE_FILE = "trace.wtin.json"
PACK_FILE = "scenario.toml"


def import_trace(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    task: str | None = None,
    upstream: str | None = None,
) -> Envelope:
    """Read a trace in any supported format (sniffed unless `format` is given) as Contract A.

    `task` replaces the trace's task; `upstream` names the upstream the trace did not name.
    """
    file = os.fspath(path)
    data = read_input(file, what="a trace file", error=TraceError)
    return import_bytes(data, file=file, format=format, task=task, upstream=upstream)


def import_bytes(
    data: bytes,
    *,
    file: str,
    format: str | None = None,
    task: str | None = None,
    upstream: str | None = None,
) -> Envelope:
    """`import_trace` on bytes already read (`file` names them in errors)."""
    if format is not None and format not in FORMATS:
        raise TraceError(f"unknown format {format!r}; one of: {', '.join(FORMATS)}", file=file)
    doc = parse_document(data, file=file)
    chosen = format or sniff_format(doc)
    if chosen == CONTRACT_A:
        if doc.jsonl:
            raise TraceError(
                "a Contract A envelope is one JSON document, not JSON lines", file=file
            )
        envelope = envelope_from_value(doc.single, file=file, sha256=doc.sha256, upstream=upstream)
        if task is not None:
            envelope.task.prompt = task
        # Warnings that follow from the content are the reader's, whatever the file said.
        kept = [w for w in envelope.warnings if w.code not in COMPUTED_CODES]
        envelope.warnings = kept + computed_warnings(envelope)
        if task is not None and envelope.trace.source.format != "contract-a":
            # Seed fields we derived follow the new task; a producer's stay as written.
            model = envelope.session.get("model")
            derive_interchange(envelope, model=model if isinstance(model, str) else None)
        return envelope
    # ADAPTERS is keyed by the adapters' own FORMAT literals.
    builder = TraceBuilder(
        cast(SourceFormat, chosen), file=os.path.basename(file), sha256=doc.sha256
    )
    ADAPTERS[chosen](doc, builder)
    if task is not None:
        builder.prompt = task
    if upstream is not None and not builder.name_unnamed(upstream):
        raise TraceError(
            f"--upstream {upstream!r}: the trace has no unnamed upstream, or one of that name "
            "already exists",
            file=file,
        )
    return builder.build()


class ImportOutput(msgspec.Struct):
    """What `write_import` wrote: the files (relative to the output directory), in order."""

    directory: str
    files: list[str]
    plan: FixturePlan
    warnings: list[TraceWarning]


class OutputNotEmpty(TraceError):
    """The output directory holds files and `force` was not given."""


def _check_output(out: Path, *, force: bool) -> None:
    """Refuse an output path that is not a directory, or a non-empty one unless `force`."""
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise TraceError("the output path exists and is not a directory", file=os.fspath(out))
    if force:
        return
    try:
        occupied = next(os.scandir(out), None) is not None
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror or exc}", file=os.fspath(out)) from None
    if occupied:
        raise OutputNotEmpty(
            "the output directory is not empty; pass --force to write into it (files of the "
            "same name are replaced, others left as they are)",
            file=os.fspath(out),
        )


def write_import(
    envelope: Envelope,
    directory: str | os.PathLike[str],
    *,
    name: str,
    keep_suspect: bool = False,
    wire_only: bool = False,
    force: bool = True,
) -> ImportOutput:
    """Write the envelope, one universe per upstream, the pack TOML and the review note
    (`IMPORTED.md`) into `directory`. With `force=False` a non-empty directory is refused
    (`OutputNotEmpty`) before anything is written."""
    out = Path(directory)
    _check_output(out, force=force)
    plan = plan_fixtures(envelope, keep_suspect=keep_suspect, wire_only=wire_only)
    contents: dict[str, bytes] = {ENVELOPE_FILE: encode_envelope(envelope)}
    for upstream_id, universe in plan.universes.items():
        contents[plan.files[upstream_id]] = encode_universe(universe)
    contents[PACK_FILE] = render_pack(envelope, plan, name=name).encode()
    contents[REVIEW_FILE] = render_review_note(envelope, plan, files=list(contents)).encode()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TraceError(f"cannot write: {exc.strerror or exc}", file=os.fspath(out)) from None
    for file_name, data in contents.items():
        atomic_write(out / file_name, data, error=TraceError)
    return ImportOutput(
        directory=os.fspath(out), files=list(contents), plan=plan, warnings=envelope.warnings
    )
