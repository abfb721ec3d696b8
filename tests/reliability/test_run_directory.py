"""A run directory is untrusted data (a CI artifact from elsewhere): `wt score` never imports or
runs code found in it, and neither `wt score` nor `wt run --resume` writes through a link
planted in it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scale.packs import scripted_pack
from windtunnel.cli.main import main
from windtunnel.rundir.layout import trace_filename

pytestmark = pytest.mark.timeout(120)

OUTSIDE = b'{"outside": "untouched"}\n'
NAME_IT = "a run directory is data, and nothing in it is imported or run; name the pack with --pack"


@pytest.fixture
def finished_run(tmp_path: Path) -> tuple[Path, Path]:
    """A finished three-unit run of a scripted pack (one unit fails): `(pack, run directory)`."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["run", str(pack), "-o", str(run), "--progress", "plain"]) == 1
    return pack, run


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the run directory that a planted link points at."""
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "elsewhere" / "victim.json"
    path.write_bytes(OUTSIDE)
    return path


@pytest.fixture
def clean_modules() -> Iterator[None]:
    """Modules a test imports by name are forgotten afterwards."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _record_pack(run: Path, spec: str, cwd: Path) -> None:
    (run / "pack.json").write_text(json.dumps({"pack": "scripted", "spec": spec, "cwd": str(cwd)}))


def _plant_code(directory: Path, marker: Path) -> None:
    """`evil.py` and package `evilpkg` that would write `marker` when imported."""
    code = f"open({str(marker)!r}, 'w').write('ran')\nPACK = None\n"
    (directory / "evil.py").write_text(code)
    (directory / "evilpkg").mkdir()
    (directory / "evilpkg" / "__init__.py").write_text(code)
    (directory / "evilpkg" / "sub.py").write_text("PACK = None\n")


