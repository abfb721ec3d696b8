"""Lazy re-exports for package `__init__`s (PEP 562): a name is imported when first used.

A package that re-exports its modules' names would otherwise import all of them, and with them the
MCP SDK, hypercorn and Trio, whenever any one of its modules is imported: `wt plan` reads a pack
through `windtunnel.runner.pack_config` and must not load the serving stack to do so. The package
lists its names under `if TYPE_CHECKING:` for type checkers and in `lazy_exports` for the runtime;
`tests/test_lazy.py` holds the two lists equal.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the package whose globals are `namespace`; `exports` maps
    each of its modules (relative, e.g. `.scenario`) to the names the package re-exports from it."""
    package = namespace["__name__"]
    where = {name: module for module, names in exports.items() for name in names}
    namespace["_lazy_names"] = where  # for tests/test_lazy.py

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # the next lookup is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
