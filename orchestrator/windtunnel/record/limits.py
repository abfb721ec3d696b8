"""Defaults the recording proxy and `wt record`'s options share (light: parsing the options
loads no proxy)."""

from __future__ import annotations

__all__ = ["DEFAULT_TIMEOUT_S"]

DEFAULT_TIMEOUT_S = 60.0
"""The longest an upstream's whole answer to a request may take, in seconds (a deadline: an event
stream kept alive with comments does not extend it)."""
