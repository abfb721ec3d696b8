"""The list of `wt` subcommands; each module registers its own parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import (
    diff_command,
    import_command,
    merge_command,
    plan_command,
    record_command,
    run_command,
    score_command,
    serve_command,
    universe_commands,
    watch_command,
)

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

REGISTRY: list[Register] = [
    universe_commands.register_validate,
    universe_commands.register_explain,
    serve_command.register_serve,
    watch_command.register_watch,
    run_command.register_run,
    import_command.register_import,
    plan_command.register_plan,
    merge_command.register_merge,
    record_command.register_record,
    diff_command.register_diff,
    score_command.register_score,
]
