"""`results.jsonl` and `traces/`: written unit by unit, so an interrupted run keeps everything
finished; read back and checked line by line.

    <run_dir>/results.jsonl        one line per finished unit (a trace without its call log)
    <run_dir>/traces/<unit>.json   the full trace of each unit, call log included
    <run_dir>/summary.json         aggregates (`Summary`), at the end
    <run_dir>/junit.xml            the CI projection, at the end
    <run_dir>/report.html          one self-contained page for humans, at the end

Each unit's trace file is written atomically *before* its line is appended, and each line is
one `write` followed by flush and `fsync`; a line is only counted once its newline is on disk, so
a crash can at worst leave an unterminated last line, which readers skip and writers cut off.
Every file goes through `atomic_write` or `open_append` and every path through `layout`: a link
planted in the directory is refused by name, never written through (see `layout`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import msgspec

from ..atomic_write import atomic_stream, atomic_write, fsync_dir, open_append
from ..canonical import scrub_surrogates
from ..errors import InputError
from ..runner.finished import FinishedUnits
from ..runner.html_report import ReportUnits, write_report
from ..runner.junit import write_junit
from ..runner.summary import Summary, SummaryBuilder
from ..runner.trace import Trace
from ..runner.unit_order import UnitOrder
from .layout import (
    JUNIT_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    TRACES_DIR,
    ensure_dir,
    open_for_reading,
    read_run_file,
    run_path,
    trace_filename,
    trace_relpath,
)
from .summary_file import write_summary

__all__ = [
    "RunUnits",
    "RunWriter",
    "encode_unit",
    "iter_rows",
    "load_full_trace",
    "read_results",
    "write_traces",
]

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Trace)
_EMFILE_HINT = "; raise the open-file limit (ulimit -n)"
_TAIL_CHUNK = 1 << 16


def _cut_unterminated_tail(results: Path) -> None:
    """Cut an interrupted last line off `results` (never through a link: `open_append`)."""
    fd = open_append(results)
    try:
        size = os.fstat(fd).st_size
        end = size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            chunk = os.pread(fd, end - start, start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        if end != size:
            os.ftruncate(fd, end)
            os.fsync(fd)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=os.fspath(results)) from None
    finally:
        os.close(fd)


class RunWriter:
    """Writes one run directory; `write` each trace as it finishes, then `finish`.

    Opening an existing run directory resumes it: finished units are read back, and an
    unterminated last line (an interrupted write) is cut off before anything is appended.
    """

    def __init__(self, run_dir: str | os.PathLike[str], *, pack: str = "windtunnel") -> None:
        self.run_dir = Path(run_dir)
        self.pack = pack
        self.traces_dir = run_path(self.run_dir, TRACES_DIR)
        self.results_path = run_path(self.run_dir, RESULTS_FILE)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the run directory: {exc.strerror}", file=os.fspath(run_dir)
            ) from None
        ensure_dir(self.traces_dir)
        # Only a bit per finished unit stays in memory; the summary is built as units are
        # written, and the reports stream the units back from disk.
        self._finished = FinishedUnits()
        self._summary = SummaryBuilder(pack)
        self._rewritten = False
        if os.path.lexists(self.results_path):
            _cut_unterminated_tail(self.results_path)
            for _, row in iter_rows(self.run_dir):
                self._count(row)

    def _count(self, trace: Trace) -> None:
        if not self._finished.add(trace.unit_id):
            self._rewritten = True  # a rerun: its last result counts, read back at `finish`
            return
        self._summary.add(trace)

    @property
    def traces(self) -> list[Trace]:
        """Every finished unit, in the order first written (a rerun replaces its unit), read
        back from the run directory with its call log."""
        return read_results(self.run_dir)

    @property
    def finished(self) -> FinishedUnits:
        """The units finished so far (read back when resuming, then each one written)."""
        return self._finished

    def finished_ids(self) -> set[str]:
        return set(self._finished)

    def trace_path(self, unit_id: str) -> Path:
        # `trace_filename` confines the name to one plain component of `traces/`.
        return run_path(self.traces_dir, trace_filename(unit_id))

    def write(self, trace: Trace) -> Path:
        """Persist one finished unit: its trace file, then its results line (fsynced).

        A write that fails (a full disk, a planted link) is an `InputError` naming the file; at
        worst it leaves an unterminated last line, which readers skip and the next writer cuts
        off.
        """
        return self.write_many([trace])[0]

    def write_many(self, traces: list[Trace]) -> list[Path]:
        """Persist units that finished together: every trace file (each fsynced), one directory
        fsync, then their results lines in one append and one fsync. A line never reaches disk
        before its trace file; concurrent finishes cost two shared fsyncs instead of two each."""
        paths: list[Path] = []
        lines: list[bytes] = []
        for index, trace in enumerate(traces):
            path = self.trace_path(trace.unit_id)
            try:
                full, line = encode_unit(trace)
            except UnicodeEncodeError:
                # Lone surrogates (an agent's `surrogateescape` text) cannot be UTF-8: keep the
                # unit, with U+FFFD in their place, in the files and in the reports.
                trace = msgspec.convert(scrub_surrogates(msgspec.to_builtins(trace)), Trace)
                traces[index] = trace
                full, line = encode_unit(trace)
            _with_hint(lambda: atomic_write(path, full, sync_dir=False))  # noqa: B023
            paths.append(path)
            lines.append(line)
        fsync_dir(self.traces_dir)

        def append() -> None:
            fd = open_append(self.results_path)
            try:
                start = os.lseek(fd, 0, os.SEEK_END)
                pending = memoryview(b"".join(lines))
                try:
                    while pending:
                        pending = pending[os.write(fd, pending) :]
                    os.fsync(fd)
                except OSError as exc:
                    # A batch that half fits (a full disk) is cut back whole: a unit is in
                    # results.jsonl exactly when it was reported finished.
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, start)
                    hint = _EMFILE_HINT if exc.errno == errno.EMFILE else ""
                    raise InputError(
                        f"cannot write: {exc.strerror or exc}{hint}",
                        file=os.fspath(self.results_path),
                    ) from None
            finally:
                os.close(fd)

        _with_hint(append)
        for trace in traces:
            self._count(trace)
        return paths

    def finish(self) -> Summary:
        """Write `summary.json`, `junit.xml` and `report.html` over every finished unit.

        Units are streamed from `results.jsonl` (and `traces/` for the report's failures), so a
        run of any size is reported in memory that does not grow with it.
        """
        units = RunUnits(self.run_dir, rewritten=self._rewritten)
        if self._rewritten:
            builder = SummaryBuilder(self.pack)
            for row in units.rows():
                builder.add(row)
            summary = builder.build()
        else:
            summary = self._summary.build()

        def summary_file() -> None:
            with atomic_stream(run_path(self.run_dir, SUMMARY_FILE)) as f:
                write_summary(f, summary)

        def junit() -> None:
            with atomic_stream(run_path(self.run_dir, JUNIT_FILE)) as f:
                write_junit(f, units.rows, summary)

        def report() -> None:
            with atomic_stream(run_path(self.run_dir, REPORT_FILE)) as f:
                write_report(lambda text: f.write(text.encode("utf-8")), units, summary)

        _with_hint(summary_file)
        _with_hint(junit)
        _with_hint(report)
        return summary


def encode_unit(trace: Trace) -> tuple[bytes, bytes]:
    """A finished unit as written: its trace file, and its results line, which records the
    file's call count and sha256 (set on `trace` too)."""
    trace.trace_file = trace_relpath(trace.unit_id)
    trace.call_count = len(trace.mcp_calls)
    trace.trace_sha256 = None
    full = msgspec.json.format(_encoder.encode(trace), indent=2) + b"\n"
    trace.trace_sha256 = hashlib.sha256(full).hexdigest()
    line = _encoder.encode(msgspec.structs.replace(trace, mcp_calls=[])) + b"\n"
    return full, line


def _with_hint(write: Callable[[], None]) -> None:
    """Run `write`; out of descriptors, the error also says a run can ask for fewer at once."""
    try:
        write()
    except InputError as exc:
        if not exc.message.endswith(_EMFILE_HINT):
            raise
        raise InputError(exc.message + " or lower --concurrency", file=exc.file) from None


def load_full_trace(run_dir: Path, row: Trace) -> Trace:
    """The full trace behind a results row, or the row itself when the file is unusable (a
    link planted in its place included: it is never followed)."""
    if not row.trace_file:
        return row
    path = run_path(run_dir, TRACES_DIR, trace_filename(row.unit_id))
    try:
        data = read_run_file(path, what="a trace file")
        if data is None:
            return row
        full = _decoder.decode(data)
    except (InputError, msgspec.DecodeError, RecursionError):
        return row
    # A file rewritten by a later attempt whose line never made it to disk is not this row's.
    same = (full.unit_id, full.started_at, full.status) == (row.unit_id, row.started_at, row.status)
    if not same:
        return row
    full.trace_sha256 = row.trace_sha256  # recorded in the row only: the file cannot hold its own
    return full


def read_results(run_dir: str | os.PathLike[str], *, with_calls: bool = True) -> list[Trace]:
    """The finished units of a run directory, each once, in first-written order.

    A unit written twice (a rerun) keeps its first position and its last line.

    An unterminated last line is an interrupted write and is skipped; any other bad line, or a
    `results.jsonl` that is a link, is an `InputError` naming the file (and line). With
    `with_calls`, call logs come from `traces/`.
    """
    root = Path(run_dir)
    traces: dict[str, Trace] = {}
    for _, row in iter_rows(root):
        traces[row.unit_id] = load_full_trace(root, row) if with_calls else row
    return list(traces.values())


def iter_rows(run_dir: str | os.PathLike[str]) -> Iterator[tuple[int, Trace]]:
    """(byte offset, row) of every complete line of `results.jsonl`, in file order, one at a
    time; a rerun's unit appears once per line. A bad line is an `InputError`."""
    path = run_path(run_dir, RESULTS_FILE)
    fd = open_for_reading(path, what="a results file")
    if fd is None:
        return
    with open(fd, "rb") as f:
        offset = 0
        try:
            for number, line in enumerate(f, 1):
                start, offset = offset, offset + len(line)
                if not line.endswith(b"\n"):
                    return  # an interrupted write
                if not line.strip():
                    continue
                yield start, _decode_row(line, path, number)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=os.fspath(path)) from None


