"""Shared test helpers: universes written to tmp files, deadlines for async tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

pytest_plugins = ["pytester"]

UniverseFactory = Callable[..., Path]


def universe_doc(
    tools: list[dict[str, Any]],
    recordings: list[dict[str, Any]] | None = None,
    matching: dict[str, Any] | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {"windtunnel_universe": 1, "tools": tools, "recordings": recordings or []}
    if matching is not None:
        doc["matching"] = matching
    return doc


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Tests that run the CLI in process configure structlog; undo it after each test."""
    yield
    structlog.reset_defaults()


@pytest.fixture
def write_universe_file(tmp_path: Path) -> UniverseFactory:
    """Write a universe document (dict or raw text) to a fresh file and return its path."""
    counter = iter(range(1_000_000))

    def write(doc: dict[str, Any] | str | bytes, name: str | None = None) -> Path:
        path = tmp_path / (name or f"u{next(counter)}.universe.json")
        if isinstance(doc, bytes):
            path.write_bytes(doc)
        elif isinstance(doc, str):
            path.write_text(doc)
        else:
            path.write_text(json.dumps(doc))
        return path

    return write


# Files whose tests start Ray clusters: under pytest-xdist (`scripts/test` runs the suite on
# several workers) they run on one worker, one after another, as Ray's local clusters on one host
# share its session directory (/tmp/ray) and default ports.
RAY_FILES = frozenset(
    {"test_ray.py", "test_ray_cluster.py", "test_ray_jobs.py", "test_ray_ship.py"}
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.path.name in RAY_FILES:
            item.add_marker(pytest.mark.xdist_group("ray"))
