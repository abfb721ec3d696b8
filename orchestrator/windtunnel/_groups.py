"""Trio wraps errors raised inside a nursery in exception groups; at our API boundaries a lone
error is re-raised as itself, so callers can `except ConfigError` as around any other code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["unwrap_single_error"]


@contextmanager
def unwrap_single_error() -> Iterator[None]:
    """Re-raise a group holding exactly one exception (recursively) as that exception."""
    try:
        yield
    except BaseExceptionGroup as group:
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if inner is group:
            raise
        raise inner from None