def _lines_at(run_dir: Path, offsets: Iterable[int]) -> Iterator[Trace]:
    """The rows of `results.jsonl` starting at each of `offsets`, in that order."""
    path = run_path(run_dir, RESULTS_FILE)
    fd = open_for_reading(path, what="a results file")
    if fd is None:
        raise InputError("no such file", file=os.fspath(path))
    with open(fd, "rb") as f:
        for offset in offsets:
            f.seek(offset)
            yield _decoder.decode(f.readline())


def _decode_row(line: bytes, path: Path, number: int) -> Trace:
    """Line `number` of the results file at `path`; a bad line is an `InputError` naming both."""
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise InputError(str(exc), file=os.fspath(path), path=f"line {number}") from None
    except RecursionError:
        raise InputError(
            "nested too deeply to be a results line", file=os.fspath(path), path=f"line {number}"
        ) from None


class RunUnits(ReportUnits):
    """A run directory's units for the reports, streamed from disk.

    Normally each unit has one line; after a rerun (`rewritten`) the offset of each unit's last
    line is kept, in first-written order, as `read_results` reads them.
    """

    def __init__(self, run_dir: Path, *, rewritten: bool = False) -> None:
        self.run_dir = run_dir
        self._offsets: dict[str, int] | None = None
        if rewritten:
            self._offsets = {}
            for offset, row in iter_rows(run_dir):
                self._offsets[row.unit_id] = offset

    def rows(self) -> Iterator[Trace]:
        if self._offsets is None:
            for _, row in iter_rows(self.run_dir):
                yield row
        else:
            yield from _lines_at(self.run_dir, self._offsets.values())

    def ordered(self) -> Iterator[Trace]:
        """Failures and errors first, then passes; each group by unit id."""
        order = UnitOrder()
        if self._offsets is None:
            for offset, row in iter_rows(self.run_dir):
                order.add(row.unit_id, row.status, offset)
        else:
            offsets = self._offsets.values()
            for offset, row in zip(offsets, _lines_at(self.run_dir, offsets), strict=True):
                order.add(row.unit_id, row.status, offset)
        offsets_in_order = order.offsets()
        first = next(offsets_in_order, None)
        if first is None:
            return
        yield from _lines_at(self.run_dir, itertools.chain([first], offsets_in_order))

    def full(self, row: Trace) -> Trace:
        return load_full_trace(self.run_dir, row)


def write_traces(run_dir: str | os.PathLike[str], traces: Iterable[Trace], pack: str) -> Summary:
    """Write a whole run at once (tests, `wt merge`): every trace, then the reports."""
    writer = RunWriter(run_dir, pack=pack)
    for trace in traces:
        writer.write(trace)
    return writer.finish()
