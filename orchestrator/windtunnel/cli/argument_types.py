"""argparse types shared by several commands, light so that parsing loads no command's work."""

from __future__ import annotations

import argparse
from typing import Literal

from ..errors import ConfigError
from ..scale.shards import ShardSpec, parse_shard

__all__ = ["Jobs", "jobs_argument", "positive_count", "shard_argument"]

Jobs = int | Literal["auto"]


def shard_argument(text: str) -> ShardSpec:
    """argparse type of `--shard`: `i/N`, 1-based."""
    try:
        return parse_shard(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def positive_count(text: str) -> int:
    """argparse type of a count that must be at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def jobs_argument(text: str) -> Jobs:
    """argparse type of `-j`: `auto` or a count of at least 1."""
    if text == "auto":
        return "auto"
    try:
        return positive_count(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected auto or a number >= 1, got {text!r}") from None
