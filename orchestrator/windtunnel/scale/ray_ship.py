"""What a Ray shard needs, shipped through Ray itself: the pack's tree as one zip archive.

A Ray cluster gives its nodes no shared disk (KubeRay, a managed cluster), so the driver packs
the **shipped tree** (the pack file's directory, or `--ray-working-dir`; a `module:attr` pack
ships the working directory) into a zip, puts it once in Ray's object store, and every task
unpacks it into a temporary directory of its own. Universes the pack names outside the tree,
or by an absolute path, are added under `.windtunnel-universes/` and the task reads them there
(`load_pack_toml(relocated=...)`). The tree leaves out the run directory, virtual environments
(`.venv`, any directory holding a `pyvenv.cfg`), `.git`, `__pycache__` and symbolic links (a
link could reach anywhere on the driver's disk); a universe the pack names through a link is
shipped as the file it names.

The archive must stay under Ray's limit for a package shipped to the cluster (the gRPC message
size, 512 MiB unless `RAY_max_grpc_message_size` says otherwise); past it the run stops before
connecting, naming the limit and the size. Nothing here imports or runs a file of the tree:
it is read as bytes.
"""

from __future__ import annotations

import io
import os
import stat
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import msgspec

from ..errors import ConfigError
from ..input_files import MAX_PACK_BYTES, read_input
from ..runner.pack_file import decode_pack_file
from ..runner.scenario import ScenarioPack

__all__ = [
    "DEFAULT_PACKAGE_LIMIT",
    "PACKAGE_LIMIT_ENV",
    "UNIVERSES_DIR",
    "Shipment",
    "ShippedPack",
    "package_limit",
    "ship_pack",
    "unpack",
]

DEFAULT_PACKAGE_LIMIT = 512 * 1024 * 1024
"""Ray's cap on a package shipped to the cluster: its gRPC message size (Ray 2.x)."""
PACKAGE_LIMIT_ENV = "RAY_max_grpc_message_size"
"""The variable Ray reads to change that cap; we read it too, so the two agree."""
UNIVERSES_DIR = ".windtunnel-universes"
"""Where universes named outside the tree (or by an absolute path) go in the archive."""
_SKIPPED_DIRS = frozenset({".git", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})


class ShippedPack(msgspec.Struct, frozen=True, kw_only=True):
    """The pack as a task finds it in the unpacked tree (plain data, sent with each job)."""

    pack: str
    """A TOML pack's path inside the tree (POSIX, relative), or a `module:attr` pack."""
    toml: bool = True
    universes: dict[str, str] = msgspec.field(default_factory=dict)
    """A universe path as the pack file writes it -> its copy in the tree (POSIX, relative)."""


@dataclass(frozen=True)
class Shipment:
    """The archive to put in the object store, and how a task finds the pack in it."""

    archive: bytes
    pack: ShippedPack
    root: Path
    files: int
    raw_bytes: int


def package_limit() -> int:
    """The largest archive Ray accepts as a package, in bytes."""
    written = os.environ.get(PACKAGE_LIMIT_ENV, "").strip()
    try:
        value = int(written) if written else DEFAULT_PACKAGE_LIMIT
    except ValueError:
        raise ConfigError(
            f"{PACKAGE_LIMIT_ENV}={written!r}: expected a size in bytes", path=PACKAGE_LIMIT_ENV
        ) from None
    return value if value > 0 else DEFAULT_PACKAGE_LIMIT


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _is_venv(directory: Path) -> bool:
    return os.path.lexists(directory / "pyvenv.cfg")


def _walk(root: Path, skipped: set[Path]) -> Iterator[Path]:
    """Regular files under `root`, sorted, never through a link, skipping `skipped` and the
    directories no shard needs (venvs, `.git`, caches)."""
    with os.scandir(root) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name in _SKIPPED_DIRS or path in skipped or _is_venv(path):
                continue
            yield from _walk(path, skipped)
        elif entry.is_file(follow_symlinks=False):
            yield path


def _written_universes(pack_file: Path) -> list[str]:
    """Every universe path as the TOML pack file writes it (it was loaded already: valid)."""
    raw = read_input(str(pack_file), what="a pack file", error=ConfigError, limit=MAX_PACK_BYTES)
    data = tomllib.loads(raw.decode("utf-8"))
    tables = decode_pack_file(data, str(pack_file)).scenario
    return sorted({written for table in tables for written in table.upstreams.values()})


class _Archive:
    """A zip built in memory that stops, naming Ray's limit, once it outgrows it."""

    def __init__(self, root: Path, limit: int) -> None:
        self.root = root
        self.limit = limit
        self.buffer = io.BytesIO()
        self.zip = zipfile.ZipFile(self.buffer, "w", compression=zipfile.ZIP_DEFLATED)
        self.names: set[str] = set()
        self.raw_bytes = 0

    def add(self, name: str, source: Path) -> None:
        if name in self.names:
            return
        self.names.add(name)
        info = os.stat(source)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError("expected a regular file to ship to Ray", file=str(source))
        self.raw_bytes += info.st_size
        entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        entry.compress_type = zipfile.ZIP_DEFLATED
        entry.external_attr = (stat.S_IFREG | (info.st_mode & 0o755)) << 16
        with open(source, "rb") as src, self.zip.open(entry, "w", force_zip64=True) as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
                self.check()

    def check(self) -> None:
        if self.buffer.tell() >= self.limit:
            raise ConfigError(
                f"too big to ship to Ray: the files under {self.root} come to more than "
                f"{_mib(self.limit)} zipped ({_mib(self.raw_bytes)} read so far, "
                f"{len(self.names)} files), and Ray's limit for a package is "
                f"{_mib(self.limit)} ({self.limit} bytes, {PACKAGE_LIMIT_ENV}); ship a smaller "
                "tree (--ray-working-dir) or keep large files out of the pack's directory"
            )

    def close(self) -> bytes:
        self.zip.close()
        self.check()
        return self.buffer.getvalue()


