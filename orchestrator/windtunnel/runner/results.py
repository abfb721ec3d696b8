"""The run directory: written unit by unit, so an interrupted run keeps everything finished.

    <run_dir>/results.jsonl        one line per finished unit (a trace without its call log)
    <run_dir>/traces/<unit>.json   the full trace of each unit, call log included
    <run_dir>/summary.json         aggregates (`Summary`), at the end
    <run_dir>/junit.xml            the CI projection, at the end
    <run_dir>/report.html          one self-contained page for humans, at the end

Each unit's trace file is written atomically *before* its line is appended, and each line is
one `write` followed by flush and `fsync`; a line is only counted once its newline is on disk, so
a crash can at worst leave an unterminated last line, which readers skip and writers cut off.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import msgspec

from ..canonical import scrub_surrogates
from ..errors import InputError
from ..input_files import read_input
from .finished import FinishedUnits
from .html_report import ReportUnits, write_report
from .junit import write_junit
from .layout import RESULTS_FILE, TRACES_DIR, trace_filename, trace_relpath
from .summary import Summary, SummaryBuilder
from .summary_file import write_summary
from .trace import Trace
from .unit_order import UnitOrder

__all__ = [
    "RESULTS_FILE",
    "TRACES_DIR",
    "RunUnits",
    "RunWriter",
    "atomic_stream",
    "atomic_write",
    "encode_unit",
    "iter_rows",
    "load_full_trace",
    "read_results",
    "trace_filename",
    "write_traces",
]

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Trace)


def atomic_write(path: Path, data: bytes, *, sync_dir: bool = True) -> None:
    """Write via a temporary file, fsync, then rename: readers see the old file or the new.

    `sync_dir=False` leaves making the rename durable to the caller (one directory fsync for a
    batch of files).
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_dir:
        _fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """`atomic_write` for data written piece by piece: a temporary file, fsync, rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable (POSIX; a no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _complete_length(path: Path) -> int:
    """Bytes of `path` up to and including its last newline."""
    data = read_input(path, what="a results file")
    return data.rfind(b"\n") + 1


class RunWriter:
    """Writes one run directory; `write` each trace as it finishes, then `finish`.

    Opening an existing run directory resumes it: finished units are read back, and an
    unterminated last line (an interrupted write) is cut off before anything is appended.
    """

    def __init__(self, run_dir: str | os.PathLike[str], *, pack: str = "windtunnel") -> None:
        self.run_dir = Path(run_dir)
        self.pack = pack
        self.traces_dir = self.run_dir / TRACES_DIR
        self.results_path = self.run_dir / RESULTS_FILE
        try:
            self.traces_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the run directory: {exc.strerror}", file=os.fspath(run_dir)
            ) from None
        # Only a bit per finished unit stays in memory; the summary is built as units are
        # written, and the reports stream the units back from disk.
        self._finished = FinishedUnits()
        self._summary = SummaryBuilder(pack)
        self._rewritten = False
        if self.results_path.exists():
            complete = _complete_length(self.results_path)
            if complete != self.results_path.stat().st_size:
                with open(self.results_path, "r+b") as f:
                    f.truncate(complete)
                    os.fsync(f.fileno())
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
        path = self.traces_dir / trace_filename(unit_id)
        # `trace_filename` already confines the name; this guards the guarantee.
        if path.resolve().parent != self.traces_dir.resolve():
            raise ValueError(f"trace path of {unit_id!r} escapes {self.traces_dir}")
        return path

    def write(self, trace: Trace) -> Path:
        """Persist one finished unit: its trace file, then its results line (fsynced).

        A write that fails (a full disk) is an `InputError` naming the file; at worst it leaves
        an unterminated last line, which readers skip and the next writer cuts off.
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
            _write_or_fail(path, lambda: atomic_write(path, full, sync_dir=False))  # noqa: B023
            paths.append(path)
            lines.append(line)
        _fsync_dir(self.traces_dir)

        def append() -> None:
            fd = os.open(
                self.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
            )
            try:
                start = os.lseek(fd, 0, os.SEEK_END)
                pending = memoryview(b"".join(lines))
                try:
                    while pending:
                        pending = pending[os.write(fd, pending) :]
                    os.fsync(fd)
                except OSError:
                    # A batch that half fits (a full disk) is cut back whole: a unit is in
                    # results.jsonl exactly when it was reported finished.
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, start)
                    raise
            finally:
                os.close(fd)

        _write_or_fail(self.results_path, append)
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
        target = self.run_dir / "summary.json"

        def summary_file() -> None:
            with atomic_stream(target) as f:
                write_summary(f, summary)

        _write_or_fail(target, summary_file)

        def junit() -> None:
            with atomic_stream(self.run_dir / "junit.xml") as f:
                write_junit(f, units.rows, summary)

        def report() -> None:
            with atomic_stream(self.run_dir / "report.html") as f:
                write_report(lambda text: f.write(text.encode("utf-8")), units, summary)

        _write_or_fail(self.run_dir / "junit.xml", junit)
        _write_or_fail(self.run_dir / "report.html", report)
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


