"""Paths inside a run directory: made from plain names only, sub-directories real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.errors import InputError
from windtunnel.rundir.layout import ensure_dir, has_results, read_run_file, run_path


@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "/etc", "x\0y"])
def test_a_path_is_made_of_plain_names_only(tmp_path: Path, name: str) -> None:
    """`..`, `.`, an empty name, a slash or a NUL never make a path inside a run directory."""
    with pytest.raises(ValueError, match="is not a plain name inside a run directory"):
        run_path(tmp_path, "traces", name)


def test_run_path_joins_plain_names(tmp_path: Path) -> None:
    """Plain names join under the run directory."""
    assert run_path(tmp_path, "traces", "a-1.json") == tmp_path / "traces" / "a-1.json"


def test_a_sub_directory_must_be_a_real_one(tmp_path: Path) -> None:
    """A link or a file where a sub-directory belongs is refused by name; a missing one is made."""
    ensure_dir(tmp_path / "made")
    assert (tmp_path / "made").is_dir()
    (tmp_path / "link").symlink_to(tmp_path / "made")
    with pytest.raises(InputError) as caught:
        ensure_dir(tmp_path / "link")
    assert str(caught.value) == (
        f"{tmp_path / 'link'}: is a symbolic link, not a directory: refusing to write through it"
    )
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="is not a directory"):
        ensure_dir(tmp_path / "file")
    ensure_dir(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()


def test_reading_refuses_a_planted_link(tmp_path: Path) -> None:
    """`results.jsonl` or another run file that is a link is refused, not followed."""
    (tmp_path / "outside.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").symlink_to(tmp_path / "outside.jsonl")
    with pytest.raises(InputError) as caught:
        has_results(tmp_path / "run")
    assert str(caught.value) == (
        f"{tmp_path / 'run' / 'results.jsonl'}: is a symbolic link, not a regular file: a run "
        "directory's files are its own"
    )
    with pytest.raises(InputError):
        read_run_file(tmp_path / "run" / "results.jsonl", what="a results file")
    assert read_run_file(tmp_path / "run" / "absent.json", what="a file") is None
    assert not has_results(tmp_path / "not-made-yet")
