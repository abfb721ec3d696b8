"""What every framework client reads and writes (standard library only: it runs in each
framework's own venv).

The test writes a spec file: `servers`, an `mcpServers` mapping (name -> `{"url": ...}` over HTTP
or `{"command": ..., "args": [...]}` over stdio), and `config_path`, the same mapping saved as the
`mcpServers` JSON file that `wt serve` prints and `wt run` hands to command agents. The client
prints one JSON object: what the framework offered and what its model was given.
"""

from __future__ import annotations

import json
import sys
from typing import Any

HIT = {"query": "Bluewing Logistics"}
"""Arguments a recording of `client_lookup` answers (crm universe)."""
MISS = {"query": "Nobody Inc"}
"""Arguments no recording answers: a `fail_call` miss."""
CHARGE = {"charge_id": "ch_881"}
"""Arguments a recording of `charge_lookup` answers (billing universe)."""
TICKETS = {"account_id": "ACC-1042"}
"""`list_tickets` is a sequence-mode tool: two recordings, one per call, in order."""


def read_spec() -> dict[str, Any]:
    """The spec, with the `mcpServers` file's content under `config`."""
    with open(sys.argv[1], encoding="utf-8") as file:
        spec: dict[str, Any] = json.load(file)
    with open(spec["config_path"], encoding="utf-8") as file:
        spec["config"] = json.load(file)
    return spec


def report(**fields: Any) -> None:
    """The client's findings, as one JSON object on stdout."""
    print(json.dumps(fields, sort_keys=True))