@pytest.mark.parametrize(
    ("spec", "recorded_cwd", "chdir_into_run", "problem"),
    [
        ("{run}/evil.py:PACK", "{tmp}", False, "is inside the run directory"),
        ("{tmp}/link.py:PACK", "{tmp}", False, "is inside the run directory"),
        ("evil:PACK", "{run}", False, "cannot be found outside the run directory"),
        ("evilpkg.sub:PACK", "{run}", False, "cannot be found outside the run directory"),
        ("evil:PACK", "{tmp}/elsewhere", True, "cannot be found outside the run directory"),
        (
            "linkedpkg.sub:PACK",
            "{tmp}/mods",
            False,
            "would be imported from inside the run directory",
        ),
        ("{run}/pack.toml", "{tmp}", False, "is inside the run directory"),
    ],
    ids=[
        "file-in-run",
        "link-to-file-in-run",
        "module-cwd-run",
        "package-cwd-run",
        "module-process-in-run",
        "package-linked-into-run",
        "toml-in-run",
    ],
)
def test_score_never_imports_code_from_the_run_directory(
    finished_run: tuple[Path, Path],
    outside: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    clean_modules: None,
    spec: str,
    recorded_cwd: str,
    chdir_into_run: bool,
    problem: str,
) -> None:
    """A `pack.json` naming code shipped in the run directory (a file, a module found from the
    recorded working directory or from the current one, a package, a package outside that is a
    link into the run, a TOML pack there): exit 2 with one line saying why, and the planted code
    never ran."""
    pack, run = finished_run
    marker = tmp_path / "marker"
    _plant_code(run, marker)
    (run / "pack.toml").write_bytes(pack.read_bytes())
    (tmp_path / "link.py").symlink_to(run / "evil.py")
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "linkedpkg").symlink_to(run / "evilpkg")
    spec = spec.format(run=run, tmp=tmp_path)
    _record_pack(run, spec, Path(recorded_cwd.format(run=run, tmp=tmp_path)))
    if chdir_into_run:
        monkeypatch.chdir(run)
        monkeypatch.syspath_prepend("")
    capsys.readouterr()
    assert main(["score", str(run), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {run / 'pack.json'}: the recorded pack {spec!r} {problem}"
        + (
            " (its working directory and any sys.path entry inside the run are not searched)"
            if problem.startswith("cannot")
            else ""
        )
        + f": {NAME_IT}\n"
    )
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_score_imports_a_recorded_module_pack_outside_the_run_and_shows_it_first(
    finished_run: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    clean_modules: None,
) -> None:
    """A module pack outside the run is used, named (with its file) before it is imported; run
    from inside the run directory, the module's own imports still never reach the run's code."""
    pack, run = finished_run
    marker = tmp_path / "marker"
    (run / "evilhelper.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "goodpack.py").write_text(
        "try:\n    import evilhelper\nexcept ImportError:\n    pass\n"
        "from windtunnel.runner.pack_config import load_pack\n"
        f"PACK = load_pack({str(pack)!r})\n"
    )
    _record_pack(run, "goodpack:PACK", mods)
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend("")
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["score", str(run), "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        f"pack: goodpack:PACK from {mods / 'goodpack.py'} (recorded in {run / 'pack.json'})",
        "scripted: re-scored 3 unit(s): FAILED: 2 passed, 1 failed, 0 errors; 0 changed status",
    ]
    assert not marker.exists()
    assert sys.path[0] == ""  # the user's path is back as it was


def _unfinish_last_unit(run: Path) -> str:
    """Drop the last results line (that unit runs again on --resume); its trace file name."""
    lines = (run / "results.jsonl").read_bytes().splitlines(keepends=True)
    (run / "results.jsonl").write_bytes(b"".join(lines[:-1]))
    unit = json.loads(lines[-1])["unit_id"]
    (run / "traces" / trace_filename(unit)).unlink()
    return f"traces/{trace_filename(unit)}"


@pytest.mark.parametrize(
    "planted",
    [
        "results.jsonl",
        ".summary.json.tmp",
        "summary.json",
        ".junit.xml.tmp",
        "report.html",
        "events.jsonl",
        "unit-trace",
        "unit-trace-tmp",
    ],
)
def test_resume_never_writes_through_a_planted_link(
    finished_run: tuple[Path, Path],
    outside: Path,
    capsys: pytest.CaptureFixture[str],
    planted: str,
) -> None:
    """`wt run --resume` over a run with a link planted where it writes: exit 2 naming it, and
    the file outside is unchanged (before: a linked results.jsonl with a torn last line was
    cut down, linked `*.tmp` files were overwritten)."""
    pack, run = finished_run
    if planted.startswith("unit-trace"):
        trace = _unfinish_last_unit(run)
        if planted.endswith("tmp"):
            directory, _, name = trace.partition("/")
            trace = f"{directory}/.{name}.tmp"
        planted = trace
    if planted == "results.jsonl":
        outside.write_bytes((run / "results.jsonl").read_bytes() + b'{"torn')
        (run / "results.jsonl").unlink()
    before = outside.read_bytes()
    (run / planted).unlink(missing_ok=True)
    (run / planted).symlink_to(outside)
    capsys.readouterr()
    assert main(["run", str(pack), "-o", str(run), "--resume", "--progress", "plain"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"wt: error: {run / planted}: is a symbolic link, not a regular file: refusing to write "
        "through it"
    )
    assert outside.read_bytes() == before
    assert (run / planted).is_symlink()


def test_resume_never_writes_into_a_planted_traces_link(
    finished_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`traces/` replaced by a link to a directory elsewhere: exit 2 naming it, nothing written
    there."""
    pack, run = finished_run
    _unfinish_last_unit(run)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "traces").rename(tmp_path / "old-traces")
    (run / "traces").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["run", str(pack), "-o", str(run), "--resume", "--progress", "plain"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"wt: error: {run / 'traces'}: is a symbolic link, not a directory: refusing to write "
        "through it"
    )
    assert list(elsewhere.iterdir()) == []


def test_score_never_writes_into_a_planted_rescored_link(
    finished_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`RUN_DIR/rescored` (the default output) planted as a link: exit 2 naming it, nothing
    written where it points (before: the whole re-scored run went there)."""
    _, run = finished_run
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "rescored").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["score", str(run)]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {run / 'rescored'}: is a symbolic link, not a directory: refusing to write "
        "through it\n"
    )
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    "planted", ["summary.json", ".summary.json.tmp", "junit.xml", ".report.html.tmp", "unit-trace"]
)
def test_score_never_writes_through_a_link_planted_in_its_output(
    finished_run: tuple[Path, Path],
    outside: Path,
    capsys: pytest.CaptureFixture[str],
    planted: str,
) -> None:
    """A link planted in `RUN_DIR/rescored/`: exit 2 naming it, the file outside unchanged."""
    _, run = finished_run
    out = run / "rescored"
    (out / "traces").mkdir(parents=True)
    if planted == "unit-trace":
        first = json.loads((run / "results.jsonl").read_bytes().splitlines()[0])["unit_id"]
        planted = f"traces/{trace_filename(first)}"
    (out / planted).symlink_to(outside)
    capsys.readouterr()
    assert main(["score", str(run)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"wt: error: {out / planted}: is a symbolic link, not a regular file: refusing to write "
        "through it"
    )
    assert outside.read_bytes() == OUTSIDE


def test_score_refuses_a_results_link_planted_in_its_output(
    finished_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rescored/results.jsonl` as a link to a file not there yet: exit 2 naming it, and the
    file is not created through it."""
    _, run = finished_run
    (run / "rescored").mkdir()
    (run / "rescored" / "results.jsonl").symlink_to(tmp_path / "created.jsonl")
    capsys.readouterr()
    assert main(["score", str(run)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"wt: error: {run / 'rescored' / 'results.jsonl'}: is a symbolic link, not a regular "
        "file: a run directory's files are its own"
    )
    assert not (tmp_path / "created.jsonl").exists()


def test_a_parallel_resume_never_sends_workers_through_a_planted_shards_link(
    finished_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`shards/` planted as a link: `wt run -j 2 --resume` exits 2 naming it before any worker
    starts, and nothing is written where it points."""
    pack, run = finished_run
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "shards").symlink_to(elsewhere)
    capsys.readouterr()
    assert (
        main(["run", str(pack), "-o", str(run), "-j", "2", "--resume", "--progress", "plain"]) == 2
    )
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"wt: error: {run / 'shards'}: is a symbolic link, not a directory: refusing to write "
        "through it"
    )
    assert list(elsewhere.iterdir()) == []
