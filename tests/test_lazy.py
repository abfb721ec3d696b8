"""Packages that re-export lazily: the names type checkers see are the names served at runtime."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "orchestrator" / "windtunnel"
LAZY = sorted(
    path.parent.name
    for path in PACKAGE.glob("*/__init__.py")
    if "lazy_exports(" in path.read_text()
)


def _type_checking_names(init: Path) -> dict[str, set[str]]:
    """Module -> names imported under `if TYPE_CHECKING:` in a package `__init__`."""
    found: dict[str, set[str]] = {}
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                # `.module`, or `..package.module` for a name kept where it was public before
                # its module moved to a sibling package (runner's RunWriter, now in rundir).
                assert isinstance(item, ast.ImportFrom) and item.level in (1, 2)
                where = "." * item.level + str(item.module)
                found.setdefault(where, set()).update(a.name for a in item.names)
    return found


def test_the_lazy_packages_are_the_ones_light_commands_pass_through() -> None:
    assert LAZY == ["actors", "agents", "importing", "record", "rundir", "runner", "scale"]


@pytest.mark.parametrize("name", LAZY)
def test_typed_names_runtime_names_and_all_agree(name: str) -> None:
    package = importlib.import_module(f"windtunnel.{name}")
    typed = _type_checking_names(PACKAGE / name / "__init__.py")
    runtime = package._lazy_names
    exported = {n for names in typed.values() for n in names}
    assert exported == set(package.__all__)
    assert set(dir(package)) >= exported
    for module, names in typed.items():
        for item in names:
            value = getattr(package, item)
            assert value is getattr(importlib.import_module(module, package.__name__), item)
    assert runtime == {item: module for module, names in typed.items() for item in names}


@pytest.mark.parametrize("name", LAZY)
def test_importing_a_package_imports_none_of_its_modules(name: str) -> None:
    code = (
        f"import sys, windtunnel.{name}\n"
        f"print(sorted(m for m in sys.modules if m.startswith('windtunnel.{name}.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", LAZY)
def test_no_export_is_named_like_a_module_of_its_package(name: str) -> None:
    # Importing `pkg.x` sets attribute `x` of `pkg` to the module, hiding an export named `x`.
    package = importlib.import_module(f"windtunnel.{name}")
    modules = {path.stem for path in (PACKAGE / name).glob("*.py")}
    assert set(package._lazy_names) & modules == set()


def test_an_unknown_name_is_an_attribute_error() -> None:
    runner = importlib.import_module("windtunnel.runner")
    with pytest.raises(
        AttributeError, match=r"module 'windtunnel\.runner' has no attribute 'Nope'"
    ):
        _ = runner.Nope
