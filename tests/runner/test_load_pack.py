"""`load_pack`: a TOML path or the user's own `module:attribute`."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from windtunnel.errors import ConfigError
from windtunnel.runner.pack_config import load_pack

MODULE = """
from windtunnel.runner.scenario import Scenario, ScenarioPack
from windtunnel.runner.scoring import no_divergence

pack = ScenarioPack("py-pack", [Scenario("s", "task", policies=[no_divergence()])])


def make_pack():
    return ScenarioPack("made", [Scenario("s", "task")])


value = {"not": "a pack"}
"""


@pytest.fixture
def module_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> str:
    """A module named after the test on sys.path; returns its name."""
    name = "wt_pack_" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return name


def test_module_attribute(module_dir: str) -> None:
    """`module:attr` naming a ScenarioPack returns it."""
    pack = load_pack(f"{module_dir}:pack")
    assert pack.name == "py-pack"
    assert pack.scenarios[0].policies[0].name == "no_divergence"


def test_module_factory(module_dir: str) -> None:
    """`module:attr` naming a zero-argument callable returns what it builds."""
    assert load_pack(f"{module_dir}:make_pack").name == "made"


def test_python_file_attribute(module_dir: str) -> None:
    """`path/to/file.py:attr` loads the file without it being importable by name."""
    assert load_pack(f"{module_dir}.py:pack").name == "py-pack"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{m}:nope", "{m}:nope: module '{m}' has no attribute 'nope'"),
        ("{m}:value", "{m}:value: is a dict, expected a ScenarioPack"),
        ("wt_no_such_module:pack", "wt_no_such_module:pack: no module named 'wt_no_such_module'"),
        ("missing.py:pack", "missing.py: no such file"),
        (
            "nonsense",
            "nonsense: expected a .toml pack file or module:attribute (e.g. packs.billing:pack)",
        ),
        ("{m}:", "{m}:: expected a .toml pack file or module:attribute (e.g. packs.billing:pack)"),
    ],
)
def test_bad_specs(module_dir: str, spec: str, message: str) -> None:
    """A spec that names no pack is one ConfigError line."""
    with pytest.raises(ConfigError) as info:
        load_pack(spec.format(m=module_dir))
    assert str(info.value) == message.format(m=module_dir)


def test_import_errors_inside_user_code_propagate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing dependency of the user's module is their traceback, not 'no module named'."""
    (tmp_path / "wt_pack_broken.py").write_text("import wt_dependency_that_is_missing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="wt_dependency_that_is_missing"):
        load_pack("wt_pack_broken:pack")
