"""windtunnel-bench's import names, where its code imports them (`windtunnel.api.importer`).

`write_imported_scenario` is our `wt import` of a typed envelope: it writes what `wt import`
writes (the envelope, the fixture universe, `scenario.toml` holding the scenario and its scorer
stub, and `IMPORTED.md`) and answers with the original's `ImportResult`. Where ours differ: there
is no separate `scorer.py` (`scorer_path` is the pack TOML, where the stub is), and the result
also names the envelope it wrote (`envelope_path`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..importing.contract_a import envelope_from_value
from ..importing.importer import ENVELOPE_FILE, PACK_FILE, write_import
from ..importing.interchange_read import STUB_SCHEMA
from ..importing.review_note import REVIEW_FILE
from .interchange import InterchangeTrace, ToolCallPart, as_document

__all__ = ["STUB_INPUT_SCHEMA", "ImportResult", "write_imported_scenario"]

STUB_INPUT_SCHEMA: dict[str, Any] = dict(STUB_SCHEMA)

_FLAGGED = ("stub", "inferred")


@dataclass(frozen=True)
class ImportResult:
    """What `write_imported_scenario` wrote, and from which evidence."""

    out_dir: Path
    scenario_path: Path
    universe_path: Path
    scorer_path: Path
    imported_path: Path
    evidence_source: str
    stubbed_tool_schemas: list[str]
    recordings: int
    envelope_path: Path | None = None


def _slug(value: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_").lower()
    return f"imported_{slug}" if slug[:1].isdigit() else slug


def _tool_order(envelope: InterchangeTrace) -> list[str]:
    """Tool names in the order the original lists stubbed ones: the definitions, then the tools
    the evidence calls."""
    names = [tool.name for tool in envelope.tool_definitions or []]
    if envelope.witnessed_calls is not None:
        names += [call.tool_name for call in envelope.witnessed_calls]
    else:
        names += [
            part.name
            for message in envelope.messages
            for part in message.parts
            if isinstance(part, ToolCallPart)
        ]
    return list(dict.fromkeys(names))


def write_imported_scenario(
    envelope: InterchangeTrace,
    out_dir: str | os.PathLike[str],
    *,
    scenario_name: str | None = None,
) -> ImportResult:
    """Import `envelope` into `out_dir` (created if missing; the files it writes are replaced,
    as the original does: the caller decides whether a non-empty directory may be used).
    The scenario is named `scenario_name`, else after the directory, else `source.ref`."""
    out = Path(out_dir)
    name = scenario_name or _slug(out.name) or _slug(envelope.source_ref or "") or "imported"
    ours = envelope_from_value(as_document(envelope), file=os.fspath(out / ENVELOPE_FILE))
    output = write_import(ours, out, name=name, force=True)
    universe_file = next(iter(output.plan.files.values()), None)
    flagged = {
        tool.name
        for upstream in ours.upstreams
        for tool in upstream.tools
        if tool.schema_source in _FLAGGED
    }
    return ImportResult(
        out_dir=out,
        scenario_path=out / PACK_FILE,
        universe_path=out / (universe_file or ""),
        scorer_path=out / PACK_FILE,
        imported_path=out / REVIEW_FILE,
        evidence_source=(
            "witnessed_calls" if envelope.witnessed_calls is not None else "reconstructed"
        ),
        stubbed_tool_schemas=[n for n in _tool_order(envelope) if n in flagged],
        recordings=sum(len(u.recordings) for u in output.plan.universes.values()),
        envelope_path=out / ENVELOPE_FILE,
    )
