"""The lowest MCP SDK of the supported range passes the byte-compatibility tests too.

pyproject.toml allows a range of `mcp` versions; `.venv` gets the newest, and this test runs the
other tests of this folder under the lowest (`.venvs/sdk-lowest`, built by scripts/setup_venv):
the fast paths' bytes compared with the SDK's, both eras, both transports, the official clients.

Left out are only the files whose outcome cannot depend on the SDK's version (`SDK_FREE`): no
function of the SDK runs while they run, so under the lowest SDK they execute the very same code
(the packages both venvs hold are the same versions; the SDK, `mcp` and `mcp-types`, is what
differs). They drive our HTTP layer below the SDK (`_fast_path_head`, `_fast_path_h11`,
`_http_worker`, hypercorn's config) with their own ASGI apps, start no `wt` process and build no
SDK server or client. Checked once by running them under a profiler that recorded every call into
the SDK's files (none in their 96 tests), and kept so by `test_the_files_left_out_reach_no_sdk_code`
(what they import, and what that imports in turn). A new file here runs under both SDKs unless it
is added to `SDK_FREE` on the same evidence.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.thirdparty import ROOT, thirdparty_python

HERE = Path(__file__).resolve().parent
# Files of this folder that call no SDK function (see the module docstring): the same code runs
# under every SDK of the range, so once, in `.venv`, is enough.
SDK_FREE = ("test_http_head.py", "test_http_worker.py")
# What those files may import of ours: modules below the SDK, and of `_http_serving` (which
# imports the SDK's body-limit middleware to serve apps) only its hypercorn config and socket
# binding.
SDK_FREE_MODULES = {
    "windtunnel.mcp._fast_path_head": None,
    "windtunnel.mcp._fast_path_h11": None,
    "windtunnel.mcp._http_worker": None,
    "windtunnel.mcp._http_serving": {"worker_config", "bind_sockets"},
}


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """Every (module, name) the file imports, `from windtunnel.mcp import X` as module `...X`."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in SDK_FREE_MODULES:
                    found.append((submodule, None))
                else:
                    found.append((node.module, alias.name))
    return found


def _first_party_imports(module: str) -> set[str]:
    """The `windtunnel` modules `module` imports (relative imports resolved), and whether it
    imports the SDK: as `"mcp"` in the set."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    package = module if spec.origin.endswith("__init__.py") else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(Path(spec.origin).read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(part for part in (base, node.module or "") if part)
            names = [target] + [f"{target}.{alias.name}" for alias in node.names]
        for name in names:
            if name.split(".")[0] in {"mcp", "mcp_types"}:
                found.add("mcp")
            elif name.startswith("windtunnel") and _is_module(name):
                found.add(name)
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # `name` is a name inside a module, not a module
        return False


def test_the_files_left_out_reach_no_sdk_code() -> None:
    """The files run under one SDK only import nothing that drives the SDK: no `mcp`, no test
    helper (they start servers and clients), no subprocess, and of ours only `SDK_FREE_MODULES`."""
    for name in SDK_FREE:
        for module, imported in _imports(HERE / name):
            top = module.split(".")[0]
            assert top not in {"mcp", "mcp_types", "tests", "subprocess"}, (name, module)
            if top == "windtunnel":
                assert module in SDK_FREE_MODULES, (name, module)
                allowed = SDK_FREE_MODULES[module]
                assert allowed is None or imported in allowed, (name, module, imported)
    # ... and the modules they may import reach the SDK through no import of their own.
    seen: set[str] = set()
    todo = [module for module, names in SDK_FREE_MODULES.items() if names is None]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        reached = _first_party_imports(module)
        assert "mcp" not in reached, module
        # The packages' own __init__ import the SDK (it is loaded, not called): not followed.
        todo += [name for name in reached if name not in {"windtunnel", "windtunnel.mcp"}]


def _lowest_in_pyproject() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [spec] = [d for d in pyproject["project"]["dependencies"] if d.startswith("mcp")]
    return spec.split(">=")[1].split(",")[0]


# The folder runs in one child process: the deadline is the child's own (1200 s below),
# not pytest-timeout's per-test default, which the folder outgrows on a loaded machine.
@pytest.mark.timeout(1260)
def test_the_lowest_sdk_passes_the_byte_compatibility_tests() -> None:
    python = thirdparty_python("sdk-lowest")
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert version == _lowest_in_pyproject()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(HERE),
            "--ignore",
            str(Path(__file__).resolve()),
            *(f"--ignore={HERE / name}" for name in SDK_FREE),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " failed" not in summary and " error" not in summary, summary
