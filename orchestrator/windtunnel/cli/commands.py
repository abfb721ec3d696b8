"""The list of `wt` subcommands; each module registers its own parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import import_command, universe_commands

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

REGISTRY: list[Register] = [
    universe_commands.register_validate,
    universe_commands.register_explain,
    import_command.register_import,
]
