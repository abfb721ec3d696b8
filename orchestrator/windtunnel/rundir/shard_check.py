"""A shard's trace files checked against its results lines before `wt merge` trusts them.

Each results line records its unit's call count and the sha256 of the trace file as written
(`rundir.results.encode_unit`). A merge reads every trace file back and refuses, naming the unit,
a file that is missing, unreadable, swapped for another unit's, changed since it was written, or
whose results line was edited (a status turned from `error` to `passed`, say).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from ..errors import InputError
from ..runner.trace import Trace
from .layout import RESULTS_FILE, TRACES_DIR, read_run_file, run_path, trace_filename

__all__ = ["verified_trace"]

_decoder = msgspec.json.Decoder(Trace)


def verified_trace(run_dir: Path, row: Trace) -> Trace:
    """The full trace behind results row `row` of `run_dir`, once it checks out."""
    relpath = f"{TRACES_DIR}/{trace_filename(row.unit_id)}"
    path = run_path(run_dir, TRACES_DIR, trace_filename(row.unit_id))

    def refuse(problem: str) -> InputError:
        return InputError(f"unit {row.unit_id!r}: {problem}; not merged", file=str(run_dir))

    if row.trace_sha256 is None or row.call_count is None:
        raise refuse(f"its line in {RESULTS_FILE} records no trace digest")
    try:
        data = read_run_file(path, what="a trace file")
    except InputError as exc:
        raise refuse(f"its trace file {relpath} is unusable ({exc.message})") from None
    if data is None:
        raise refuse(f"its trace file {relpath} is missing")
    if hashlib.sha256(data).hexdigest() != row.trace_sha256:
        raise refuse(f"its trace file {relpath} is not the one written with its results line")
    try:
        full = _decoder.decode(data)
    except (msgspec.DecodeError, RecursionError):
        raise refuse(f"its trace file {relpath} does not decode") from None
    if full.unit_id != row.unit_id or len(full.mcp_calls) != row.call_count:
        raise refuse(
            f"its trace file {relpath} holds unit {full.unit_id!r} with "
            f"{len(full.mcp_calls)} call(s), its results line {row.call_count}"
        )
    if msgspec.structs.replace(full, mcp_calls=[], trace_sha256=row.trace_sha256) != row:
        raise refuse(f"its line in {RESULTS_FILE} differs from its trace file (edited?)")
    full.trace_sha256 = row.trace_sha256
    return full
