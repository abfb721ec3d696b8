"""Options of the commands that write what an upstream answered (`wt record`, `wt verify
--update`, `wt serve --record-mode`): the redaction rules, read by `record.redact`."""

from __future__ import annotations

import argparse

__all__ = ["add_redaction_options"]


def add_redaction_options(parser: argparse.ArgumentParser, *, what: str) -> None:
    """`--redact RULE` (repeatable) and `--redact-rules FILE`; `what` says what they apply to."""
    parser.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="RULE",
        help=f"key:NAME, path:$.args.x / $.result.y, or regex:PATTERN (repeatable): {what}",
    )
    parser.add_argument("--redact-rules", metavar="FILE", help="TOML: keys, paths, patterns lists")
