"""`pack.json`: which pack a run directory was run from, so `wt score` can find its rules again.

`wt run` writes it: the pack spec as given (a TOML path made absolute, or `module:attribute`) and
the working directory, which `module:attribute` packs import from.

A run directory is data (often a CI artifact from elsewhere), so `pack.json` only *points* at a
pack; nothing in the run directory is ever imported or run. `resolve_pack_ref` checks the pack it
names without running anything: a TOML file, a `file.py`, or the file a module would be imported
from must lie outside the run directory, and a module is looked up (and later imported) on a
`sys.path` from which every entry inside the run directory (its recorded working directory, the
current directory) is left out. The caller shows the `RecordedPack` it got, then loads it with
`load_recorded_pack`.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from ..atomic_write import atomic_write
from ..errors import ConfigError, InputError
from ..runner.pack_config import load_pack
from ..runner.scenario import ScenarioPack
from .layout import PACK_REF_FILE, read_run_file, run_path

__all__ = [
    "PackRef",
    "RecordedPack",
    "copy_pack_ref",
    "load_recorded_pack",
    "resolve_pack_ref",
    "write_pack_ref",
]

_NAME_IT = "name the pack with --pack"


class PackRef(msgspec.Struct, kw_only=True):
    pack: str
    spec: str
    cwd: str
    windtunnel_pack_ref: int = 1


@dataclass(frozen=True)
class RecordedPack:
    """The pack a run's `pack.json` names, checked to lie outside the run directory."""

    spec: str
    """As `load_pack` takes it."""
    kind: Literal["toml", "file", "module"]
    location: str
    """The file it is read or imported from (resolved)."""
    search_path: tuple[str, ...] = ()
    """`sys.path` while a `file` or `module` pack is imported: no entry inside the run."""


def write_pack_ref(run_dir: Path, pack: ScenarioPack, spec: str) -> None:
    """Record the pack of a run (best effort: a run never fails for this file)."""
    written = os.path.abspath(spec) if os.path.isfile(spec) else spec
    ref = PackRef(pack=pack.name, spec=written, cwd=os.getcwd())
    with contextlib.suppress(InputError):
        atomic_write(run_path(run_dir, PACK_REF_FILE), msgspec.json.encode(ref) + b"\n")


def copy_pack_ref(sources: Sequence[Path], out: Path) -> None:
    """A merged run records the pack of its first shard that recorded one (best effort)."""
    for source in sources:
        try:
            data = read_run_file(run_path(source, PACK_REF_FILE), what="a pack record")
        except InputError:
            continue
        if data is None:
            continue
        with contextlib.suppress(InputError):
            atomic_write(run_path(out, PACK_REF_FILE), data)
        return


class _RunDir:
    """Whether a path lies in the run directory, links resolved on both sides."""

    def __init__(self, run_dir: Path) -> None:
        self.root = os.path.realpath(run_dir)

    def holds(self, path: str) -> bool:
        resolved = os.path.realpath(path)
        return resolved == self.root or resolved.startswith(self.root.rstrip(os.sep) + os.sep)


def resolve_pack_ref(run_dir: Path) -> RecordedPack:
    """The pack `run_dir/pack.json` names, checked without importing or reading it; an
    `InputError` naming `pack.json` when there is none, or when it lies in the run directory."""
    path = run_path(run_dir, PACK_REF_FILE)
    data = read_run_file(path, what="a pack record")
    if data is None:
        raise InputError(
            f"this run does not record its pack ({PACK_REF_FILE}); name it with --pack",
            file=os.fspath(run_dir),
        )
    try:
        ref = msgspec.json.decode(data, type=PackRef)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise InputError(f"unreadable: {exc}", file=os.fspath(path)) from None
    inside = _RunDir(run_dir)
    spec = ref.spec

    def refuse(what: str) -> InputError:
        return InputError(
            f"the recorded pack {spec!r} {what}: a run directory is data, and nothing in it is "
            f"imported or run; {_NAME_IT}",
            file=os.fspath(path),
        )

    if not spec or "\0" in spec or "\0" in ref.cwd:
        raise InputError(f"no usable pack spec; {_NAME_IT}", file=os.fspath(path), path="$.spec")
    # The same choice as `load_pack`: an existing file (or a .toml name) is a TOML pack.
    if spec.endswith(".toml") or (os.path.exists(spec) and not os.path.isdir(spec)):
        if inside.holds(spec):
            raise refuse("is inside the run directory")
        return RecordedPack(spec=spec, kind="toml", location=os.path.realpath(spec))
    module, sep, attr = spec.rpartition(":")
    if not sep or not module or not attr:
        raise InputError(
            f"{spec!r} is neither a .toml pack nor module:attribute; {_NAME_IT}",
            file=os.fspath(path),
            path="$.spec",
        )
    search = _search_path(ref.cwd, inside)
    if module.endswith(".py"):
        if inside.holds(module):
            raise refuse("is inside the run directory")
        return RecordedPack(
            spec=spec, kind="file", location=os.path.realpath(module), search_path=search
        )
    places = _module_places(module, search)
    if places is None:
        raise refuse(
            "cannot be found outside the run directory (its working directory and any "
            "sys.path entry inside the run are not searched)"
        )
    if any(inside.holds(place) for place in places):
        raise refuse("would be imported from inside the run directory")
    location = os.path.realpath(places[-1]) if places else module
    return RecordedPack(spec=spec, kind="module", location=location, search_path=search)


def _search_path(recorded_cwd: str, inside: _RunDir) -> tuple[str, ...]:
    """`sys.path` for a recorded module pack: the run's working directory first, as `wt run`
    imported it, then this process's path and directory; no entry inside the run directory."""
    entries: list[str] = []
    for entry in (recorded_cwd, *sys.path, os.getcwd()):
        if entry in entries or inside.holds(entry or os.getcwd()):
            continue
        entries.append(entry)
    return tuple(entries)


def _module_places(name: str, search: Sequence[str]) -> list[str] | None:
    """Every file and directory importing `name` from `search` would read (each package on
    the way, then the module: its file last), found without running any code; None when it
    cannot be found."""
    places: list[str] = []
    locations: list[str] = list(search)
    parts = name.split(".")
    for index in range(len(parts)):
        full = ".".join(parts[: index + 1])
        loaded = sys.modules.get(full)
        spec = (
            loaded.__spec__
            if loaded is not None
            else importlib.machinery.PathFinder.find_spec(full, locations)
        )
        if spec is None:
            return None
        locations = list(spec.submodule_search_locations or [])
        places.extend(locations)
        if spec.has_location and spec.origin:
            places.append(spec.origin)
    return places


@contextlib.contextmanager
def _import_path(entries: tuple[str, ...]) -> Iterator[None]:
    saved = sys.path[:]
    sys.path[:] = entries
    try:
        yield
    finally:
        sys.path[:] = saved


def load_recorded_pack(recorded: RecordedPack) -> ScenarioPack:
    """Load a pack `resolve_pack_ref` checked; a module is imported with its checked path."""
    if recorded.kind == "toml":
        return load_pack(recorded.spec)
    with _import_path(recorded.search_path):
        try:
            return load_pack(recorded.spec, import_from_cwd=False)
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"cannot import the recorded pack: {exc}", file=recorded.spec
            ) from None
