"""Options of the commands that listen for agents over HTTP (`wt serve`, `wt record`): which
names and pages they answer besides their bind address's own (`trusted_hosts`)."""

from __future__ import annotations

import argparse

from ..errors import ConfigError
from ..trusted_hosts import AllowedNames

__all__ = ["add_allow_options"]


def add_allow_options(parser: argparse.ArgumentParser) -> None:
    """`--allow-host` and `--allow-origin`, repeatable, each value checked as it is parsed."""
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_allow_host,
        metavar="HOST[:PORT]",
        help="also answer requests whose Host is HOST (with the bound port) or HOST:PORT: a "
        "server reached under another name or port (ssh -L, kubectl port-forward, a published "
        "container port, a compose service name). Repeatable; it adds to the bind address's "
        "own names and never turns the check off (a wildcard is refused)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        type=_allow_origin,
        metavar="ORIGIN",
        help="also answer requests sent by the web page of ORIGIN (http://HOST[:PORT] or "
        "https://HOST[:PORT]); without it, an Origin other than the server's own gets 403. "
        "Repeatable; a wildcard or null is refused",
    )


def _allow_host(text: str) -> str:
    try:
        AllowedNames.parse([text], host_option="--allow-host")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return text


def _allow_origin(text: str) -> str:
    try:
        AllowedNames.parse(origins=[text], origin_option="--allow-origin")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return text
