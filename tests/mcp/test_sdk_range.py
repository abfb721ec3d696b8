"""The lowest MCP SDK of the supported range passes the byte-compatibility tests too.

pyproject.toml allows a range of `mcp` versions; `.venv` gets the newest, and this test runs every
other test of this folder under the lowest (`.venvs/sdk-lowest`, built by scripts/setup_venv):
the fast paths' bytes compared with the SDK's, both eras, both transports, the official clients.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.thirdparty import ROOT, thirdparty_python

HERE = Path(__file__).resolve().parent


def _lowest_in_pyproject() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [spec] = [d for d in pyproject["project"]["dependencies"] if d.startswith("mcp")]
    return spec.split(">=")[1].split(",")[0]


# The whole folder runs in one child process: the deadline is the child's own (1200 s below),
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