def _write_or_fail(path: Path, write: Callable[[], None]) -> None:
    try:
        write()
    except OSError as exc:
        hint = ""
        if exc.errno == errno.EMFILE:
            hint = "; raise the open-file limit (ulimit -n) or lower --concurrency"
        raise InputError(
            f"cannot write: {exc.strerror or exc}{hint}", file=os.fspath(path)
        ) from None


def load_full_trace(run_dir: Path, row: Trace) -> Trace:
    """The full trace behind a results row, or the row itself when the file is unusable."""
    if not row.trace_file:
        return row
    path = run_dir / TRACES_DIR / trace_filename(row.unit_id)
    try:
        full = _decoder.decode(read_input(path, what="a trace file"))
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

    An unterminated last line is an interrupted write and is skipped; any other bad line is an
    `InputError` naming the file and line. With `with_calls`, call logs come from `traces/`.
    """
    root = Path(run_dir)
    path = root / RESULTS_FILE
    if not os.path.lexists(path):
        return []
    data = read_input(path, what="a results file")
    complete = data[: data.rfind(b"\n") + 1]
    traces: dict[str, Trace] = {}
    for number, line in enumerate(complete.splitlines(), 1):
        if not line.strip():
            continue
        row = _decode_row(line, path, number)
        traces[row.unit_id] = load_full_trace(root, row) if with_calls else row
    return list(traces.values())


def iter_rows(run_dir: str | os.PathLike[str]) -> Iterator[tuple[int, Trace]]:
    """(byte offset, row) of every complete line of `results.jsonl`, in file order, one at a
    time; a rerun's unit appears once per line. A bad line is an `InputError`."""
    path = Path(run_dir) / RESULTS_FILE
    try:
        f = open(path, "rb")  # noqa: SIM115  # closed below, also when the caller stops early
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=os.fspath(path)) from None
    with f:
        offset = 0
        for number, line in enumerate(f, 1):
            start, offset = offset, offset + len(line)
            if not line.endswith(b"\n"):
                return  # an interrupted write
            if not line.strip():
                continue
            yield start, _decode_row(line, path, number)


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

    def _at(self, offset: int) -> Trace:
        with open(self.run_dir / RESULTS_FILE, "rb") as f:
            f.seek(offset)
            return _decoder.decode(f.readline())

    def rows(self) -> Iterator[Trace]:
        if self._offsets is None:
            for _, row in iter_rows(self.run_dir):
                yield row
        else:
            for offset in self._offsets.values():
                yield self._at(offset)

    def ordered(self) -> Iterator[Trace]:
        """Failures and errors first, then passes; each group by unit id."""
        order = UnitOrder()
        if self._offsets is None:
            for offset, row in iter_rows(self.run_dir):
                order.add(row.unit_id, row.status, offset)
        else:
            for offset in self._offsets.values():
                row = self._at(offset)
                order.add(row.unit_id, row.status, offset)
        offsets = order.offsets()
        first = next(offsets, None)
        if first is None:
            return
        with open(self.run_dir / RESULTS_FILE, "rb") as f:
            for offset in itertools.chain([first], offsets):
                f.seek(offset)
                yield _decoder.decode(f.readline())

    def full(self, row: Trace) -> Trace:
        return load_full_trace(self.run_dir, row)


def write_traces(run_dir: str | os.PathLike[str], traces: Iterable[Trace], pack: str) -> Summary:
    """Write a whole run at once (tests, `wt merge`): every trace, then the reports."""
    writer = RunWriter(run_dir, pack=pack)
    for trace in traces:
        writer.write(trace)
    return writer.finish()
