"""Defaults the recording proxy and `wt record`'s options share (light: parsing the options
loads no proxy)."""

from __future__ import annotations

__all__ = ["DEFAULT_TIMEOUT_S"]

DEFAULT_TIMEOUT_S = 60.0
"""The longest wait for an upstream's answer, in seconds."""
