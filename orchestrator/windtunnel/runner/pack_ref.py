"""`pack.json`: which pack a run directory was run from, so `wt score` can find its rules again.

`wt run` writes it: the pack spec as given (a TOML path made absolute, or `module:attribute`) and
the working directory, which `module:attribute` packs import from.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec

from ..errors import InputError
from ..input_files import read_input
from .pack_config import load_pack
from .results import atomic_write
from .scenario import ScenarioPack

__all__ = ["PACK_REF_FILE", "PackRef", "copy_pack_ref", "load_pack_ref", "write_pack_ref"]

PACK_REF_FILE = "pack.json"


class PackRef(msgspec.Struct, kw_only=True):
    pack: str
    spec: str
    cwd: str
    windtunnel_pack_ref: int = 1


def write_pack_ref(run_dir: Path, pack: ScenarioPack, spec: str) -> None:
    """Record the pack of a run (best effort: a run never fails for this file)."""
    written = os.path.abspath(spec) if os.path.isfile(spec) else spec
    ref = PackRef(pack=pack.name, spec=written, cwd=os.getcwd())
    try:
        atomic_write(run_dir / PACK_REF_FILE, msgspec.json.encode(ref) + b"\n")
    except OSError:
        return


def copy_pack_ref(sources: list[Path], out: Path) -> None:
    """A merged run records the pack of its first shard that recorded one (best effort)."""
    for source in sources:
        try:
            data = read_input(source / PACK_REF_FILE, what="a pack record")
        except InputError:
            continue
        try:
            atomic_write(out / PACK_REF_FILE, data)
        except OSError:
            return
        return


def load_pack_ref(run_dir: Path) -> ScenarioPack:
    """The pack a run recorded in `pack.json`; an `InputError` when it cannot be had."""
    path = run_dir / PACK_REF_FILE
    if not os.path.lexists(path):
        raise InputError(
            f"this run does not record its pack ({PACK_REF_FILE}); name it with --pack",
            file=os.fspath(run_dir),
        )
    try:
        ref = msgspec.json.decode(read_input(path, what="a pack record"), type=PackRef)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise InputError(f"unreadable: {exc}", file=os.fspath(path)) from None
    if ":" in ref.spec and not os.path.isfile(ref.spec) and ref.cwd not in sys.path:
        sys.path.insert(0, ref.cwd)  # a module:attribute pack imports from where it ran
    return load_pack(ref.spec)
