"""`atomic_write` / `open_append`: the one write, which never follows a planted link."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from windtunnel.atomic_write import atomic_stream, atomic_write, open_append
from windtunnel.errors import InputError, TraceError, UniverseError
from windtunnel.importing import import_trace, write_import
from windtunnel.record.build import Recording
from windtunnel.record.saving import save_recording
from windtunnel.universe import Universe, write_universe

OUTSIDE = b"outside, untouched\n"
TRACE = Path(__file__).parent / "importing" / "data" / "traces" / "anthropic_refund.json"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the directory written to, which a planted link points at."""
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "elsewhere" / "victim"
    path.write_bytes(OUTSIDE)
    return path


def test_writes_the_bytes_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The target holds exactly the data; nothing else is left in the directory."""
    target = tmp_path / "out.json"
    atomic_write(target, b"new\n")
    atomic_write(target, b"newer\n")
    assert target.read_bytes() == b"newer\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_target_that_is_a_link_is_refused_by_name(tmp_path: Path, outside: Path) -> None:
    """A symbolic link where the file belongs: an error naming it; the link and its target stay."""
    target = tmp_path / "summary.json"
    target.symlink_to(outside)
    with pytest.raises(InputError) as caught:
        atomic_write(target, b"attacker's bytes")
    assert str(caught.value) == (
        f"{target}: is a symbolic link, not a regular file: refusing to write through it"
    )
    assert outside.read_bytes() == OUTSIDE
    assert target.is_symlink()


def test_a_planted_temporary_link_is_refused_by_name(tmp_path: Path, outside: Path) -> None:
    """`.<name>.tmp` planted as a link: refused, naming it; nothing is written through it."""
    target = tmp_path / "results.jsonl"
    planted = tmp_path / ".results.jsonl.tmp"
    planted.symlink_to(outside)
    with pytest.raises(InputError) as caught:
        atomic_write(target, b"data")
    assert str(caught.value) == (
        f"{planted}: is a symbolic link, not a regular file: refusing to write through it"
    )
    assert outside.read_bytes() == OUTSIDE
    assert not target.exists()


def test_a_dangling_temporary_link_is_not_followed_to_create_a_file(tmp_path: Path) -> None:
    """A link to a file that does not exist yet is not followed to create it."""
    (tmp_path / ".x.tmp").symlink_to(tmp_path / "created-elsewhere")
    with pytest.raises(InputError, match="symbolic link"):
        atomic_write(tmp_path / "x", b"data")
    assert not (tmp_path / "created-elsewhere").exists()


def test_a_fifo_in_place_of_the_target_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO where the file belongs: refused by name, without blocking on it."""
    target = tmp_path / "report.html"
    os.mkfifo(target)
    with pytest.raises(InputError) as caught:
        atomic_write(target, b"data")
    assert str(caught.value) == (
        f"{target}: is a FIFO (named pipe), not a regular file: refusing to write through it"
    )


def test_a_leftover_temporary_file_is_replaced(tmp_path: Path) -> None:
    """A regular `.<name>.tmp` (an interrupted write's leftover) does not stop the next write."""
    (tmp_path / ".out.tmp").write_bytes(b"half a file")
    atomic_write(tmp_path / "out", b"whole")
    assert (tmp_path / "out").read_bytes() == b"whole"
    assert not (tmp_path / ".out.tmp").exists()


def test_a_write_that_fails_midway_leaves_the_old_file(tmp_path: Path) -> None:
    """An error while streaming: the old file stays whole and the temporary file goes."""
    target = tmp_path / "out"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_stream(target) as f:
        f.write(b"part")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_error_type_is_the_callers(tmp_path: Path, outside: Path) -> None:
    """A universe's write fails as a `UniverseError`, an import's as a `TraceError`."""
    (tmp_path / "u.json").symlink_to(outside)
    with pytest.raises(UniverseError):
        atomic_write(tmp_path / "u.json", b"{}", error=UniverseError)
    with pytest.raises(TraceError):
        atomic_write(tmp_path / "u.json", b"{}", error=TraceError)


def test_appends_never_follow_a_link(tmp_path: Path, outside: Path) -> None:
    """`open_append` on a link, dangling or not: refused by name, nothing created or written."""
    link = tmp_path / "events.jsonl"
    link.symlink_to(outside)
    with pytest.raises(InputError) as caught:
        open_append(link)
    assert str(caught.value) == (
        f"{link}: is a symbolic link, not a regular file: refusing to write through it"
    )
    dangling = tmp_path / "results.jsonl"
    dangling.symlink_to(tmp_path / "elsewhere" / "new")
    with pytest.raises(InputError):
        open_append(dangling)
    assert outside.read_bytes() == OUTSIDE
    assert not (tmp_path / "elsewhere" / "new").exists()


def test_appends_never_write_a_file_shared_with_another_name(tmp_path: Path, outside: Path) -> None:
    """A hard link to a file elsewhere: refused, the shared file unchanged."""
    linked = tmp_path / "results.jsonl"
    os.link(outside, linked)
    with pytest.raises(InputError) as caught:
        open_append(linked)
    assert str(caught.value) == f"{linked}: has 2 names (a hard link): refusing to write to it"
    assert outside.read_bytes() == OUTSIDE


def _universe() -> Universe:
    return msgspec.convert(
        {"windtunnel_universe": 1, "tools": [{"name": "t", "input_schema": {"type": "object"}}]},
        Universe,
    )


def _write_universe(directory: Path) -> Path:
    write_universe(_universe(), directory / "u.universe.json")
    return directory / "u.universe.json"


def _save_log(directory: Path) -> Path:
    recording = Recording(universe=_universe(), log_lines=[b"{}"])
    save_recording(recording, directory / "r.universe.json", log=directory / "r.log")
    return directory / "r.log"


def _import(directory: Path) -> Path:
    envelope = import_trace(TRACE, format="anthropic-messages")
    output = write_import(envelope, directory, name="x")
    return directory / output.files[0]


@pytest.mark.parametrize(
    "write",
    [_write_universe, _save_log, _import],
    ids=["write_universe", "save_recording", "write_import"],
)
def test_every_writer_refuses_a_planted_temporary_link(
    write: Callable[[Path], Path], tmp_path: Path, outside: Path
) -> None:
    """The universe, `wt record`'s log and `wt import`'s files go through the one write: a
    planted `.<name>.tmp` link is refused by name and its target is unchanged."""
    first = tmp_path / "first"
    first.mkdir()
    name = write(first).name
    directory = tmp_path / "planted"
    directory.mkdir()
    (directory / f".{name}.tmp").symlink_to(outside)
    with pytest.raises(InputError) as caught:
        write(directory)
    assert caught.value.file == str(directory / f".{name}.tmp")
    assert outside.read_bytes() == OUTSIDE
