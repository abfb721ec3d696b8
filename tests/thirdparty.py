"""Third-party venvs (`.venvs/NAME`, built by `scripts/setup_venv` from tests/requirements/NAME.txt).

Tests that drive a third-party library whose pins clash with ours run it in its own venv, as a
subprocess. Without the venv such a test skips, unless WT_REQUIRE_THIRDPARTY is set (scripts/test
sets it), in which case it fails: CI never passes by skipping the real thing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["ROOT", "thirdparty_python"]


def thirdparty_python(name: str) -> Path:
    """The interpreter of `.venvs/NAME`; skip (or fail, under WT_REQUIRE_THIRDPARTY) without it."""
    python = ROOT / ".venvs" / name / "bin" / "python"
    if python.exists():
        return python
    message = f".venvs/{name} is missing: run scripts/setup_venv {name}"
    if os.environ.get("WT_REQUIRE_THIRDPARTY"):
        pytest.fail(message)
    pytest.skip(message)