def _tree_root(pack: ScenarioPack, working_dir: str | None) -> Path:
    if working_dir is not None:
        root = Path(working_dir).resolve()
        if not root.is_dir():
            raise ConfigError("expected a directory to ship to Ray", file=working_dir)
        return root
    if pack.source is not None:
        return Path(pack.source).resolve().parent
    return Path.cwd().resolve()


def ship_pack(
    pack_spec: str, pack: ScenarioPack, *, working_dir: str | None, run_dir: Path
) -> Shipment:
    """The archive of the shipped tree for `pack` (loaded from `pack_spec`), checked against
    Ray's package limit; `ConfigError` when it is too big or a file the pack needs is left out."""
    try:
        return _ship(pack_spec, pack, working_dir, run_dir)
    except OSError as exc:
        raise ConfigError(
            f"cannot read it to ship to Ray: {exc.strerror or exc}", file=exc.filename
        ) from None


def _ship(pack_spec: str, pack: ScenarioPack, working_dir: str | None, run_dir: Path) -> Shipment:
    root = _tree_root(pack, working_dir)
    archive = _Archive(root, package_limit())
    skipped = {run_dir.resolve()}
    if _inside(root, run_dir.resolve()):
        raise ConfigError(
            f"the tree to ship to Ray ({root}) is inside the run directory; use another -o",
            file=str(run_dir),
        )
    for path in _walk(root, skipped):
        archive.add(path.relative_to(root).as_posix(), path)
    if pack.source is not None:
        shipped = _ship_toml(Path(pack.source), root, archive)
    else:
        shipped = _ship_module(pack_spec, pack, root)
    data = archive.close()
    return Shipment(data, shipped, root, len(archive.names), archive.raw_bytes)


def _ship_toml(pack_file: Path, root: Path, archive: _Archive) -> ShippedPack:
    resolved = pack_file.resolve()
    if not _inside(resolved, root):
        raise ConfigError(
            f"the pack is outside the tree shipped to Ray ({root}): its directory is the "
            "agent's working directory, so --ray-working-dir must hold it",
            file=str(pack_file),
        )
    inside = resolved.relative_to(root).as_posix()
    archive.add(inside, resolved)
    base = pack_file.parent
    outside: dict[Path, str] = {}
    universes: dict[str, str] = {}
    for written in _written_universes(pack_file):
        target = Path(os.path.normpath(base / written)).resolve()
        if _inside(target, root):
            name = target.relative_to(root).as_posix()
        else:
            name = outside.setdefault(target, f"{UNIVERSES_DIR}/{len(outside) + 1}/{target.name}")
        archive.add(name, target)
        natural = os.path.normpath(PurePosixPath(inside).parent / written)
        if os.path.isabs(written) or natural != name:
            universes[written] = name
    return ShippedPack(pack=inside, toml=True, universes=universes)


def _ship_module(pack_spec: str, pack: ScenarioPack, root: Path) -> ShippedPack:
    """A Python pack is imported from the tree; its universes must be files of the tree (its
    code names them, so they cannot be moved: name them relative to the module)."""
    for scenario in pack.scenarios:
        for name, universe in scenario.upstreams.items():
            if not isinstance(universe, str | os.PathLike):
                continue  # a universe built in memory: the module builds it again there
            if not _inside(Path(universe).resolve(), root):
                raise ConfigError(
                    f"scenario {scenario.name!r}, upstream {name!r}: {universe} is outside the "
                    f"tree shipped to Ray ({root}); a Python pack's universes must be inside it "
                    "(--ray-working-dir)"
                )
    module, sep, attr = pack_spec.rpartition(":")
    if module.endswith(".py"):
        location = Path(module).resolve()
        if not _inside(location, root):
            raise ConfigError(
                f"the pack's module is outside the tree shipped to Ray ({root})", file=module
            )
        pack_spec = f"{location.relative_to(root).as_posix()}{sep}{attr}"
    return ShippedPack(pack=pack_spec, toml=False)


def unpack(archive: bytes, into: Path) -> None:
    """Unpack a shipped tree (on the worker). Names are checked as the driver wrote them:
    relative, no `..`; `zipfile` refuses to write outside `into` anyway."""
    with zipfile.ZipFile(io.BytesIO(archive)) as tree:
        for name in tree.namelist():
            parts = PurePosixPath(name).parts
            if PurePosixPath(name).is_absolute() or ".." in parts:
                raise ConfigError(f"a shipped file outside the tree: {name!r}")
        tree.extractall(into)
